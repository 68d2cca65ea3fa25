"""Context validation: a bad value stops synth, naming the key and what it accepts."""

import json
import os
import subprocess
import sys

import pytest
from stack_synth import CDK_CONTEXT, REPO

from stacks.config import INSTANCE_TYPES, ConfigError, DeploymentConfig


def load(**overrides) -> DeploymentConfig:
    return DeploymentConfig.from_context({**CDK_CONTEXT, **overrides}.get)


def test_cdk_json_holds_a_valid_default_for_every_key():
    config = load()
    assert config.instance_type == "ml.g5.xlarge"
    assert config.alarm_topic_arn is None
    assert not config.is_local_source


def test_command_line_strings_are_parsed():
    config = load(maxInstanceCount="4", alarmTopicArn="arn:aws:sns:eu-west-1:123456789012:ops")
    assert config.max_instance_count == 4
    assert config.alarm_topic_arn == "arn:aws:sns:eu-west-1:123456789012:ops"


@pytest.mark.parametrize("key,value,accepted", [
    ("instanceType", "ml.t3.medium", ", ".join(INSTANCE_TYPES)),
    ("maxInstanceCount", "zero", "an integer from 1 to 20"),
    ("initialInstanceCount", "0", "an integer from 1 to 20"),
    ("targetUtilizationPercent", "95", "an integer from 10 to 90"),
    ("cpuEngine", "tensorrt", "Input should be 'onnx' or 'torch'"),
    ("namePrefix", "Kokoro_TTS", "lowercase letters, digits and '-', 3-24 characters"),
    ("modelRevision", "main", "a full 40-character lowercase commit hash"),
    ("modelId", "Kokoro-82M", "a Hugging Face repository id"),
    ("modelSource", "s3://bucket/x", "'hub' or 'local:<directory with config.json>'"),
    ("modelSource", "local:/nonexistent", "no config.json"),
    ("hubEndpoint", "http://huggingface.co", "an https:// origin"),
    ("alarmTopicArn", "my-topic", "an SNS topic ARN"),
])
def test_invalid_value_names_key_and_accepted_values(key, value, accepted):
    with pytest.raises(ConfigError) as error:
        load(**{key: value})
    message = str(error.value)
    assert f"- {key}={value!r}:" in message
    assert accepted in message


@pytest.mark.parametrize("instance_type,gpu,vcpus", [
    ("ml.g5.xlarge", True, 4), ("ml.g6e.8xlarge", True, 32), ("ml.c7i.xlarge", False, 4),
    ("ml.m7i.large", False, 2), ("ml.m5.4xlarge", False, 16),
])
def test_instance_families_are_told_apart(instance_type, gpu, vcpus):
    config = load(instanceType=instance_type)
    assert (config.is_gpu, config.vcpus) == (gpu, vcpus)


def test_bounds_must_be_ordered():
    with pytest.raises(ConfigError, match="minInstanceCount must be <= maxInstanceCount"):
        load(minInstanceCount=3, maxInstanceCount=2, initialInstanceCount=3)
    with pytest.raises(ConfigError, match="initialInstanceCount must lie between"):
        load(initialInstanceCount=5, maxInstanceCount=4)


def test_missing_key_says_where_to_set_it():
    context = {k: v for k, v in CDK_CONTEXT.items() if k != "modelRevision"}
    with pytest.raises(ConfigError, match=r"modelRevision: missing; set it in cdk.json's context or pass -c"):
        DeploymentConfig.from_context(context.get)


def test_app_exits_with_the_message_as_the_cli_runs_it():
    # The CLI hands the merged context to app.py in CDK_CONTEXT_JSON.
    env = {**os.environ, "CDK_CONTEXT_JSON": json.dumps({**CDK_CONTEXT, "instanceType": "ml.p9.huge"}),
           "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    result = subprocess.run([sys.executable, "app.py"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "instanceType='ml.p9.huge': expected one of: ml.g4dn.xlarge" in result.stderr
    assert "Traceback" not in result.stderr
