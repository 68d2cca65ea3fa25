"""mk/cdk.mk: `make deploy` asks only where someone can answer (no terminal-only flag in CI)."""

import os
import subprocess

import pytest
from stack_synth import REPO


def dry_run(target: str, **env) -> str:
    """`make -n` of the target, stdin not a terminal (as in CI and pipelines)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "REQUIRE_APPROVAL")} | env
    result = subprocess.run(["make", "-n", "--no-print-directory", target, "CDK_SETUP="], cwd=REPO,
                            env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("env", [{"CI": "true"}, {}])
def test_deploy_without_a_terminal_does_not_ask(env):
    assert "--require-approval never" in dry_run("deploy", **env)


def test_approval_setting_can_be_chosen():
    assert "--require-approval broadening" in dry_run("deploy", CI="true", REQUIRE_APPROVAL="broadening")


def test_deploy_and_diff_select_the_stage_stacks_and_the_chosen_stage():
    assert "deploy '**'" in dry_run("deploy", CI="true", STAGE="staging")
    assert "-c stage=staging" in dry_run("deploy", CI="true", STAGE="staging")
    assert "diff '**'" in dry_run("diff")


def test_pipeline_targets_turn_the_pipeline_on():
    assert "-c pipeline=true" in dry_run("synth-pipeline")
    assert "deploy Pipeline" in dry_run("deploy-pipeline", CI="true")
