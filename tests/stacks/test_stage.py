"""The product's stacks as one Stage: `make deploy`'s default, or a named stage from context."""

import json

import pytest
from stack_synth import STACKS, STAGING_CONTEXT

from stacks.config import ConfigError

STAGING = STAGING_CONTEXT


def environments(synth) -> dict[str, str]:
    artifacts = synth.manifest()["artifacts"]
    return {stack: artifacts[synth.artifact_ids[stack]]["environment"] for stack in STACKS}


def test_default_stage_keeps_the_stack_names_and_the_credentials_environment(default):
    assert default.assembly_dir.name == "assembly-Kokoro"
    manifest = default.manifest()["artifacts"]
    assert [manifest[default.artifact_ids[s]]["properties"]["stackName"] for s in STACKS] == [
        "kokoro-tts-foundation", "kokoro-tts-model-cache", "kokoro-tts-endpoint"]
    assert set(environments(default).values()) == {"aws://unknown-account/unknown-region"}


def test_a_named_stage_deploys_to_its_account_and_region_under_its_prefix(synth):
    staging = synth(**STAGING)
    assert set(environments(staging).values()) == {"aws://111111111111/eu-central-1"}
    names = [staging.manifest()["artifacts"][staging.artifact_ids[s]]["properties"]["stackName"] for s in STACKS]
    assert names == ["kokoro-tts-staging-foundation", "kokoro-tts-staging-model-cache", "kokoro-tts-staging-endpoint"]
    assert staging.templates["Endpoint"]["Outputs"]["EndpointName"]["Value"] == "kokoro-tts-staging-endpoint"


def test_endpoint_stack_outputs_what_a_pipeline_needs(default):
    outputs = default.templates["Endpoint"]["Outputs"]
    assert outputs["EndpointName"]["Value"] == "kokoro-tts-endpoint"
    assert outputs["EndpointRegion"]["Value"] == {"Ref": "AWS::Region"}
    assert "InvokerPolicyArn" in outputs


def test_the_direct_stage_has_no_validator_role(default):
    roles = default.resources("Foundation", "AWS::IAM::Role").values()
    assert not [r for r in roles if str(r["Properties"].get("RoleName", "")).endswith("-validator")]


@pytest.mark.parametrize("overrides,message", [
    ({"stage": "qa"}, "stage='qa': expected '' or one of: staging, prod"),
    ({**STAGING, "stagingAccount": ""}, "stagingAccount='': missing; set it to a 12-digit AWS account id"),
    ({**STAGING, "stagingRegion": "Frankfurt"}, "stagingRegion='Frankfurt': expected an AWS region"),
    ({**STAGING, "stagingNamePrefix": "Kokoro"}, "stagingNamePrefix='Kokoro': expected lowercase letters"),
])
def test_stage_context_errors_name_the_key(synth, overrides, message):
    with pytest.raises(ConfigError) as error:
        synth(**overrides)
    assert message in str(error.value)


def test_cdk_json_holds_every_stage_key():
    from stack_synth import CDK_CONTEXT

    keys = {f"{stage}{suffix}" for stage in ("staging", "prod") for suffix in ("Account", "Region", "NamePrefix")}
    assert keys <= set(CDK_CONTEXT)
    assert json.dumps(CDK_CONTEXT["stage"]) == '""'
