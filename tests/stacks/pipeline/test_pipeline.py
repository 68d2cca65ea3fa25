"""The delivery pipeline's shape: source -> synth and tests -> assets -> staging ->
validation -> approval -> prod -> validation, and what each step runs."""

import json
import re

import pytest
from pipeline_shape import action_env, actions, buildspec, project, raw_buildspec, stage_names
from stack_synth import PIPELINE_CONTEXT, REPO, synthesize_pipeline

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


@pytest.mark.parametrize("stage,prefix,checks", [("Staging", "kokoro-tts-staging", ["ValidateStaging", "LoadStaging"]),
                                                  ("Prod", "kokoro-tts-prod", ["ValidateProd"])])
def test_each_stage_deploys_the_three_stacks_then_validates_and_staging_then_loads(pipeline, stage, prefix, checks):
    stage_actions = actions(pipeline, stage)
    assert deploy_names(stage_actions) == [
        f"{prefix}-{stack}.{step}" for stack in ("foundation", "model-cache", "endpoint")
        for step in ("Prepare", "Deploy")]
    deployed = max(a["RunOrder"] for a in stage_actions if a["ActionTypeId"]["Provider"] == "CloudFormation")
    after = [a for a in stage_actions if a["RunOrder"] > deployed]
    assert [a["Name"] for a in after] == checks
    assert len({a["RunOrder"] for a in after}) == len(after)  # the load stage waits for the validation


def validation_action(synth, stage: str, kind: str = "Validate") -> dict:
    [action] = [a for a in actions(synth, stage) if a["Name"] == f"{kind}{stage}"]
    return action


TARGET = '--role-arn "$VALIDATOR_ROLE_ARN" --endpoint "$ENDPOINT_NAME" --region "$ENDPOINT_REGION"'


@pytest.mark.parametrize("stage,account,kind", [("Staging", "111111111111", "Validate"),
                                                ("Staging", "111111111111", "Load"),
                                                ("Prod", "222222222222", "Validate")])
def test_each_check_is_one_command_that_assumes_the_stage_role_itself(pipeline, stage, account, kind):
    """No credentials in shell variables between buildspec commands: the script assumes the role."""
    action = validation_action(pipeline, stage, kind)
    env = action_env(action)
    # CodePipeline variables: the stage's endpoint stack outputs.
    assert env["ENDPOINT_NAME"]["value"].startswith(f"#{{Pipeline{stage}Endpoint")
    assert env["ENDPOINT_NAME"]["value"].endswith(".EndpointName}")
    assert env["ENDPOINT_REGION"]["value"].endswith(".EndpointRegion}")
    spec = buildspec(pipeline, action)
    [command] = spec["phases"]["build"]["commands"]
    script = "validate_endpoint.py" if kind == "Validate" else "load_stage.py"
    assert command.startswith(f".venv/bin/python scripts/{script} {TARGET} ")
    assert "set --" not in json.dumps(spec) and "AWS_SECRET_ACCESS_KEY" not in json.dumps(spec)
    assert ".venv/bin/pip install --quiet --no-cache-dir -r stacks/requirements-validate.txt" in spec["phases"]["install"]["commands"]
    [role_arn] = [v["Value"] for v in project(pipeline, action)["Environment"]["EnvironmentVariables"]
                  if v["Name"] == "VALIDATOR_ROLE_ARN"]
    prefix = "kokoro-tts-staging" if stage == "Staging" else "kokoro-tts-prod"
    assert role_arn == {"Fn::Sub": f"arn:${{AWS::Partition}}:iam::{account}:role/{prefix}-validator"}


def build_command(synth, stage: str, kind: str) -> str:
    [command] = buildspec(synth, validation_action(synth, stage, kind))["phases"]["build"]["commands"]
    return command


@pytest.mark.parametrize("context,device", [({}, "cuda"), ({"instanceType": "ml.c7i.xlarge"}, "cpu")])
def test_validation_expects_the_device_and_user_the_deploy_asked_for(context, device):
    synth = synthesize_pipeline(**context)
    for stage in ("Staging", "Prod"):
        assert f"--expect-device {device} --expect-uid 10001 --max-pending 15 " in build_command(synth, stage, "Validate")
    root = synthesize_pipeline(containerUser="root", **context)
    assert "--expect-uid 0 " in build_command(root, "Staging", "Validate")


@pytest.mark.parametrize("context,budget", [
    ({}, "--levels 1,10,50 --seconds 60 --ttfa-p95-ms 1000 --ttfa-p99-ms 2000 --shed-free-sessions 10"),
    ({"instanceType": "ml.c7i.xlarge"}, "--levels 1,10,50 --seconds 60 --ttfa-p95-ms 3000 --ttfa-p99-ms 5000 "
                                        "--shed-free-sessions 1"),
    ({"loadLevels": "1,4", "loadSeconds": "30", "loadTtfaP95Ms": "800"},
     "--levels 1,4 --seconds 30 --ttfa-p95-ms 800 --ttfa-p99-ms 2000 --shed-free-sessions 10"),
])
def test_the_load_stage_runs_on_staging_only_at_the_deploys_budget(context, budget):
    synth = synthesize_pipeline(**context)
    command = build_command(synth, "Staging", "Load")
    assert f" {budget} " in command
    assert command.endswith("--junit reports/load.xml --json reports/load.json --plot reports/load.png")
    assert not [a for a in actions(synth, "Prod") if a["Name"].startswith("Load")]


def test_reports_land_in_test_report_groups_and_the_json_and_plot_in_artifacts(pipeline):
    groups = {g["Properties"]["Name"]: group_id
              for group_id, g in pipeline.resources("Pipeline", "AWS::CodeBuild::ReportGroup").items()}
    assert set(groups) == {"kokoro-tts-endpoint-validation", "kokoro-tts-load-stage"}
    assert {g["Properties"]["Type"] for g in pipeline.resources("Pipeline", "AWS::CodeBuild::ReportGroup").values()} == {"TEST"}
    for stage, kind, group, junit in (("Staging", "Validate", "kokoro-tts-endpoint-validation", "validation.xml"),
                                      ("Prod", "Validate", "kokoro-tts-endpoint-validation", "validation.xml"),
                                      ("Staging", "Load", "kokoro-tts-load-stage", "load.xml")):
        action = validation_action(pipeline, stage, kind)
        parts = raw_buildspec(pipeline, action)["Fn::Join"][1]
        assert parts[1] == {"Fn::GetAtt": [groups[group], "Arn"]}  # the key of the "reports" entry
        spec = buildspec(pipeline, action)
        assert spec["reports"] == {"<token>": {"files": [junit], "base-directory": "reports", "file-format": "JUNITXML"}}
        assert spec["artifacts"]["base-directory"] == "reports" and action["OutputArtifacts"]


def test_the_load_stage_has_the_time_its_budget_needs_and_a_client_that_keeps_up(pipeline):
    action = validation_action(pipeline, "Staging", "Load")
    properties = project(pipeline, action)
    assert properties["Environment"]["ComputeType"] == "BUILD_GENERAL1_MEDIUM"
    assert properties["TimeoutInMinutes"] >= 3 * (60 + 60) / 60 + 10  # three levels of 60 s, ramps, install


def test_generated_steps_install_the_clis_package_json_pins():
    """Self-mutation and the asset steps: `npm install -g aws-cdk@<pin>` and `cdk-assets@<pin>`,
    never aws-cdk@2 or cdk-assets@latest; the pins are package.json's (one record each)."""
    package = json.loads((REPO / "package.json").read_text())["devDependencies"]
    template = json.dumps(synthesize_pipeline().templates["Pipeline"])
    installs = set(re.findall(r"npm install -g ([\w@.-]+)", template))
    assert installs == {f"aws-cdk@{package['aws-cdk']}", f"cdk-assets@{package['cdk-assets']}"}
    assert all(version[0].isdigit() for version in package.values())  # exact versions, no ranges


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
