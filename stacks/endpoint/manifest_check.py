"""Before the model is created: is the pushed image one SageMaker accepts?

A Lambda-backed custom resource (manifest_handler/index.py) reads the image's manifest
media type from ECR and fails the deployment with the cause and the fix when it is an
OCI index or manifest, which SageMaker CreateModel rejects. It runs again whenever the
image tag (its content hash) changes.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import CustomResource, Duration
from aws_cdk import aws_ecr_assets as ecr_assets, aws_iam as iam
from constructs import Construct

from stacks.lambda_shared import handler_function, handler_log_group, write_own_logs

HANDLER_DIR = Path(__file__).with_name("manifest_handler")


class ImageManifestCheck(Construct):
    def __init__(self, scope: Construct, id: str, *, image: ecr_assets.DockerImageAsset) -> None:
        super().__init__(scope, id)
        log_group = handler_log_group(self)
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Read the endpoint image's manifest media type",
            inline_policies={"DescribeImage": iam.PolicyDocument(statements=[
                write_own_logs(log_group),
                iam.PolicyStatement(
                    sid="DescribeEndpointImage",
                    actions=["ecr:DescribeImages"],
                    resources=[image.repository.repository_arn],
                ),
            ])},
        )
        function = handler_function(self, HANDLER_DIR, role=role, log_group=log_group, memory_size=256,
                                    timeout=Duration.minutes(1),
                                    description="Refuse an image manifest SageMaker CreateModel would refuse")
        self.resource = CustomResource(
            self,
            "Manifest",
            service_token=function.function_arn,
            resource_type="Custom::ImageManifestCheck",
            service_timeout=Duration.minutes(5),
            # The URI the model pulls; its tag is the image's content hash.
            properties={"ImageUri": image.image_uri},
        )
