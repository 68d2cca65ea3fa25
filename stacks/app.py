"""Build the CDK app: the product's stage (default) or the delivery pipeline (`-c pipeline=true`).

Shared by app.py and the tests. cdk-nag's AwsSolutions checks run on every synth of either.
"""

from __future__ import annotations

from aws_cdk import App, Environment, Validations
from cdk_nag import AwsSolutionsChecks

from stacks.config import DeploymentConfig
from stacks.environments import stage_env
from stacks.pipeline.config import PipelineConfig, pipeline_enabled
from stacks.stage import KokoroStage

# The construct id of the stage `make deploy` deploys when no `stage` is chosen.
DIRECT_STAGE = "Kokoro"


def build(app: App):
    """The top-level construct built: a KokoroStage, or the PipelineStack."""
    get = app.node.try_get_context
    config = DeploymentConfig.from_context(get)
    if pipeline_enabled(get):
        from stacks.pipeline.stack import PipelineStack  # only the pipeline path needs it

        built = PipelineStack(app, "Pipeline", config=config, settings=PipelineConfig.from_context(get))
    elif get("stage"):
        stage = stage_env(get, str(get("stage")))
        built = KokoroStage(
            app, stage.construct_id, config=config.model_copy(update={"name_prefix": stage.name_prefix}),
            env=Environment(account=stage.account, region=stage.region),
        )
    else:
        # The account and region of the deploying credentials, as before stages existed.
        built = KokoroStage(app, DIRECT_STAGE, config=config)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return built
