"""Endpoint: image, SageMaker model/config/endpoint, autoscaling, alarms, outputs."""

from __future__ import annotations

from aws_cdk import Aws, CfnOutput, Stack, aws_iam as iam
from constructs import Construct

from stacks.config import DeploymentConfig
from stacks.endpoint.alarms import endpoint_alarms
from stacks.endpoint.autoscaling import variant_autoscaling
from stacks.endpoint.image import model_image
from stacks.endpoint.manifest_check import ImageManifestCheck
from stacks.endpoint.sagemaker_endpoint import GPU_INFERENCE_AMI, VARIANT, SageMakerEndpoint
from stacks.naming import model_bucket_name


class EndpointStack(Stack):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: DeploymentConfig,
        model_prefix: str,
        execution_role: iam.IRole,
        invoker_policy: iam.IManagedPolicy,
        **kwargs,
    ) -> None:
        super().__init__(scope, id, **kwargs)
        model_data_url = f"s3://{model_bucket_name(config.name_prefix)}/{model_prefix}"
        image = model_image(self, user=config.container_user, base_image=config.base_image)
        manifest = ImageManifestCheck(self, "ImageCheck", image=image)
        alarms = endpoint_alarms(
            self,
            endpoint_name=config.endpoint_name,
            variant=VARIANT,
            latency_ms=config.model_latency_alarm_ms,
            topic_arn=config.alarm_topic_arn,
        )
        endpoint = SageMakerEndpoint(
            self,
            "Serving",
            endpoint_name=config.endpoint_name,
            image_uri=image.image_uri,
            model_data_url=model_data_url,
            role=execution_role,
            instance_type=config.instance_type,
            instance_count=config.initial_instance_count,
            inference_ami=GPU_INFERENCE_AMI if config.is_gpu else None,
            environment={
                **config.server_settings,
                "WS_MAX_PENDING_RESPONSES": str(config.ws_max_pending_responses),
                # Never the server's auto choice: on a GPU type a host without a usable GPU must
                # fail /ping (with the reason) rather than serve ten times slower on the CPU.
                "ENGINE": config.engine,
                "DEVICE": config.device,
            },
            rollback_alarms=alarms.rollback_triggers,
        )
        # CreateModel refuses an image with an OCI manifest: check the manifest first. (The
        # role's image pull is granted in the foundation stack, well before this.)
        endpoint.model.node.add_dependency(manifest.resource)
        scaling = variant_autoscaling(
            self,
            endpoint_name=config.endpoint_name,
            variant=VARIANT,
            min_capacity=config.min_instance_count,
            max_capacity=config.max_instance_count,
            target_percent=config.target_utilization,
            vcpus=config.vcpus,
            gpus=1 if config.is_gpu else 0,
        )
        scaling.add_resource_dependency(endpoint.endpoint, "the variant exists once the endpoint does")

        # The pipeline's validation step reads these three (stacks/pipeline/validation.py).
        self.endpoint_name_output = CfnOutput(
            self, "EndpointName", value=config.endpoint_name,
            description="SageMaker endpoint to invoke (HTTP/2 bidirectional stream on port 8443)")
        self.region_output = CfnOutput(self, "EndpointRegion", value=Aws.REGION,
                                       description="Region of the endpoint")
        self.invoker_policy_output = CfnOutput(
            self, "InvokerPolicyArn", value=invoker_policy.managed_policy_arn,
            description="Attach to the roles or users that call the endpoint")
        CfnOutput(self, "ModelDataUrl", value=model_data_url,
                  description="Cached weights the model loads into /opt/ml/model")
