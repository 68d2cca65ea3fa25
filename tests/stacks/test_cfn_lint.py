"""cfn-lint (the AWS CloudFormation linter, with the Service Authorization Reference's IAM
actions) over every synthesized template: the default stage, the CPU variant, the pipeline
and the pipeline's stages. No finding at all, except the warnings named here with why, and
those a resource turns off for itself (stacks/lint_suppressions.py), each with its reason."""

from __future__ import annotations

import json

import pytest
from cfnlint.api import ManualArgs, lint
from stack_synth import every_template

IGNORED = {
    # CDK's Lambda functions list their role in DependsOn as well as in Role (GetAtt), so
    # that the role's policy exists before the function; redundant, and harmless.
    "W3005": "CDK adds an explicit DependsOn on a Lambda function's role beside the GetAtt",
}
REGIONS = ["us-east-1", "eu-west-1"]


# Synthesized when a test asks, not when the file is collected: every pytest-xdist worker collects
# every file, and synthesizing these templates there cost each worker ~8 s of the suite.
@pytest.fixture(scope="module")
def templates() -> dict[str, dict]:
    return every_template()


def test_every_stage_template_is_linted(templates):
    assert len([name for name in templates if name.startswith("pipeline/assembly-")]) == 6
    assert {"pipeline/Pipeline", "pipeline-cross-region/Pipeline",
            "pipeline-cross-region/cross-region-stack-333333333333_eu-west-1"} <= set(templates)


def test_cfn_lint_finds_nothing(templates):
    findings = {name: [f"{m.rule.id} {m.message}" for m in lint(json.dumps(template), config=ManualArgs(
        regions=REGIONS, ignore_checks=list(IGNORED)))] for name, template in sorted(templates.items())}
    assert {name: found for name, found in findings.items() if found} == {}


def test_cfn_lint_knows_the_iam_actions_it_checks():
    """The check is live: an action the reference does not list is a warning (W3037)."""
    template = {"Resources": {"P": {"Type": "AWS::IAM::ManagedPolicy", "Properties": {"PolicyDocument": {
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*",
                                                "Action": "sagemaker:InvokeEndpointWithBidirectionalStream"}]}}}}}
    assert "W3037" in {m.rule.id for m in lint(json.dumps(template), config=ManualArgs(regions=REGIONS))}


def resource_ignores(templates: dict[str, dict]) -> list[tuple[str, str, str, str]]:
    """(template, resource, rule, reason) for every rule a resource turns off for itself."""
    found = []
    for name, template in templates.items():
        for resource, body in template.get("Resources", {}).items():
            config = body.get("Metadata", {}).get("cfn-lint", {}).get("config", {})
            found += [(name, resource, rule, config.get("ignore_reasons", {}).get(rule, ""))
                      for rule in config.get("ignore_checks", [])]
    return found


def test_each_rule_a_resource_turns_off_is_explained_there(templates):
    ignores = resource_ignores(templates)
    assert ignores, "the invoker policy turns W3037 off (stacks/foundation/invoker_policy.py)"
    assert {rule for _, _, rule, _ in ignores} == {"W3037"}
    for name, resource, rule, reason in ignores:
        assert len(reason) >= 80, (name, resource, rule)


def test_without_its_own_suppression_the_invoker_policy_is_a_w3037_warning(templates):
    """The suppression is what silences it: the same template, its metadata dropped, warns."""
    template = json.loads(json.dumps(templates["default/Foundation"]))
    [(_, resource, _, _)] = [i for i in resource_ignores(templates) if i[0] == "default/Foundation"]
    del template["Resources"][resource]["Metadata"]["cfn-lint"]
    matches = lint(json.dumps(template), config=ManualArgs(regions=REGIONS, ignore_checks=list(IGNORED)))
    assert [(m.rule.id, m.path[1]) for m in matches] == [("W3037", resource)]
