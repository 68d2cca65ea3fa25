"""Acknowledging cdk-nag findings through CDK's own Validations API (cdk-nag 3.x).

Each acknowledgement names one finding and carries the reason it is safe *here*; the
reason lands in cdk.out/validation-report.json beside the finding it silences.
"""

from __future__ import annotations

import json

from aws_cdk import Acknowledgment, Stack, Validations
from constructs import IConstruct

PACK = "AwsSolutions"


def acknowledge(scope: IConstruct, finding: str, reason: str) -> None:
    """Acknowledge `finding` (e.g. "IAM5[Resource::*]") on `scope` and its children."""
    if len(reason) < 40:
        raise ValueError(f"acknowledging {finding} needs a specific reason, got {reason!r}")
    Validations.of(scope).acknowledge(
        Acknowledgment(id=f"{PACK}::{PACK}-{finding}", reason=reason)
    )


def wildcard_resource(scope: IConstruct, resource: str) -> str:
    """The IAM5 finding for a policy resource, spelled as cdk-nag prints it.

    Only exact for values that resolve inside `scope`'s stack (no cross-stack reference).
    """
    return f"IAM5[Resource::{flatten(Stack.of(scope).resolve(resource))}]"


def flatten(node: object) -> str:
    """cdk-nag's flattenCfnReference: intrinsics become `<Ref>` / `<Id.Attr>`."""
    if isinstance(node, str):
        return node.replace("${", "<").replace("}", ">")
    if isinstance(node, dict) and "Fn::Join" in node:
        delimiter, items = node["Fn::Join"]
        return delimiter.join(flatten(item) for item in items)
    if isinstance(node, dict) and "Fn::GetAtt" in node:
        resource, attribute = node["Fn::GetAtt"]
        return f"<{flatten(resource)}.{flatten(attribute)}>"
    if isinstance(node, dict) and "Ref" in node:
        return f"<{flatten(node['Ref'])}>"
    return json.dumps(node, separators=(",", ":"))
