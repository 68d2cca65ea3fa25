"""CloudWatch alarms on the variant: 5xx, model errors (non-2xx, timeouts), model latency."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, aws_cloudwatch as cw, aws_cloudwatch_actions as cw_actions, aws_sns as sns
from constructs import Construct

from stacks.naming import rollback_alarm_names

ERRORS_PER_5_MIN = 5
LATENCY_PERIODS = 3  # 15 minutes of slow p90 before paging, not one slow burst


@dataclass(frozen=True)
class EndpointAlarms:
    server_errors: cw.Alarm
    model_errors: cw.Alarm
    latency: cw.Alarm

    @property
    def rollback_triggers(self) -> list[cw.Alarm]:
        """Alarms that roll a deployment back while it bakes (latency is too slow a signal)."""
        return [self.server_errors, self.model_errors]


def endpoint_alarms(
    scope: Construct, *, endpoint_name: str, variant: str, latency_ms: int, topic_arn: str | None
) -> EndpointAlarms:
    def metric(name: str, statistic: str) -> cw.Metric:
        return cw.Metric(
            namespace="AWS/SageMaker",
            metric_name=name,
            dimensions_map={"EndpointName": endpoint_name, "VariantName": variant},
            statistic=statistic,
            period=Duration.minutes(5),
        )

    def alarm(id: str, description: str, **props) -> cw.Alarm:
        created = cw.Alarm(
            scope,
            id,
            alarm_description=description,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            # No traffic is not an outage; the errors alarms watch real requests.
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            **props,
        )
        if topic_arn:
            action = cw_actions.SnsAction(sns.Topic.from_topic_arn(scope, f"{id}Topic", topic_arn))
            created.add_alarm_action(action)
            created.add_ok_action(action)
        return created

    # Named: the execution role reads exactly these while an update bakes (naming.py).
    server_errors_name, model_errors_name = rollback_alarm_names(endpoint_name)
    return EndpointAlarms(
        server_errors=alarm(
            "ServerErrors",
            f"{endpoint_name}: {ERRORS_PER_5_MIN}+ HTTP 5xx responses in 5 minutes",
            alarm_name=server_errors_name,
            metric=metric("Invocation5XXErrors", "Sum"),
            threshold=ERRORS_PER_5_MIN,
            evaluation_periods=1,
        ),
        model_errors=alarm(
            "ModelErrors",
            f"{endpoint_name}: {ERRORS_PER_5_MIN}+ invocations without a 2xx from the container "
            "(errors, timeouts, broken responses) in 5 minutes",
            alarm_name=model_errors_name,
            metric=metric("InvocationModelErrors", "Sum"),
            threshold=ERRORS_PER_5_MIN,
            evaluation_periods=1,
        ),
        latency=alarm(
            "ModelLatency",
            f"{endpoint_name}: p90 model latency >= {latency_ms} ms for 15 minutes",
            metric=metric("ModelLatency", "p90"),
            threshold=latency_ms * 1000,  # ModelLatency is reported in microseconds
            evaluation_periods=LATENCY_PERIODS,
        ),
    )
