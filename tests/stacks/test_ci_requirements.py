"""The CI requirements files (stacks/requirements*.txt) pin what the development files pin, and
hold what their steps import: nothing of the server's."""

import ast
import re

import pytest
from stack_synth import REPO

DEVELOPMENT = ("requirements.txt", "requirements-dev.txt", "container/requirements.txt")
CI = ("stacks/requirements.txt", "stacks/requirements-validate.txt", "stacks/requirements-deploy.txt")


def pins(path) -> dict[str, str]:
    found = re.findall(r"^([A-Za-z0-9_.\[\]-]+)==(\S+)", (REPO / path).read_text(), re.M)
    return {name.lower(): version for name, version in found}


@pytest.mark.parametrize("path", CI)
def test_ci_pins_match_the_development_pins(path):
    development = {name: version for file in DEVELOPMENT for name, version in pins(file).items()}
    ci = pins(path)
    assert ci and {name: development.get(name) for name in ci} == ci


def third_party_imports(*paths: str) -> set[str]:
    """Top-level modules the files import, theirs and the client library's and the format table's
    (the checks' code)."""
    files = [REPO / p for p in paths] + sorted((REPO / "tts_client").rglob("*.py")) + sorted(
        (REPO / "tts_formats").rglob("*.py"))
    found = set()
    for file in files:
        if "integrations" in file.parts:  # the agent-framework adapters: not what the checks run
            continue
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


# Import name -> the distribution that brings it.
DISTRIBUTIONS = {"websockets": "websockets", "aws_sdk_sagemaker_runtime_http2": "aws-sdk-sagemaker-runtime-http2[awscrt]",
                 "awscrt": "aws-sdk-sagemaker-runtime-http2[awscrt]", "smithy_http": "aws-sdk-sagemaker-runtime-http2[awscrt]",
                 "smithy_aws_core": "aws-sdk-sagemaker-runtime-http2[awscrt]", "boto3": "boto3", "botocore": "boto3",
                 "av": "av", "matplotlib": "matplotlib"}
OPTIONAL = {"tqdm"}  # imported only when stderr is a terminal (the progress bar); never in CI


def test_the_validation_steps_install_what_the_validator_and_the_load_stage_import():
    imported = third_party_imports("scripts/validate_endpoint.py", "scripts/load_stage.py", "scripts/plots.py")
    import sys
    third_party = {m for m in imported - set(sys.stdlib_module_names) - OPTIONAL
                   if m not in ("tts_client", "tts_text", "tts_formats", "plots")}
    assert third_party <= set(DISTRIBUTIONS), third_party - set(DISTRIBUTIONS)
    assert {DISTRIBUTIONS[m] for m in third_party} <= set(pins("stacks/requirements-validate.txt"))


def test_no_ci_file_brings_the_server():
    for path in CI:
        assert not {"torch", "onnxruntime", "kokoro"} & set(pins(path)), path
