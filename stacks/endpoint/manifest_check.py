"""Before the model is created: is the pushed image one SageMaker accepts?

A Lambda-backed custom resource (manifest_handler/index.py) reads the image's manifest
media type from ECR and fails the deployment with the cause and the fix when it is an
OCI index or manifest, which SageMaker CreateModel rejects. It runs again whenever the
image tag (its content hash) changes.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import CustomResource, Duration, RemovalPolicy
from aws_cdk import aws_ecr_assets as ecr_assets, aws_iam as iam, aws_lambda as lambda_, aws_logs as logs
from constructs import Construct

from stacks.lambda_shared import handler_code

HANDLER_DIR = Path(__file__).with_name("manifest_handler")


class ImageManifestCheck(Construct):
    def __init__(self, scope: Construct, id: str, *, image: ecr_assets.DockerImageAsset) -> None:
        super().__init__(scope, id)
        log_group = logs.LogGroup(
            self, "Logs", retention=logs.RetentionDays.THREE_MONTHS, removal_policy=RemovalPolicy.DESTROY
        )
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Read the endpoint image's manifest media type",
            inline_policies={"DescribeImage": iam.PolicyDocument(statements=[
                iam.PolicyStatement(
                    sid="WriteOwnLogs",
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[log_group.log_group_arn],
                ),
                iam.PolicyStatement(
                    sid="DescribeEndpointImage",
                    actions=["ecr:DescribeImages"],
                    resources=[image.repository.repository_arn],
                ),
            ])},
        )
        function = lambda_.Function(
            self,
            "Handler",
            runtime=lambda_.Runtime.PYTHON_3_14,
            architecture=lambda_.Architecture.ARM_64,
            handler="index.handler",
            code=handler_code(HANDLER_DIR),
            memory_size=256,
            timeout=Duration.minutes(1),
            role=role,
            log_group=log_group,
            description="Refuse an image manifest SageMaker CreateModel would refuse",
        )
        self.resource = CustomResource(
            self,
            "Manifest",
            service_token=function.function_arn,
            resource_type="Custom::ImageManifestCheck",
            service_timeout=Duration.minutes(5),
            # The URI the model pulls; its tag is the image's content hash.
            properties={"ImageUri": image.image_uri},
        )
