"""No wildcard action anywhere, and `Resource: *` only where AWS offers nothing narrower."""

import pytest
from stack_synth import STACKS

# Actions without resource-level permissions (Service Authorization Reference).
RESOURCE_STAR_ONLY = {"ecr:GetAuthorizationToken", "cloudwatch:PutMetricData"}
POLICY_TYPES = {"AWS::IAM::Role", "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"}


def allow_statements(template: dict):
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] not in POLICY_TYPES:
            continue
        props = resource["Properties"]
        documents = [p["PolicyDocument"] for p in props.get("Policies", [])]
        documents += [props["PolicyDocument"]] if "PolicyDocument" in props else []
        for document in documents:
            for statement in document["Statement"]:
                if statement["Effect"] == "Allow":
                    yield logical_id, statement


def as_list(value):
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("stack", STACKS)
def test_no_wildcard_actions(default, stack):
    for logical_id, statement in allow_statements(default.templates[stack]):
        assert not [a for a in as_list(statement["Action"]) if "*" in a], (logical_id, statement)


@pytest.mark.parametrize("stack", STACKS)
def test_resource_star_only_for_actions_that_require_it(default, stack):
    for logical_id, statement in allow_statements(default.templates[stack]):
        if "*" in as_list(statement["Resource"]):
            assert set(as_list(statement["Action"])) <= RESOURCE_STAR_ONLY, (logical_id, statement)


def test_key_policy_is_the_account_default(default):
    """kms:* appears once: the key policy that lets the account's IAM policies apply."""
    [key] = default.resources("Foundation", "AWS::KMS::Key").values()
    [statement] = key["Properties"]["KeyPolicy"]["Statement"]
    assert statement["Principal"]["AWS"]["Fn::Join"][1][-1] == ":root"
