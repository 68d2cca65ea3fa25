"""Target tracking on the variant's concurrency: scale out quickly, scale in slowly."""

from __future__ import annotations

from aws_cdk import Duration, aws_applicationautoscaling as appscaling
from constructs import Construct

SCALE_OUT_COOLDOWN = Duration.minutes(2)
# A GPU instance takes minutes to come back; don't give it away after a short lull.
SCALE_IN_COOLDOWN = Duration.minutes(15)
CONCURRENCY_METRIC = "SageMakerVariantConcurrentRequestsPerModelHighResolution"


def variant_autoscaling(
    scope: Construct,
    *,
    endpoint_name: str,
    variant: str,
    min_capacity: int,
    max_capacity: int,
    target_concurrency: int,
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
    appscaling.CfnScalingPolicy(
        scope,
        "ConcurrencyTracking",
        policy_name=f"{endpoint_name}-concurrency",
        policy_type="TargetTrackingScaling",
        scaling_target_id=target.ref,
        target_tracking_scaling_policy_configuration=appscaling.CfnScalingPolicy.TargetTrackingScalingPolicyConfigurationProperty(
            target_value=target_concurrency,
            predefined_metric_specification=appscaling.CfnScalingPolicy.PredefinedMetricSpecificationProperty(
                predefined_metric_type=CONCURRENCY_METRIC
            ),
            scale_out_cooldown=SCALE_OUT_COOLDOWN.to_seconds(),
            scale_in_cooldown=SCALE_IN_COOLDOWN.to_seconds(),
        ),
    )
    return target
