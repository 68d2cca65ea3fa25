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


def test_a_deploy_may_set_any_server_setting_by_its_variable():
    """serverSettings: every Settings field of container/tts_server/settings.py (read from its syntax
    tree, the server not imported) but the few the deploy sets itself."""
    from stacks import server_settings

    config = load(serverSettings='{"PREEMPTION": "off", "TARGET_FIRST_AUDIO_MS": 1500, "MAX_SESSIONS": "64"}')
    assert config.server_settings == {"PREEMPTION": "off", "TARGET_FIRST_AUDIO_MS": "1500", "MAX_SESSIONS": "64"}
    assert load(serverSettings={"VOICE_FALLBACK": "strict"}).server_settings == {"VOICE_FALLBACK": "strict"}  # cdk.json
    assert {"PREEMPTION", "TARGET_FIRST_AUDIO_MS", "SESSION_IDLE_TIMEOUT_S", "BULBUL_SPEAKER_MAP"} <= set(
        server_settings.settable())
    assert set(server_settings.RESERVED) <= set(server_settings.setting_names())  # each reserved name is real


def test_the_settable_names_follow_the_servers_settings_without_importing_it():
    """The names are the server's own: what Settings and each registered family's settings
    declare (imported here, where the server's packages are), upper-cased; a new field is
    settable at once."""
    from tts_server.families import REGISTERED
    from tts_server.settings import Settings

    from stacks import server_settings

    models = [Settings, *dict.fromkeys(family.settings for family in REGISTERED.all)]
    declared = {name.upper() for model in models for name in model.model_fields}
    assert set(server_settings.setting_names()) == declared


@pytest.mark.parametrize("value,says", [
    ('{"PREEMTION": "off"}', "PREEMTION: not a server setting"),
    ('{"preemption": "off"}', "preemption: not a server setting (did you mean PREEMPTION?)"),
    ('{"DEVICE": "cpu"}', "DEVICE: not settable here (set by instanceType"),
    ('{"WS_MAX_PENDING_RESPONSES": 3}', "set by wsMaxPendingResponses"),
    ('{"PREEMPTION": false}', "PREEMPTION: expected a string or a number as the server reads it, got False"),
    ("PREEMPTION=off", 'expected a JSON object such as {"PREEMPTION": "off"}'),
])
def test_a_server_setting_that_cannot_be_set_names_itself_and_what_may_be(value, says):
    with pytest.raises(ConfigError) as error:
        load(serverSettings=value)
    assert says in str(error.value)
    if "not a server setting" in says:
        assert "a deploy may set: SHUTDOWN_DEADLINE_S, LANGUAGES" in str(error.value)


def test_gpu_types_ask_for_cuda_and_pytorch_cpu_types_for_the_cpu():
    gpu, cpu = load(), load(instanceType="ml.c7i.xlarge", cpuEngine="torch")
    assert (gpu.engine, gpu.device, cpu.engine, cpu.device) == ("torch", "cuda", "torch", "cpu")
    assert load(instanceType="ml.m5.xlarge").engine == "onnx"


def test_the_load_budget_is_the_instance_familys_with_the_contexts_overrides():
    from stacks.load_budget import CPU_BUDGET, GPU_BUDGET

    assert load().load_budget == GPU_BUDGET and load(instanceType="ml.c7i.xlarge").load_budget == CPU_BUDGET
    assert GPU_BUDGET.levels == CPU_BUDGET.levels == (1, 10, 50)
    custom = load(loadLevels="1,5", loadSeconds="30", loadTtfaP99Ms="2500", loadShedFreeSessions="0").load_budget
    assert (custom.levels, custom.seconds, custom.ttfa_p95_ms, custom.ttfa_p99_ms, custom.shed_free_sessions) == (
        (1, 5), 30.0, GPU_BUDGET.ttfa_p95_ms, 2500, 0)
    with pytest.raises(ConfigError, match=r"loadLevels='1,,5': expected session counts"):
        load(loadLevels="1,,5")


def test_the_container_user_is_tts_or_root():
    assert (load().container_user, load().container_uid) == ("tts", 10001)
    assert load(containerUser="root").container_uid == 0
    with pytest.raises(ConfigError, match="containerUser='nobody'"):
        load(containerUser="nobody")


def test_every_field_says_what_it_means():
    """The CDK context reference is generated from these descriptions."""
    for name, field in DeploymentConfig.model_fields.items():
        assert field.alias in CDK_CONTEXT or field.alias == "alarmTopicArn", name
        assert field.description and len(field.description) >= 15, name


def test_expectations_print_what_the_checks_after_a_deploy_are_told():
    """`python -m stacks.expectations`: the GitHub workflow's source of the options the pipeline
    writes at synth (stacks/pipeline/validation.py), from cdk.json and -c overrides."""
    def run(*args):
        return subprocess.run([sys.executable, "-m", "stacks.expectations", *args], cwd=REPO, capture_output=True,
                              text=True, timeout=60)

    assert run("validate").stdout.split() == ["--expect-device", "cuda", "--expect-uid", "10001", "--max-pending", "15"]
    assert run("validate", "-c", "instanceType=ml.c7i.xlarge", "-c", "containerUser=root").stdout.split()[:4] == [
        "--expect-device", "cpu", "--expect-uid", "0"]
    assert "--ttfa-p95-ms 3000" in run("load", "-c", "instanceType=ml.c7i.xlarge").stdout
    broken = run("load", "-c", "instanceType=ml.p9.huge")
    assert broken.returncode == 2 and "instanceType='ml.p9.huge'" in broken.stderr
