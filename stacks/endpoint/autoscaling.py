"""Target tracking on the instances' own utilization: scale out quickly, scale in slowly.

Why utilization and not ConcurrentRequestsPerModel: AWS documents that metric for
invocations, not for bidirectional streams, and an open session that is not speaking
costs the server almost nothing (a connection slot), so counting sessions would buy
instances for idle agents. The container cannot publish its own metric either: it has
no network (EnableNetworkIsolation). SageMaker publishes CPUUtilization and
GPUUtilization per instance into /aws/sagemaker/Endpoints, and both rise only while
speech is being synthesized (G2P and encoding on the CPU, the model on the GPU).

Both metrics are sums over the instance's processors (4 vCPUs: 0-400 %), so a target
given per processor is multiplied by their count. With two policies, Application Auto
Scaling scales out when either asks and scales in only when both agree.
"""

from __future__ import annotations

from aws_cdk import Duration, aws_applicationautoscaling as appscaling
from constructs import Construct

METRICS_NAMESPACE = "/aws/sagemaker/Endpoints"
SCALE_OUT_COOLDOWN = Duration.minutes(2)
# Scale-in removes an instance together with the sessions it holds, and a GPU instance
# takes minutes to come back: target tracking already waits for 15 minutes of low load,
# and after each scale-in the next one waits this long again.
SCALE_IN_COOLDOWN = Duration.minutes(15)


def variant_autoscaling(
    scope: Construct,
    *,
    endpoint_name: str,
    variant: str,
    min_capacity: int,
    max_capacity: int,
    target_percent: int,
    vcpus: int,
    gpus: int,
) -> appscaling.CfnScalableTarget:
    # L1 on purpose: without RoleARN Application Auto Scaling uses its service-linked role
    # for SageMaker; the L2 would create an extra role with no permissions instead.
    target = appscaling.CfnScalableTarget(
        scope,
        "ScalableTarget",
        service_namespace="sagemaker",
        resource_id=f"endpoint/{endpoint_name}/variant/{variant}",
        scalable_dimension="sagemaker:variant:DesiredInstanceCount",
        min_capacity=min_capacity,
        max_capacity=max_capacity,
    )
    signals = {"CPUUtilization": vcpus, **({"GPUUtilization": gpus} if gpus else {})}
    for metric, processors in signals.items():
        _tracking_policy(
            scope, target, endpoint_name=endpoint_name, variant=variant,
            metric=metric, target_value=target_percent * processors,
        )
    return target


def _tracking_policy(
    scope: Construct,
    target: appscaling.CfnScalableTarget,
    *,
    endpoint_name: str,
    variant: str,
    metric: str,
    target_value: int,
) -> appscaling.CfnScalingPolicy:
    short = metric.removesuffix("Utilization")  # CPU, GPU
    return appscaling.CfnScalingPolicy(
        scope,
        f"{short}Tracking",
        policy_name=f"{endpoint_name}-{short.lower()}-utilization",
        policy_type="TargetTrackingScaling",
        scaling_target_id=target.ref,
        target_tracking_scaling_policy_configuration=appscaling.CfnScalingPolicy.TargetTrackingScalingPolicyConfigurationProperty(
            target_value=target_value,
            customized_metric_specification=appscaling.CfnScalingPolicy.CustomizedMetricSpecificationProperty(
                namespace=METRICS_NAMESPACE,
                metric_name=metric,
                dimensions=[
                    appscaling.CfnScalingPolicy.MetricDimensionProperty(name="EndpointName", value=endpoint_name),
                    appscaling.CfnScalingPolicy.MetricDimensionProperty(name="VariantName", value=variant),
                ],
                statistic="Average",
                unit="Percent",
            ),
            scale_out_cooldown=SCALE_OUT_COOLDOWN.to_seconds(),
            scale_in_cooldown=SCALE_IN_COOLDOWN.to_seconds(),
        ),
    )
