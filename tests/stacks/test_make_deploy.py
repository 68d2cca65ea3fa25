"""mk/deploy.mk: what the GitHub deploy job runs instead of `make setup`, and its checks."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from stack_synth import REPO


def make(*args: str, dry: bool = True) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "REQUIRE_APPROVAL")}
    return subprocess.run(["make", *(["-n"] if dry else []), "--no-print-directory", *args], cwd=REPO,
                          env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True)


def requirements_closure(path: str) -> set[str]:
    """The files a pip -r installs, following their -r lines."""
    found, pending = set(), [REPO / path]
    while pending:
        current = pending.pop()
        found.add(current.relative_to(REPO).as_posix())
        pending += [current.parent / line.split(None, 1)[1] for line in current.read_text().splitlines()
                    if line.startswith("-r ")]
    return found


def test_setup_deploy_installs_the_deploy_requirements_alone_without_a_pip_cache(tmp_path):
    # -W: as if the lock file had changed, so the pinned CLI's install shows whatever is installed here.
    commands = make("-W", "package-lock.json", "setup-deploy", f"VENV={tmp_path / 'venv'}").stdout
    installs = [line for line in commands.splitlines() if "pip install" in line]
    assert installs and all("--no-cache-dir" in line for line in installs)
    assert [line.split(" -r ")[1] for line in installs if " -r " in line] == ["stacks/requirements-deploy.txt"]
    assert "npm ci" in commands  # the pinned CDK CLI
    assert requirements_closure("stacks/requirements-deploy.txt") == {
        "stacks/requirements-deploy.txt", "stacks/requirements-validate.txt"}


def test_deploy_with_the_deploy_setup_installs_nothing_of_the_development_venv(tmp_path):
    commands = make("deploy", f"VENV={tmp_path / 'venv'}", "CDK_SETUP=setup-deploy", "CI=true").stdout
    assert "requirements-deploy.txt" in commands
    assert not re.search(r"requirements(-dev)?\.txt|container[/]requirements", commands.replace("requirements-deploy", ""))


@pytest.mark.parametrize("need,ok", [("0", True), ("100000000", False)])
def test_check_disk_says_what_the_image_build_needs(tmp_path, need, ok):
    result = make("check-disk", f"IMAGE_BUILD_GB={need}", f"DOCKER_ROOT={tmp_path / 'docker' / 'missing'}", dry=False)
    assert (result.returncode == 0) is ok, result.stdout + result.stderr
    if ok:
        assert "GB free for Docker" in result.stdout
    else:
        assert f"needs about {need} GB free for Docker ({tmp_path})" in result.stdout


@pytest.mark.parametrize("target,script,module", [("validate-stage", "validate_endpoint.py", "validate"),
                                                  ("load-stage", "load_stage.py", "load")])
def test_the_stage_checks_take_what_the_deploy_asked_for_and_fail_with_it(target, script, module):
    commands = make(target, "ENDPOINT=kokoro-tts-staging-endpoint", "REGION=eu-west-1", "CDK_SETUP=").stdout
    assert f"-m stacks.expectations {module}) || exit 2" in commands
    assert f'scripts/{script} --endpoint "kokoro-tts-staging-endpoint" --region "eu-west-1"' in commands
    assert make(target, "CDK_SETUP=", dry=False).returncode == 2  # no ENDPOINT: usage
