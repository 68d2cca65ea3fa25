"""Suppressing a template linter's finding on one resource, with the reason written beside it.

Both linters read the resource's CloudFormation `Metadata`, so a suppression names the
resource it concerns and nothing else, and travels with the template:
- cfn-lint: `Metadata.cfn-lint.config.ignore_checks` (its own key); the reasons go beside it
  in `ignore_reasons`, which cfn-lint leaves alone;
- checkov: `Metadata.checkov.skip: [{id, comment}]` (its CloudFormation skip format).
tests/stacks/test_cfn_lint.py and tests/stacks/test_checkov.py fail on a suppression
without a reason.
"""

from __future__ import annotations

from aws_cdk import CfnResource
from constructs import IConstruct

MIN_REASON = 40


def _resource(scope: IConstruct) -> CfnResource:
    resource = scope if isinstance(scope, CfnResource) else scope.node.default_child
    if not isinstance(resource, CfnResource):
        raise TypeError(f"{scope.node.path}: no CloudFormation resource to suppress a finding on")
    return resource


def _check_reason(rule: str, reason: str) -> None:
    if len(reason) < MIN_REASON:
        raise ValueError(f"suppressing {rule} needs a specific reason, got {reason!r}")


def suppress_cfn_lint(scope: IConstruct, rule: str, reason: str) -> None:
    """cfn-lint's `rule` (e.g. "W3037") off for this resource alone."""
    _check_reason(rule, reason)
    resource = _resource(scope)
    metadata = resource.get_metadata("cfn-lint") or {"config": {"ignore_checks": [], "ignore_reasons": {}}}
    metadata["config"]["ignore_checks"].append(rule)
    metadata["config"]["ignore_reasons"][rule] = reason
    resource.add_metadata("cfn-lint", metadata)


def skip_checkov(scope: IConstruct, check: str, reason: str) -> None:
    """checkov's `check` (e.g. "CKV_AWS_18") skipped for this resource alone."""
    _check_reason(check, reason)
    resource = _resource(scope)
    metadata = resource.get_metadata("checkov") or {"skip": []}
    metadata["skip"].append({"id": check, "comment": reason})
    resource.add_metadata("checkov", metadata)
