"""`make synth`'s path end to end: the pinned aws-cdk CLI runs app.py with cdk.json,
offline (in an empty network namespace where the machine allows one, and without AWS
credentials), and writes the three templates the snapshots describe."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from stack_synth import REPO, STACKS, normalize

CDK = REPO / "node_modules" / ".bin" / "cdk"


def offline_prefix() -> list[str]:
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


@pytest.fixture(scope="module")
def cli_out(tmp_path_factory):
    if not CDK.exists():
        pytest.skip("aws-cdk CLI not installed: run `make setup`")
    out = tmp_path_factory.mktemp("cdk.out")
    env = {**os.environ, "AWS_EC2_METADATA_DISABLED": "true", "CDK_DISABLE_VERSION_CHECK": "1",
           "CDK_DISABLE_CLI_TELEMETRY": "true", "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    for credential in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        env.pop(credential, None)
    command = [*offline_prefix(), str(CDK), "--app", f"{sys.executable} app.py", "--no-notices",
               "synth", "--quiet", "--output", str(out)]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=280)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_cli_writes_the_snapshotted_template(cli_out, default, stack):
    """Same template as the in-process synth that test_stack_snapshots checks (the stage's
    templates are in its nested assembly)."""
    template = json.loads((cli_out / default.assembly_dir.name / f"{default.artifact_ids[stack]}.template.json").read_text())
    assert normalize(template) == normalize(default.templates[stack])


def test_cli_synth_has_no_open_cdk_nag_finding(cli_out):
    [report] = json.loads((cli_out / "validation-report.json").read_text())["pluginReports"]
    assert report["violations"] == []


def test_make_synth_pipeline_works_offline(tmp_path):
    """`make synth-pipeline EXAMPLE=1`: the pipeline and both stages, no Docker, no AWS."""
    if not CDK.exists():
        pytest.skip("aws-cdk CLI not installed: run `make setup`")
    out = tmp_path / "cdk.out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and not k.startswith("MAKE")}
    command = [*offline_prefix(), "make", "--no-print-directory", "synth-pipeline", "EXAMPLE=1",
               f"VENV={sys.prefix}", "CDK_SETUP=", f"CDK_OUT={out}"]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=280)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (out / "Pipeline.template.json").is_file()
    for stage in ("Staging", "Prod"):
        assert len(list((out / f"assembly-Pipeline-{stage}").glob("*.template.json"))) == 3
    [report] = json.loads((out / "validation-report.json").read_text())["pluginReports"]
    assert report["violations"] == []
