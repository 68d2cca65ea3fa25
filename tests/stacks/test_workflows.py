"""The GitHub Actions workflows: actionlint passes them, and they do what the README says."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from stack_synth import REPO

WORKFLOWS = REPO / ".github" / "workflows"


def actionlint() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    assert found, "actionlint is not installed: pip install -r requirements-dev.txt"
    return found


@pytest.mark.parametrize("name", ["pull-request.yml", "deploy.yml"])
def test_actionlint_passes(name):
    result = subprocess.run([actionlint(), "-no-color", str(WORKFLOWS / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ steps.nothing.outputs.endpoint }}\n")
    result = subprocess.run([actionlint(), "-no-color", str(broken)], capture_output=True, text=True)
    assert result.returncode == 1 and "steps.nothing" in result.stdout


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


def runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_pull_requests_run_the_tests_and_post_the_diff():
    workflow = load("pull-request.yml")
    assert "make test" in runs(workflow["jobs"]["test"])
    diff = workflow["jobs"]["diff"]
    assert "make diff STAGE=staging" in runs(diff) and "gh pr comment" in runs(diff)
    assert diff["permissions"]["id-token"] == "write"


def test_deploy_goes_staging_then_protected_prod_each_validated():
    jobs = load("deploy.yml")["jobs"]
    assert jobs["prod"]["needs"] == "staging"
    assert (jobs["staging"]["environment"], jobs["prod"]["environment"]) == ("staging", "prod")
    for job in jobs.values():
        uses = [step.get("uses", "") for step in job["steps"]]
        assert any(u.startswith("aws-actions/configure-aws-credentials@") for u in uses)
        assert "make deploy STAGE=${{ github.job }}" in runs(job)
        assert "scripts/validate_endpoint.py" in runs(job) and "--junit reports/validation.xml" in runs(job)
        [upload] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
        assert upload["if"] == "always()"
