"""The delivery pipeline's shape: source -> synth and tests -> assets -> staging ->
validation -> approval -> prod -> validation, and what each step runs."""

import json

import pytest
from pipeline_shape import action_env, actions, buildspec, project, raw_buildspec, stage_names
from stack_synth import PIPELINE_CONTEXT, synthesize_pipeline

from stacks.config import ConfigError


def test_stages_run_in_delivery_order(pipeline):
    assert stage_names(pipeline) == ["Source", "Build", "UpdatePipeline", "Assets", "Staging", "Prod"]
    [source] = actions(pipeline, "Source")
    assert source["ActionTypeId"]["Provider"] == "CodeStarSourceConnection"
    assert source["Configuration"]["FullRepositoryId"] == "acme/kokoro-tts"
    assert source["Configuration"]["BranchName"] == "main"
    assert source["Configuration"]["ConnectionArn"] == PIPELINE_CONTEXT["connectionArn"]


def test_synth_runs_the_fast_checks_before_cdk_synth(pipeline):
    [synth] = actions(pipeline, "Build")
    spec = buildspec(pipeline, synth)
    assert spec["phases"]["build"]["commands"] == [
        "make test-stacks VENV=.venv CDK_SETUP=node_modules/.installed",
        "make synth-pipeline VENV=.venv CDK_SETUP=node_modules/.installed"]
    assert ".venv/bin/pip install --quiet -r stacks/requirements.txt" in spec["phases"]["install"]["commands"]


def deploy_names(stage_actions) -> list[str]:
    return [a["Name"] for a in stage_actions if a["ActionTypeId"]["Provider"] == "CloudFormation"]


@pytest.mark.parametrize("stage,prefix", [("Staging", "kokoro-tts-staging"), ("Prod", "kokoro-tts-prod")])
def test_each_stage_deploys_the_three_stacks_then_validates(pipeline, stage, prefix):
    stage_actions = actions(pipeline, stage)
    assert deploy_names(stage_actions) == [
        f"{prefix}-{stack}.{step}" for stack in ("foundation", "model-cache", "endpoint")
        for step in ("Prepare", "Deploy")]
    validate = stage_actions[-1]
    assert validate["Name"] == f"Validate{stage}"
    assert validate["RunOrder"] > max(a["RunOrder"] for a in stage_actions[:-1])


def validation_action(synth, stage: str) -> dict:
    [action] = [a for a in actions(synth, stage) if a["Name"] == f"Validate{stage}"]
    return action


@pytest.mark.parametrize("stage,account", [("Staging", "111111111111"), ("Prod", "222222222222")])
def test_validation_runs_the_validator_against_the_stage_endpoint(pipeline, stage, account):
    action = validation_action(pipeline, stage)
    env = action_env(action)
    # CodePipeline variables: the stage's endpoint stack outputs.
    assert env["ENDPOINT_NAME"]["value"].startswith(f"#{{Pipeline{stage}Endpoint")
    assert env["ENDPOINT_NAME"]["value"].endswith(".EndpointName}")
    assert env["ENDPOINT_REGION"]["value"].endswith(".EndpointRegion}")
    commands = buildspec(pipeline, action)["phases"]["build"]["commands"]
    assert commands[0].startswith('set -- $(aws sts assume-role --role-arn "$VALIDATOR_ROLE_ARN"')
    assert commands[-1] == ('.venv/bin/python scripts/validate_endpoint.py --endpoint "$ENDPOINT_NAME" '
                            '--region "$ENDPOINT_REGION" --max-pending 15 --no-progress --junit reports/validation.xml')
    [role_arn] = [v["Value"] for v in project(pipeline, action)["Environment"]["EnvironmentVariables"]
                  if v["Name"] == "VALIDATOR_ROLE_ARN"]
    prefix = "kokoro-tts-staging" if stage == "Staging" else "kokoro-tts-prod"
    assert role_arn == {"Fn::Sub": f"arn:${{AWS::Partition}}:iam::{account}:role/{prefix}-validator"}


def test_validation_reports_land_in_a_test_report_group(pipeline):
    [(group_id, group)] = pipeline.resources("Pipeline", "AWS::CodeBuild::ReportGroup").items()
    assert group["Properties"]["Type"] == "TEST"
    for stage in ("Staging", "Prod"):
        action = validation_action(pipeline, stage)
        parts = raw_buildspec(pipeline, action)["Fn::Join"][1]
        assert parts[1] == {"Fn::GetAtt": [group_id, "Arn"]}  # the key of the "reports" entry
        assert buildspec(pipeline, action)["reports"] == {"<token>": {
            "files": ["validation.xml"], "base-directory": "reports", "file-format": "JUNITXML"}}


def test_stage_validator_role_holds_the_invoker_policy_and_trusts_the_pipeline_account(pipeline):
    manifest = json.loads((pipeline.outdir / "assembly-Pipeline-Staging" / "manifest.json").read_text())
    [foundation] = [a for a in manifest["artifacts"] if a.startswith("PipelineStagingFoundation")
                    and manifest["artifacts"][a]["type"] == "aws:cloudformation:stack"]
    template = json.loads((pipeline.outdir / "assembly-Pipeline-Staging" / f"{foundation}.template.json").read_text())
    [role] = [r["Properties"] for r in template["Resources"].values()
              if r["Type"] == "AWS::IAM::Role" and r["Properties"].get("RoleName") == "kokoro-tts-staging-validator"]
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    assert ":iam::333333333333:root" in json.dumps(trust["Principal"])
    [policy] = role["ManagedPolicyArns"]
    assert template["Resources"][policy["Ref"]]["Type"] == "AWS::IAM::ManagedPolicy"


def test_approval_comes_before_prod_deploys(pipeline):
    prod = actions(pipeline, "Prod")
    assert prod[0]["ActionTypeId"]["Category"] == "Approval"
    assert prod[0]["RunOrder"] < min(a["RunOrder"] for a in prod if a["ActionTypeId"]["Provider"] == "CloudFormation")


def test_approval_can_be_switched_off():
    prod = actions(synthesize_pipeline(manualApproval="false"), "Prod")
    assert [a for a in prod if a["ActionTypeId"]["Category"] == "Approval"] == []


def test_image_is_built_once_on_a_privileged_large_build_and_published_to_both_accounts(pipeline):
    [image] = [a for a in actions(pipeline, "Assets") if a["Name"] == "kokoro-tts-server"]
    environment = project(pipeline, image)["Environment"]
    assert environment["PrivilegedMode"] is True
    assert environment["ComputeType"] == "BUILD_GENERAL1_LARGE"
    commands = json.loads(project(pipeline, image)["Source"]["BuildSpec"])["phases"]["build"]["commands"]
    # One project: cdk-assets builds the image for the first destination and pushes the
    # same local image to the second.
    assert [c.split(":")[-1].split("-")[0] for c in commands] == ["111111111111", "222222222222"]


def test_pipeline_updates_itself_and_encrypts_artifacts(pipeline):
    [mutate] = actions(pipeline, "UpdatePipeline")
    assert mutate["Name"] == "SelfMutate"
    assert pipeline.resources("Pipeline", "AWS::KMS::Key")


def test_one_account_works_too():
    one = {"prodAccount": "111111111111", "pipelineAccount": "", "manualApproval": "true"}
    synth = synthesize_pipeline(**one)
    assert stage_names(synth)[-2:] == ["Staging", "Prod"]
    assert synth.report["pluginReports"][0]["violations"] == []


def test_missing_pipeline_settings_name_their_keys():
    with pytest.raises(ConfigError) as error:
        synthesize_pipeline(connectionArn="", repository="not a repo")
    assert "connectionArn=None: missing" in str(error.value)
    assert "repository='not a repo': expected 'owner/name'" in str(error.value)


def test_stages_in_one_place_need_distinct_prefixes():
    with pytest.raises(ConfigError, match="stagingNamePrefix and prodNamePrefix must differ"):
        synthesize_pipeline(prodAccount="111111111111", prodNamePrefix="kokoro-tts-staging")
