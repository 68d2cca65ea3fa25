"""cfn-lint (the AWS CloudFormation linter, with the Service Authorization Reference's IAM
actions) over every synthesized template: the default stage, the CPU variant, the pipeline
and the pipeline's stages. No finding at all, except the warnings named here with why."""

from __future__ import annotations

import json

import pytest
from cfnlint.api import ManualArgs, lint
from stack_synth import STACKS, synthesize, synthesize_pipeline

IGNORED = {
    # CDK's Lambda functions list their role in DependsOn as well as in Role (GetAtt), so
    # that the role's policy exists before the function; redundant, and harmless.
    "W3005": "CDK adds an explicit DependsOn on a Lambda function's role beside the GetAtt",
}
REGIONS = ["us-east-1", "eu-west-1"]


def templates() -> dict[str, dict]:
    default, cpu, pipeline = synthesize(), synthesize(instanceType="ml.c7i.xlarge"), synthesize_pipeline()
    found = {f"default/{stack}": default.templates[stack] for stack in STACKS}
    found["cpu/Endpoint"] = cpu.templates["Endpoint"]
    for path in sorted(pipeline.outdir.glob("assembly-*/*.template.json")):
        found[f"pipeline/{path.parent.name}/{path.name.removesuffix('.template.json')}"] = json.loads(path.read_text())
    # The pipeline stack, and with prod in another region the support stack CDK adds.
    for path in sorted(synthesize_pipeline(prodRegion="eu-west-1").outdir.glob("*.template.json")):
        found[f"pipeline/{path.name.removesuffix('.template.json')}"] = json.loads(path.read_text())
    return found


TEMPLATES = templates()


def test_every_stage_template_is_linted():
    assert len([name for name in TEMPLATES if name.startswith("pipeline/assembly-")]) == 6
    assert {"pipeline/Pipeline", "pipeline/cross-region-stack-333333333333_eu-west-1"} <= set(TEMPLATES)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_cfn_lint_finds_nothing(name):
    matches = lint(json.dumps(TEMPLATES[name]), config=ManualArgs(regions=REGIONS, ignore_checks=list(IGNORED)))
    assert [f"{m.rule.id} {m.message}" for m in matches] == []


def test_cfn_lint_knows_the_iam_actions_it_checks():
    """The check is live: an action the reference does not list is a warning (W3037)."""
    template = {"Resources": {"P": {"Type": "AWS::IAM::ManagedPolicy", "Properties": {"PolicyDocument": {
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*",
                                                "Action": "sagemaker:InvokeEndpointWithBidirectionalStream"}]}}}}}
    assert "W3037" in {m.rule.id for m in lint(json.dumps(template), config=ManualArgs(regions=REGIONS))}
