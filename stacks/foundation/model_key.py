"""The customer-managed KMS key that encrypts the model weights at rest."""

from aws_cdk import Duration, RemovalPolicy, aws_kms as kms
from constructs import Construct


def model_key(scope: Construct, name_prefix: str) -> kms.Key:
    return kms.Key(
        scope,
        "ModelKey",
        description=f"{name_prefix}: encrypts the cached Kokoro model weights",
        alias=f"alias/{name_prefix}-model",
        enable_key_rotation=True,
        rotation_period=Duration.days(365),
        # Retained: deleting the key would make every cached weight version unreadable.
        removal_policy=RemovalPolicy.RETAIN,
    )
