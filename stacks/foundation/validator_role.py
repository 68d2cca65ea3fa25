"""The role a delivery pipeline's validation step assumes: the invoker policy, nothing else.

SageMaker endpoints take no resource policy, so a pipeline in another account reaches a
stage's endpoint by assuming a role in that stage's account. The trust names the pipeline's
account; that account's IAM decides which of its principals may assume it (the pipeline
grants sts:AssumeRole on this role's name to its validation step only).
"""

from aws_cdk import CfnOutput, aws_iam as iam
from constructs import Construct

from stacks.naming import validator_role_name


def validator_role(
    scope: Construct, *, name_prefix: str, trusted_account: str, invoker_policy: iam.IManagedPolicy
) -> iam.Role:
    role = iam.Role(
        scope,
        "ValidatorRole",
        # Named: the pipeline stack derives its ARN without a cross-account reference.
        role_name=validator_role_name(name_prefix),
        assumed_by=iam.AccountPrincipal(trusted_account),
        description="Assumed by the delivery pipeline to validate this stage's endpoint",
        managed_policies=[invoker_policy],
    )
    CfnOutput(scope, "ValidatorRoleArn", value=role.role_arn,
              description="The pipeline's validation step assumes this role to invoke the endpoint")
    return role
