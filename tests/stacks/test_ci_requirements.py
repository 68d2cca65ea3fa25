"""stacks/requirements.txt (the pipeline's synth step) pins what the other files pin."""

import re

from stack_synth import REPO

FILES = ("requirements.txt", "requirements-dev.txt", "container/requirements.txt")


def pins(path) -> dict[str, str]:
    found = re.findall(r"^([A-Za-z0-9_.\[\]-]+)==(\S+)", (REPO / path).read_text(), re.M)
    return {name.lower(): version for name, version in found}


def test_synth_step_pins_match_the_development_pins():
    development = {name: version for path in FILES for name, version in pins(path).items()}
    ci = pins("stacks/requirements.txt")
    assert ci and {name: development.get(name) for name in ci} == ci


def test_validation_step_installs_the_validator_pins_of_requirements_txt():
    """The step runs `pip install $(grep -E '^(<packages>)' requirements.txt)`."""
    from stacks.pipeline.validation import VALIDATOR_PACKAGES

    lines = re.findall(rf"^(?:{VALIDATOR_PACKAGES}).*$", (REPO / "requirements.txt").read_text(), re.M)
    assert [line.split("==")[0].split("[")[0] for line in lines] == [
        "websockets", "aws-sdk-sagemaker-runtime-http2", "boto3"]
