"""The GitHub Actions workflows: actionlint passes them, and they do what the README says."""

from __future__ import annotations

import re
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
    assert "make diff STAGE=staging CDK_SETUP=setup-deploy" in runs(diff) and "gh pr comment" in runs(diff)
    assert "make setup-deploy" in runs(diff)  # the diff needs the CDK app, not the server's venv
    assert diff["permissions"]["id-token"] == "write"


def test_deploy_goes_staging_then_protected_prod_each_validated():
    jobs = load("deploy.yml")["jobs"]
    assert jobs["prod"]["needs"] == "staging"
    assert (jobs["staging"]["environment"], jobs["prod"]["environment"]) == ("staging", "prod")
    for job in jobs.values():
        uses = [step.get("uses", "") for step in job["steps"]]
        assert any(u.startswith("aws-actions/configure-aws-credentials@") for u in uses)
        assert "make deploy STAGE=${{ github.job }} CDK_SETUP=setup-deploy" in runs(job)
        assert "make validate-stage CDK_SETUP=setup-deploy" in runs(job)
        [upload] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
        assert upload["if"] == "always()" and upload["with"]["path"] == "reports/"


def step(job: dict, uses_or_name: str) -> dict:
    [found] = [s for s in job["steps"] if s.get("uses", "").startswith(uses_or_name) or s.get("name") == uses_or_name]
    return found


def position(job: dict, text: str) -> int:
    return next(i for i, s in enumerate(job["steps"]) if text in s.get("run", "") or s.get("uses", "").startswith(text))


def test_the_deploy_job_installs_only_what_the_cdk_and_the_checks_need():
    """Not `make setup` (the development venv: torch with its CUDA libraries, ~8 GB), and no pip
    cache kept on the runner's disk."""
    for job in load("deploy.yml")["jobs"].values():
        commands = runs(job)
        assert "make setup-deploy" in commands and not re.search(r"make setup(\s|$)", commands)
        python = step(job, "actions/setup-python@")
        assert "cache" not in python.get("with", {})
        # Every make target that would otherwise install the development venv is told not to.
        assert all("CDK_SETUP=setup-deploy" in line for line in commands.splitlines()
                   if re.search(r"make (deploy|validate-stage|load-stage)\b", line))


def test_the_image_builds_with_buildx_docker_driver_on_disk_freed_and_checked_first():
    for job in load("deploy.yml")["jobs"].values():
        assert step(job, "docker/setup-buildx-action@")["with"]["driver"] == "docker"
        assert position(job, "make check-disk") < position(job, "make deploy")
        freeing = step(job, "Free disk for the image build")["run"]
        assert "docker system prune" in freeing and "/usr/local/lib/android" in freeing


def test_the_role_session_lasts_the_worst_case():
    """configure-aws-credentials asks for 1 hour unless told otherwise; the worst case is longer:
    the image (about 6 GB: built and pushed on a hosted runner, an hour at worst), the three
    stacks (weights copied, quarter of an hour), the endpoint's new fleet (weights download and
    start-up, each up to its timeout) and its bake, the validation step's limit and the load
    stage's. The role's MaxSessionDuration (README) must allow what is asked: at most 12 hours."""
    from stacks.config import DeploymentConfig
    from stacks.endpoint.sagemaker_endpoint import BAKE_SECONDS, MODEL_DATA_DOWNLOAD_TIMEOUT_S, STARTUP_HEALTH_CHECK_TIMEOUT_S
    from stacks.pipeline.validation import load_timeout
    from stack_synth import CDK_CONTEXT

    config = DeploymentConfig.from_context(CDK_CONTEXT.get)
    worst = (3600 + 900 + MODEL_DATA_DOWNLOAD_TIMEOUT_S + STARTUP_HEALTH_CHECK_TIMEOUT_S + BAKE_SECONDS + 30 * 60
             + load_timeout(config).to_seconds())
    for job in load("deploy.yml")["jobs"].values():
        asked = step(job, "aws-actions/configure-aws-credentials@")["with"]["role-duration-seconds"]
        assert worst <= asked <= 12 * 3600
        assert job["timeout-minutes"] * 60 <= asked  # the job ends before its credentials do


def test_the_load_stage_runs_on_staging_only_after_its_validation():
    for job in load("deploy.yml")["jobs"].values():
        load_step = step(job, "Load stage")
        assert load_step["if"] == "github.job == 'staging'"  # the shared steps: prod skips it
        assert "make load-stage CDK_SETUP=setup-deploy" in load_step["run"]
        assert position(job, "make validate-stage") < position(job, "make load-stage")
