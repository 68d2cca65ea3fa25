"""Foundation: KMS key, model bucket (+ access logs), execution role, invoker policy
(and, in a pipeline stage, the validator role)."""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack, aws_logs as logs
from constructs import Construct

from stacks.config import DeploymentConfig
from stacks.foundation.execution_role import execution_role
from stacks.foundation.invoker_policy import invoker_policy
from stacks.foundation.model_bucket import ModelBucket
from stacks.foundation.model_key import model_key
from stacks.foundation.validator_role import validator_role
from stacks.lint_suppressions import skip_checkov
from stacks.naming import image_repository_arn, rollback_alarm_names

ENDPOINT_LOGS_REASON = (
    "CloudWatch Logs encrypts every log group at rest; SageMaker writes the container's output here (start-up "
    "phases, lifecycle lines, errors with their tracebacks; no audio), and a customer-managed key would need a "
    "key policy for the logs service, whose mistake would stop the endpoint's logging when it is needed most."
)


class FoundationStack(Stack):
    def __init__(
        self, scope: Construct, id: str, *, config: DeploymentConfig,
        validator_account: str | None = None, **kwargs,
    ) -> None:
        super().__init__(scope, id, **kwargs)
        self.key = model_key(self, config.name_prefix)
        buckets = ModelBucket(self, "Storage", key=self.key, name_prefix=config.name_prefix)
        self.bucket = buckets.bucket
        # Created here, before the endpoint exists, so the role can be scoped to it and
        # SageMaker needs no logs:CreateLogGroup. SageMaker's fixed naming scheme.
        self.log_group = logs.LogGroup(
            self,
            "EndpointLogs",
            log_group_name=f"/aws/sagemaker/Endpoints/{config.endpoint_name}",
            retention=logs.RetentionDays.THREE_MONTHS,
            # Named group: retaining it would block re-creating the stack under the same name.
            removal_policy=RemovalPolicy.DESTROY,
        )
        skip_checkov(self.log_group, "CKV_AWS_158", ENDPOINT_LOGS_REASON)
        self.execution_role = execution_role(
            self,
            bucket=self.bucket,
            key=self.key,
            model_prefix=config.model_id,
            log_group=self.log_group,
            image_repository_arn=image_repository_arn(self),
            rollback_alarm_names=rollback_alarm_names(config.endpoint_name),
        )
        self.invoker_policy = invoker_policy(self, endpoint_name=config.endpoint_name)
        # Only in a delivery pipeline's stages: the role its validation step assumes.
        self.validator_role = validator_role(
            self, name_prefix=config.name_prefix, trusted_account=validator_account,
            invoker_policy=self.invoker_policy,
        ) if validator_account else None
