"""checkov (the infrastructure scanner platform teams run) over every synthesized template,
beside cfn-lint: no failed check, and each check skipped only on its resource, with a reason
(`Metadata.checkov.skip`, stacks/lint_suppressions.py).

checkov lives in a venv of its own beside the project's (`make setup` builds
$(VENV)-checkov, mk/cdk.mk): it pins older boto3, botocore and packaging than the project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from stack_synth import every_template

MIN_REASON = 80


def checkov() -> str:
    venv = Path(sys.prefix)
    found = os.environ.get("CHECKOV") or str(venv.with_name(venv.name + "-checkov") / "bin" / "checkov")
    assert Path(found).is_file(), f"checkov is not installed at {found}: run make setup (it builds {venv.name}-checkov)"
    return found


def scan(directory: Path) -> dict:
    """checkov's JSON report over the CloudFormation templates in `directory` (offline: no
    download of its guidelines, no platform)."""
    result = subprocess.run([checkov(), "--directory", str(directory), "--framework", "cloudformation",
                             "--skip-download", "--output", "json", "--compact"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode in (0, 1) and result.stdout, result.stderr[-3000:]
    report = json.loads(result.stdout)
    return report[0] if isinstance(report, list) else report


# Scanned with the templates, so that one checkov run shows the scan is live: a bucket without
# encryption, versioning or logging fails its checks here too.
CONTROL = "control-unprotected-bucket.json"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    directory = tmp_path_factory.mktemp("checkov")
    for index, (name, template) in enumerate(sorted(every_template().items())):
        (directory / f"{index:02d}-{name.replace('/', '--')}.json").write_text(json.dumps(template))
    (directory / CONTROL).write_text(json.dumps({"Resources": {"Bucket": {"Type": "AWS::S3::Bucket"}}}))
    return scan(directory)


def failures(report: dict, control: bool) -> list[dict]:
    return [c for c in report["results"]["failed_checks"] if (c["file_path"].lstrip("/") == CONTROL) == control]


def test_checkov_scans_every_template(report):
    assert report["summary"]["parsing_errors"] == 0
    scanned = {check["file_path"].lstrip("/") for check in report["results"]["passed_checks"]} - {CONTROL}
    assert len(scanned) == len(every_template())


def test_the_scan_is_live(report):
    assert {"CKV_AWS_18", "CKV_AWS_21"} <= {c["check_id"] for c in failures(report, control=True)}


def test_no_check_fails(report):
    assert [f"{c['check_id']} {c['resource']} ({c['file_path']}): {c['check_name']}"
            for c in failures(report, control=False)] == []


def test_every_skip_is_on_its_resource_with_a_reason(report):
    skipped = report["results"]["skipped_checks"]
    assert skipped, "the stacks skip some checks (stacks/lint_suppressions.py)"
    for check in skipped:
        reason = check["check_result"].get("suppress_comment", "")
        assert len(reason) >= MIN_REASON, (check["check_id"], check["resource"], reason)
