"""Model -> EndpointConfig -> Endpoint, with weights from the cached S3 prefix."""

from __future__ import annotations

from aws_cdk import aws_cloudwatch as cw, aws_iam as iam, aws_sagemaker as sm
from constructs import Construct


VARIANT = "AllTraffic"
MODEL_DIR = "/opt/ml/model"  # where SageMaker unpacks ModelDataSource; the server reads it
# Start-up = load weights onto the GPU + warm-up before /ping turns 200.
STARTUP_HEALTH_CHECK_TIMEOUT_S = 600
# ~330 MB from S3 in the same region; generous for a slow first instance.
MODEL_DATA_DOWNLOAD_TIMEOUT_S = 600
# NVIDIA driver 580 / CUDA 13.0: what the image's torch wheel (+cu130) needs. GPU
# instance types only; CPU types run on SageMaker's default host image.
GPU_INFERENCE_AMI = "al2023-ami-sagemaker-inference-gpu-4-1"
# Blue/green: keep the old fleet this long after the switch, rolling back on alarms.
BAKE_SECONDS = 600


class SageMakerEndpoint(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        endpoint_name: str,
        image_uri: str,
        model_data_url: str,
        role: iam.IRole,
        instance_type: str,
        instance_count: int,
        inference_ami: str | None,
        environment: dict[str, str],
        rollback_alarms: list[cw.Alarm],
    ) -> None:
        super().__init__(scope, id)
        self.model = sm.CfnModel(
            self,
            "Model",
            execution_role_arn=role.role_arn,
            # The container gets no network at all; weights come from /opt/ml/model.
            enable_network_isolation=True,
            primary_container=sm.CfnModel.ContainerDefinitionProperty(
                image=image_uri,
                mode="SingleModel",
                model_data_source=sm.CfnModel.ModelDataSourceProperty(
                    s3_data_source=sm.CfnModel.S3DataSourceProperty(
                        s3_uri=model_data_url,
                        s3_data_type="S3Prefix",
                        compression_type="None",
                    )
                ),
                environment={"MODEL_DIR": MODEL_DIR, "HF_HUB_OFFLINE": "1", **environment},
            ),
        )
        self.config = sm.CfnEndpointConfig(
            self,
            "Config",
            production_variants=[
                sm.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=VARIANT,
                    model_name=self.model.attr_model_name,
                    instance_type=instance_type,
                    initial_instance_count=instance_count,
                    initial_variant_weight=1.0,
                    container_startup_health_check_timeout_in_seconds=STARTUP_HEALTH_CHECK_TIMEOUT_S,
                    model_data_download_timeout_in_seconds=MODEL_DATA_DOWNLOAD_TIMEOUT_S,
                    inference_ami_version=inference_ami,
                )
            ],
        )
        self.endpoint = sm.CfnEndpoint(
            self,
            "Endpoint",
            endpoint_name=endpoint_name,
            endpoint_config_name=self.config.attr_endpoint_config_name,
            # An update keeps the instance count autoscaling chose (without this, every
            # deploy resets it to initialInstanceCount). The weight still comes from
            # the config: there is one variant, always at weight 1.
            retain_all_variant_properties=True,
            exclude_retained_variant_properties=[
                sm.CfnEndpoint.VariantPropertyProperty(variant_property_type="DesiredWeight")
            ],
            deployment_config=sm.CfnEndpoint.DeploymentConfigProperty(
                blue_green_update_policy=sm.CfnEndpoint.BlueGreenUpdatePolicyProperty(
                    traffic_routing_configuration=sm.CfnEndpoint.TrafficRoutingConfigProperty(
                        type="ALL_AT_ONCE", wait_interval_in_seconds=0
                    ),
                    termination_wait_in_seconds=BAKE_SECONDS,
                ),
                auto_rollback_configuration=sm.CfnEndpoint.AutoRollbackConfigProperty(
                    alarms=[sm.CfnEndpoint.AlarmProperty(alarm_name=a.alarm_name) for a in rollback_alarms]
                ),
            ),
        )
