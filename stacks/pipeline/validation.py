"""The post-deploy gate: scripts/validate_endpoint.py against a stage's endpoint.

Runs in the pipeline's account. SageMaker endpoints take no resource policy, so the step
assumes the stage's validator role (stacks/foundation/validator_role.py: the invoker
policy, nothing else) and invokes with those credentials; the endpoint's name and region
come from the stage's outputs. Its JUnit XML lands in a CodeBuild report group; a failed
check fails the step, which stops the pipeline there: nothing is promoted.
"""

from __future__ import annotations

from aws_cdk import Duration, Fn, aws_codebuild as codebuild, aws_iam as iam, pipelines

from stacks.environments import StageEnv
from stacks.naming import validator_role_name
from stacks.stage import KokoroStage

REPORT_DIR = "reports"
REPORT_FILE = "validation.xml"
# The validator's own dependencies, at the pins of requirements.txt (no server, no CDK).
VALIDATOR_PACKAGES = "websockets|aws-sdk-sagemaker-runtime-http2|boto3"


def validator_role_arn(stage: StageEnv) -> str:
    return Fn.sub(f"arn:${{AWS::Partition}}:iam::{stage.account}:role/{validator_role_name(stage.name_prefix)}")


def validation_commands(max_pending: int) -> list[str]:
    return [
        # POSIX sh: the three credential fields become the SDK's environment credentials.
        'set -- $(aws sts assume-role --role-arn "$VALIDATOR_ROLE_ARN" --role-session-name validate-endpoint'
        ' --query "Credentials.[AccessKeyId,SecretAccessKey,SessionToken]" --output text)',
        'export AWS_ACCESS_KEY_ID="$1" AWS_SECRET_ACCESS_KEY="$2" AWS_SESSION_TOKEN="$3"',
        f"mkdir -p {REPORT_DIR}",
        '.venv/bin/python scripts/validate_endpoint.py --endpoint "$ENDPOINT_NAME" --region "$ENDPOINT_REGION"'
        f" --max-pending {max_pending} --no-progress --junit {REPORT_DIR}/{REPORT_FILE}",
    ]


def validation_step(
    stage: KokoroStage,
    env: StageEnv,
    *,
    source: pipelines.IFileSetProducer,
    report_group: codebuild.IReportGroup,
    build_image: codebuild.IBuildImage,
    max_pending: int,
) -> pipelines.CodeBuildStep:
    return pipelines.CodeBuildStep(
        f"Validate{env.construct_id}",
        input=source,
        build_environment=codebuild.BuildEnvironment(
            build_image=build_image, compute_type=codebuild.ComputeType.SMALL),
        timeout=Duration.minutes(30),
        install_commands=[
            "python3.12 -m venv .venv",
            f".venv/bin/pip install --quiet $(grep -E '^({VALIDATOR_PACKAGES})' requirements.txt)",
        ],
        commands=validation_commands(max_pending),
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
                "files": [REPORT_FILE], "base-directory": REPORT_DIR, "file-format": "JUNITXML",
            }},
        }),
    )
