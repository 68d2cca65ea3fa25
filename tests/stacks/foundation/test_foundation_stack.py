"""Foundation: the key, the buckets and their policies, the execution role, the invoker policy."""

import json
from importlib.resources import files

from aws_cdk.assertions import Match


def test_key_is_customer_managed_with_rotation(default):
    key = default.one("Foundation", "AWS::KMS::Key")
    assert key["EnableKeyRotation"] is True
    assert default.resources("Foundation", "AWS::KMS::Key").popitem()[1]["DeletionPolicy"] == "Retain"


def model_bucket(synth):
    [bucket] = [b for b in synth.resources("Foundation", "AWS::S3::Bucket").values()
                if "VersioningConfiguration" in b["Properties"]]
    return bucket


def test_model_bucket_is_kms_encrypted_versioned_private_and_logged(default):
    bucket = model_bucket(default)
    props = bucket["Properties"]
    [rule] = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    assert rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"] == {
        "Fn::GetAtt": [next(iter(default.resources("Foundation", "AWS::KMS::Key"))), "Arn"]}
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert props["PublicAccessBlockConfiguration"] == dict.fromkeys(
        ["BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"], True)
    assert props["LoggingConfiguration"]["DestinationBucketName"]["Ref"] in default.resources(
        "Foundation", "AWS::S3::Bucket")
    assert bucket["DeletionPolicy"] == "Retain"


def test_every_bucket_refuses_plain_http(default):
    policies = default.resources("Foundation", "AWS::S3::BucketPolicy").values()
    buckets = {p["Properties"]["Bucket"]["Ref"] for p in policies}
    assert buckets == set(default.resources("Foundation", "AWS::S3::Bucket"))
    for policy in policies:
        assert {
            "Action": "s3:*", "Effect": "Deny", "Principal": {"AWS": "*"},
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }.items() <= policy["Properties"]["PolicyDocument"]["Statement"][0].items()


def test_only_the_model_bucket_may_write_access_logs(default):
    [logs_policy] = [p for p in default.resources("Foundation", "AWS::S3::BucketPolicy").values()
                     if any(s.get("Principal") == {"Service": "logging.s3.amazonaws.com"}
                            for s in p["Properties"]["PolicyDocument"]["Statement"])]
    [grant] = [s for s in logs_policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Allow"]
    assert grant["Action"] == "s3:PutObject"
    assert "aws:SourceArn" in grant["Condition"]["ArnLike"]


def role_statements(synth, stack: str, service: str) -> list[dict]:
    [role] = [r for r in synth.resources(stack, "AWS::IAM::Role").values()
              if r["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": service}]
    return [s for p in role["Properties"]["Policies"] for s in p["PolicyDocument"]["Statement"]]


def test_execution_role_reads_only_the_model_prefix(default):
    statements = {s["Sid"]: s for s in role_statements(default, "Foundation", "sagemaker.amazonaws.com")}
    assert statements["ReadModelPrefix"]["Action"] == "s3:GetObject"
    assert statements["ReadModelPrefix"]["Resource"]["Fn::Join"][1][-1] == "/hexgrad/Kokoro-82M/*"
    assert statements["ListModelPrefix"]["Condition"] == {"StringLike": {"s3:prefix": ["hexgrad/Kokoro-82M/*"]}}
    assert statements["DecryptModelViaS3"]["Action"] == "kms:Decrypt"
    assert "kms:ViaService" in statements["DecryptModelViaS3"]["Condition"]["StringEquals"]
    assert statements["EndpointMetrics"]["Condition"] == {
        "StringEquals": {"cloudwatch:namespace": "/aws/sagemaker/Endpoints"}}
    assert set(statements) == {"ListModelPrefix", "ReadModelPrefix", "DecryptModelViaS3",
                               "WriteEndpointLogs", "EndpointMetrics", "PullModelImage", "EcrLogin",
                               "ReadRollbackAlarms"}


def test_execution_role_may_read_exactly_the_rollback_alarms(default):
    """SageMaker's deployment guardrails read the auto-rollback alarms as the execution role."""
    statements = {s["Sid"]: s for s in role_statements(default, "Foundation", "sagemaker.amazonaws.com")}
    grant = statements["ReadRollbackAlarms"]
    assert grant["Action"] == "cloudwatch:DescribeAlarms"
    granted = {arn["Fn::Join"][1][-1].removeprefix(":alarm:") for arn in grant["Resource"]}
    endpoint = default.one("Endpoint", "AWS::SageMaker::Endpoint")
    alarms = default.resources("Endpoint", "AWS::CloudWatch::Alarm")
    rollback = {alarms[a["AlarmName"]["Ref"]]["Properties"]["AlarmName"]
                for a in endpoint["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]}
    assert granted == rollback == {"kokoro-tts-endpoint-server-errors", "kokoro-tts-endpoint-model-errors"}


def test_execution_role_writes_only_its_endpoint_log_group(default):
    [group] = default.resources("Foundation", "AWS::Logs::LogGroup").values()
    assert group["Properties"]["LogGroupName"] == "/aws/sagemaker/Endpoints/kokoro-tts-endpoint"


def sagemaker_actions_in_the_reference() -> set[str]:
    """SageMaker's IAM actions as cfn-lint bundles them from the Service Authorization Reference."""
    policies = json.loads(files("cfnlint").joinpath("data/AdditionalSpecs/Policies.json").read_text())
    return set(policies["sagemaker"]["Actions"])


def test_invoker_policy_grants_the_three_invocation_actions():
    """The two the Service Authorization Reference lists, and the bidirectional stream's, which it
    does not list but AWS's own bidirectional samples grant (stacks/foundation/invoker_policy.py)."""
    from stacks.foundation.invoker_policy import INVOKE_ACTIONS

    known = sagemaker_actions_in_the_reference()
    listed = {a for a in INVOKE_ACTIONS if a.removeprefix("sagemaker:").lower() in known}
    assert listed == {"sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"}
    assert set(INVOKE_ACTIONS) - listed == {"sagemaker:InvokeEndpointWithBidirectionalStream"}


def invoker_policy_resource(synth) -> dict:
    [policy] = [r for r in synth.resources("Foundation", "AWS::IAM::ManagedPolicy").values()
                if r["Properties"]["PolicyDocument"]["Statement"][0].get("Sid") == "InvokeKokoroEndpoint"]
    return policy


def test_invoker_policy_allows_invoking_this_endpoint_only(default):
    default.template("Foundation").has_resource_properties("AWS::IAM::ManagedPolicy", {
        "PolicyDocument": {"Statement": [{
            "Effect": "Allow",
            "Action": ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithBidirectionalStream",
                       "sagemaker:InvokeEndpointWithResponseStream"],  # CDK sorts them
            "Resource": {"Fn::Join": ["", Match.array_with([":endpoint/kokoro-tts-endpoint"])]},
            "Sid": Match.any_value(),
        }]},
    })


def test_cfn_lint_w3037_is_off_on_the_invoker_policy_alone_with_the_sources_as_the_reason(default):
    config = invoker_policy_resource(default)["Metadata"]["cfn-lint"]["config"]
    assert config["ignore_checks"] == ["W3037"]
    reason = config["ignore_reasons"]["W3037"]
    for source in ("aws-samples/sample-voice-agent", "infrastructure/src/stacks/ecs-stack.ts",
                   "deepgram-devs/dg-sagemaker", "references/iam.md", "Streaming client hangs"):
        assert source in reason
    others = [name for stack in ("Foundation", "ModelCache", "Endpoint")
              for name, r in default.templates[stack]["Resources"].items() if "cfn-lint" in r.get("Metadata", {})]
    assert others == [next(n for n, r in default.templates["Foundation"]["Resources"].items()
                           if r is invoker_policy_resource(default))]


def test_name_prefix_names_bucket_endpoint_and_alias(synth):
    other = synth(namePrefix="tts-staging")
    bucket = model_bucket(other)["Properties"]["BucketName"]["Fn::Join"][1]
    assert bucket[0] == "tts-staging-models-"
    other.template("Foundation").has_resource_properties("AWS::KMS::Alias", {"AliasName": "alias/tts-staging-model"})
    assert other.templates["Endpoint"]["Outputs"]["EndpointName"]["Value"] == "tts-staging-endpoint"
