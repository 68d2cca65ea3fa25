"""cdk-nag on the pipeline: no open finding, each acknowledgement used and explained."""

import json

from stack_synth import synthesize_pipeline

from stacks.pipeline.nag import REASONS, iam5_findings


def pipeline_acknowledgements(synth) -> dict[tuple[str, str], str]:
    found = {}
    for path, entries in synth.metadata("Pipeline").items():
        for entry in entries:
            if entry["type"] == "aws:cdk:acknowledged-rules":
                found.update({(path.lstrip("/"), rule): reason for rule, reason in entry["data"].items()})
    return found


def test_no_open_finding(pipeline):
    [report] = pipeline.report["pluginReports"]
    assert report["violations"] == [], [v["ruleName"] for v in report["violations"]]


def test_every_pipeline_acknowledgement_silences_a_real_finding(pipeline):
    [report] = pipeline.report["pluginReports"]
    used = {(v["acknowledgedAt"], v["acknowledgedId"]) for v in report["suppressedViolations"]}
    acknowledged = pipeline_acknowledgements(pipeline)
    assert acknowledged and set(acknowledged) <= used


def test_every_reason_says_why_it_is_safe(pipeline):
    for (path, rule), reason in pipeline_acknowledgements(pipeline).items():
        assert len(reason) >= 80, (path, rule)


def test_findings_are_computed_as_cdk_nag_spells_them():
    document = {"Statement": [
        {"Effect": "Allow", "Action": ["s3:GetObject*", "s3:PutObject"],
         "Resource": [{"Fn::GetAtt": ["Bucket", "Arn"]}, {"Fn::Join": ["", [{"Fn::GetAtt": ["Bucket", "Arn"]}, "/*"]]}]},
        {"Effect": "Deny", "Action": "s3:*", "Resource": "*"},
    ]}
    assert iam5_findings(document) == ["IAM5[Action::s3:GetObject*]", "IAM5[Resource::<Bucket.Arn>/*]"]


def test_an_unknown_kind_of_wildcard_stays_open():
    finding = "IAM5[Resource::arn:aws:dynamodb:us-east-1:1:table/*]"
    assert not any(pattern.search(finding) for pattern, _ in REASONS)


def test_prod_in_another_region_adds_a_support_stack_and_stays_clean():
    synth = synthesize_pipeline(prodRegion="eu-west-1")
    [report] = synth.report["pluginReports"]
    assert report["violations"] == []
    [support] = synth.outdir.glob("cross-region-stack-*eu-west-1.template.json")
    buckets = [r for r in json.loads(support.read_text())["Resources"].values() if r["Type"] == "AWS::S3::Bucket"]
    assert len(buckets) == 1
    used = {v["acknowledgedAt"] for v in report["suppressedViolations"]}
    assert any(path.startswith("cross-region-stack-") for path in used)
