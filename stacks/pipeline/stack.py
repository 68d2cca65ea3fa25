"""The delivery pipeline (CDK Pipelines, self-mutating):

  source (CodeConnections) -> synth: the stack tests (snapshots, cdk-nag, cfn-lint, checkov),
  then cdk synth -> image assets, built once and published to every stage's account ->
  staging -> validation -> load stage -> manual approval (switchable) -> prod -> validation

Each stage is the same KokoroStage that `make deploy` deploys, with its own account,
region and name prefix. A failing step stops the run where it fails.
"""

from __future__ import annotations

from aws_cdk import Duration, Environment, RemovalPolicy, Stack, aws_codebuild as codebuild, pipelines
from constructs import Construct

from stacks.config import DeploymentConfig
from stacks.environments import StageEnv
from stacks.pipeline.config import PipelineConfig
from stacks.pipeline.checkov import skip_pipeline_checks
from stacks.pipeline.cli_versions import cdk_assets_cli, cdk_cli
from stacks.pipeline.nag import acknowledge_pipeline_findings
from stacks.pipeline.validation import load_step, validation_step
from stacks.stage import KokoroStage

# Amazon Linux 2023 standard 5.0: Python 3.12, Node 22, Docker with the buildx component.
BUILD_IMAGE = codebuild.LinuxBuildImage.AMAZON_LINUX_2_5
# The server image is several GB (PyTorch with CUDA): 8 vCPUs, 15 GB memory, 128 GB disk,
# privileged for the Docker daemon.
ASSET_COMPUTE = codebuild.ComputeType.LARGE
# The venv holds stacks/requirements.txt only: CDK_SETUP keeps make from installing the
# server's packages; node_modules/.installed installs the pinned aws-cdk CLI (npm ci).
SYNTH_COMMANDS = [
    "make test-stacks VENV=.venv CDK_SETUP=node_modules/.installed",
    "make synth-pipeline VENV=.venv CDK_SETUP=node_modules/.installed",
]


class PipelineStack(Stack):
    def __init__(self, scope: Construct, id: str, *, config: DeploymentConfig, settings: PipelineConfig) -> None:
        super().__init__(
            scope, id, stack_name=f"{config.name_prefix}-pipeline",
            env=Environment(account=settings.pipeline_account, region=settings.pipeline_region),
            description="Kokoro TTS: delivery pipeline (source, tests, assets, staging, approval, prod)",
        )
        source = pipelines.CodePipelineSource.connection(
            settings.repository, settings.branch, connection_arn=settings.connection_arn,
        )
        synth = pipelines.CodeBuildStep(
            "Synth",
            input=source,
            install_commands=[
                "python3.12 -m venv .venv",
                ".venv/bin/pip install --quiet -r stacks/requirements.txt",
            ],
            commands=SYNTH_COMMANDS,
            primary_output_directory="cdk.out",
            partial_build_spec=codebuild.BuildSpec.from_object(
                {"phases": {"install": {"runtime-versions": {"python": "3.12", "nodejs": "22"}}}}),
        )
        self.pipeline = pipelines.CodePipeline(
            self,
            "Pipeline",
            pipeline_name=f"{config.name_prefix}-delivery",
            synth=synth,
            self_mutation=True,
            # The generated steps' CLIs, at package.json's pins (not aws-cdk@2, cdk-assets@latest).
            cli_version=cdk_cli(),
            cdk_assets_cli_version=cdk_assets_cli(),
            # A KMS key on the artifacts: needed when a stage's account is not the pipeline's,
            # and kept for one account too, so every CodeBuild project encrypts with it.
            cross_account_keys=True,
            enable_key_rotation=True,
            code_build_defaults=pipelines.CodeBuildOptions(
                build_environment=codebuild.BuildEnvironment(build_image=BUILD_IMAGE)),
            asset_publishing_code_build_defaults=pipelines.CodeBuildOptions(
                build_environment=codebuild.BuildEnvironment(
                    build_image=BUILD_IMAGE, compute_type=ASSET_COMPUTE, privileged=True),
                timeout=Duration.hours(2),
            ),
        )
        self.report_group = self._report_group("ValidationReports", f"{config.name_prefix}-endpoint-validation")
        self.load_report_group = self._report_group("LoadReports", f"{config.name_prefix}-load-stage")
        pipeline_account = settings.pipeline_account
        for env, pre in ((settings.staging, []), (settings.prod, self._approval(settings))):
            stage = KokoroStage(
                self, env.construct_id,
                config=config.model_copy(update={"name_prefix": env.name_prefix}),
                env=Environment(account=env.account, region=env.region),
                validator_account=pipeline_account,
            )
            self.pipeline.add_stage(stage, pre=pre, post=self._checks(stage, env, source, config))
        self.pipeline.build_pipeline()
        acknowledge_pipeline_findings(self, self.pipeline.pipeline)
        skip_pipeline_checks(self, self.pipeline.pipeline)

    def _report_group(self, id: str, name: str) -> codebuild.ReportGroup:
        return codebuild.ReportGroup(self, id, report_group_name=name, type=codebuild.ReportGroupType.TEST,
                                     removal_policy=RemovalPolicy.DESTROY)

    def _checks(self, stage: KokoroStage, env: StageEnv, source, config: DeploymentConfig) -> list[pipelines.Step]:
        """The contract validation; on staging, then the load stage (never against prod)."""
        validate = validation_step(stage, env, config, source=source, report_group=self.report_group,
                                   build_image=BUILD_IMAGE)
        if env.name != "staging":
            return [validate]
        load = load_step(stage, env, config, source=source, report_group=self.load_report_group,
                         build_image=BUILD_IMAGE)
        load.add_step_dependency(validate)
        return [validate, load]

    @staticmethod
    def _approval(settings: PipelineConfig) -> list[pipelines.Step]:
        if not settings.manual_approval:
            return []
        return [pipelines.ManualApprovalStep(
            "PromoteToProd",
            comment="Staging passed scripts/validate_endpoint.py and the load stage within its budget (see the "
                    "validation and load-stage report groups, and LoadStaging's load.json and load.png). "
                    "Approve to deploy this commit to prod.",
        )]
