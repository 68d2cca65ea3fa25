"""cdk-nag (AwsSolutions) runs on every synth: no open finding, no idle acknowledgement."""


import pytest
from stack_synth import STAGING_CONTEXT


def acknowledgements(synth) -> dict[tuple[str, str], str]:
    """(construct path, acknowledged id) -> reason, as recorded in the cloud assembly."""
    found = {}
    for stack in synth.templates:
        metadata = synth.metadata(stack)
        for path, entries in metadata.items():
            for entry in entries:
                if entry["type"] == "aws:cdk:acknowledged-rules":
                    found.update({(path.lstrip("/"), rule): reason for rule, reason in entry["data"].items()})
    return found


@pytest.fixture(params=["default", "cpu", "local", "staging"])
def any_synth(request, default, synth, tmp_path_factory):
    if request.param == "default":
        return default
    if request.param == "cpu":
        return synth(instanceType="ml.c7i.xlarge")
    if request.param == "staging":
        return synth(**STAGING_CONTEXT)
    model = tmp_path_factory.mktemp("model")
    (model / "config.json").write_text("{}")
    return synth(modelSource=f"local:{model}", alarmTopicArn="arn:aws:sns:us-east-1:123456789012:t")


def test_no_unacknowledged_finding(any_synth):
    [report] = any_synth.report["pluginReports"]
    assert report["pluginName"] == "AwsSolutions"
    assert report["violations"] == [], [v["ruleName"] for v in report["violations"]]
    assert report["conclusion"] == "success"


def test_every_acknowledgement_silences_a_real_finding(any_synth):
    [report] = any_synth.report["pluginReports"]
    used = {(v["acknowledgedAt"], v["acknowledgedId"]) for v in report["suppressedViolations"]}
    assert set(acknowledgements(any_synth)) == used


def test_every_acknowledgement_says_why_it_is_safe_here(default):
    reasons = acknowledgements(default)
    assert reasons, "expected the IAM wildcards the product needs to be acknowledged"
    for (path, rule), reason in reasons.items():
        assert rule.startswith("AwsSolutions::AwsSolutions-"), rule
        assert len(reason) >= 80, (path, rule, reason)
    assert len(set(reasons.values())) == len(reasons), "each acknowledgement has its own reason"
