"""The post-deploy gates: scripts/validate_endpoint.py against each stage's endpoint, then on
staging only scripts/load_stage.py.

Both run in the pipeline's account. SageMaker endpoints take no resource policy, so each
assumes the stage's validator role (stacks/foundation/validator_role.py: the invoker policy,
nothing else) itself, `--role-arn`: one command, whose credentials never leave its process
(no shell variable carries them from one buildspec command to the next). The endpoint's name
and region come from the stage's outputs; what the deploy asked for (device, user, queue
bound, load budget) from stacks/expectations.py. JUnit goes to a CodeBuild report group, the
JSON (and the load stage's plot) to the step's output artifact; a failed check or a missed
budget fails the step, which stops the pipeline there: nothing is promoted.
"""

from __future__ import annotations

import math

from aws_cdk import Duration, Fn, aws_codebuild as codebuild, aws_iam as iam, pipelines

from stacks.config import DeploymentConfig
from stacks.environments import StageEnv
from stacks.expectations import load_arguments, validator_arguments
from stacks.naming import validator_role_name
from stacks.stage import KokoroStage

REPORT_DIR = "reports"
REQUIREMENTS = "stacks/requirements-validate.txt"
TARGET = '--role-arn "$VALIDATOR_ROLE_ARN" --endpoint "$ENDPOINT_NAME" --region "$ENDPOINT_REGION"'
LOAD_RAMP_S = 60  # per level: sessions opening, the last turns finishing, the sessions closing
# 4 vCPUs, 7 GB: 50 sessions' frames are decoded here, and a starved client would be measured as TTFA.
LOAD_COMPUTE = codebuild.ComputeType.MEDIUM


def validator_role_arn(stage: StageEnv) -> str:
    return Fn.sub(f"arn:${{AWS::Partition}}:iam::{stage.account}:role/{validator_role_name(stage.name_prefix)}")


def validation_command(config: DeploymentConfig) -> str:
    return (f".venv/bin/python scripts/validate_endpoint.py {TARGET} {' '.join(validator_arguments(config))}"
            f" --no-progress --junit {REPORT_DIR}/validation.xml --json {REPORT_DIR}/validation.json")


def load_command(config: DeploymentConfig) -> str:
    return (f".venv/bin/python scripts/load_stage.py {TARGET} {' '.join(load_arguments(config))}"
            f" --junit {REPORT_DIR}/load.xml --json {REPORT_DIR}/load.json --plot {REPORT_DIR}/load.png")


def load_timeout(config: DeploymentConfig) -> Duration:
    budget = config.load_budget
    seconds = len(budget.levels) * (budget.seconds + LOAD_RAMP_S) + 600  # plus install and start
    return Duration.minutes(math.ceil(seconds / 60))


def _step(name: str, command: str, junit: str, env: StageEnv, stage: KokoroStage, *, source, report_group,
          build_image, timeout: Duration, compute: codebuild.ComputeType) -> pipelines.CodeBuildStep:
    return pipelines.CodeBuildStep(
        name,
        input=source,
        build_environment=codebuild.BuildEnvironment(build_image=build_image, compute_type=compute),
        timeout=timeout,
        install_commands=["python3.12 -m venv .venv",
                          f".venv/bin/pip install --quiet --no-cache-dir -r {REQUIREMENTS}"],
        commands=[command],
        primary_output_directory=REPORT_DIR,  # the JSON reports (and the plot): the step's output artifact
        env={"VALIDATOR_ROLE_ARN": validator_role_arn(env)},
        env_from_cfn_outputs={"ENDPOINT_NAME": stage.endpoint_name_output, "ENDPOINT_REGION": stage.region_output},
        role_policy_statements=[
            iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[validator_role_arn(env)]),
            iam.PolicyStatement(
                actions=["codebuild:CreateReport", "codebuild:UpdateReport", "codebuild:BatchPutTestCases"],
                resources=[report_group.report_group_arn],
            ),
        ],
        partial_build_spec=codebuild.BuildSpec.from_object({
            "phases": {"install": {"runtime-versions": {"python": "3.12"}}},
            "reports": {report_group.report_group_arn: {
                "files": [junit], "base-directory": REPORT_DIR, "file-format": "JUNITXML",
            }},
        }),
    )


def validation_step(stage: KokoroStage, env: StageEnv, config: DeploymentConfig, *, source, report_group,
                    build_image) -> pipelines.CodeBuildStep:
    return _step(f"Validate{env.construct_id}", validation_command(config), "validation.xml", env, stage,
                 source=source, report_group=report_group, build_image=build_image, timeout=Duration.minutes(30),
                 compute=codebuild.ComputeType.SMALL)


def load_step(stage: KokoroStage, env: StageEnv, config: DeploymentConfig, *, source, report_group,
              build_image) -> pipelines.CodeBuildStep:
    return _step(f"Load{env.construct_id}", load_command(config), "load.xml", env, stage,
                 source=source, report_group=report_group, build_image=build_image, timeout=load_timeout(config),
                 compute=LOAD_COMPUTE)
