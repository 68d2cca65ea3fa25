"""checkov skips for the resources CDK Pipelines generates (ours carry theirs beside them).

As with cdk-nag (nag.py), the pipeline's buckets and roles are CDK's: each skip names one
check on one resource, and a policy is skipped for CKV_AWS_111 (write actions on '*') only
when every such statement is of a kind known here; any other keeps the check failing, so a
new kind of grant is reviewed before it ships.
"""

from __future__ import annotations

from aws_cdk import Stack, aws_codepipeline as codepipeline, aws_iam as iam, aws_s3 as s3

from stacks.lint_suppressions import skip_checkov

ARTIFACT_BUCKET_REASONS = {
    "CKV_AWS_18": "The pipeline's artifact bucket (CDK Pipelines') holds only intermediate artifacts (source zips, "
                  "cloud assemblies, reports); CodePipeline and CodeBuild reach it with their own roles, whose "
                  "calls CloudTrail records.",
    "CKV_AWS_21": "Each pipeline run writes its artifacts under new generated keys and never overwrites one; "
                  "a run is reproduced from its commit, not from an older object version.",
}
REPLICATION_BUCKET_REASONS = {
    "CKV_AWS_18": "CDK's cross-region replication bucket holds copies of the pipeline's artifacts for actions in "
                  "another region, reached only by the pipeline's roles, whose calls CloudTrail records.",
    "CKV_AWS_21": "CodePipeline copies each run's artifacts there under new generated keys and never overwrites "
                  "one; nothing is restored from an older version.",
}
# Statements with write actions on Resource '*' that CDK Pipelines writes, by their actions.
WILDCARD_WRITES = {
    frozenset({"codebuild:BatchGetBuilds", "codebuild:StartBuild", "codebuild:StopBuild"}):
        "codebuild:StartBuild/StopBuild on '*': CodePipeline shares the asset roles between the asset projects it "
        "creates, whose names are generated; the statement grants nothing but starting and stopping builds.",
    frozenset({"kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*"}):
        "KMS use on '*' beside the artifact key: the key of the cross-region support stack's replication bucket, "
        "which lives in another region's stack and reaches this one by alias only; a key's own key policy must "
        "also allow a caller, and the actions are encryption only (no key administration).",
}


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def wildcard_write_statements(document: dict) -> list[frozenset[str]]:
    """The action sets of the Allow statements whose resources include '*' (CKV_AWS_111's concern)."""
    return [frozenset(_as_list(statement.get("Action", []))) for statement in document.get("Statement", [])
            if statement.get("Effect") == "Allow" and "*" in _as_list(statement.get("Resource", []))
            and not statement.get("Condition")]


def skip_pipeline_checks(stack: Stack, pipeline: codepipeline.Pipeline) -> None:
    """After build_pipeline(): the pipeline stack, and the support stacks of other regions."""
    for support in pipeline.cross_region_support.values():
        for check, reason in REPLICATION_BUCKET_REASONS.items():
            skip_checkov(support.replication_bucket, check, reason)
    for construct in stack.node.find_all():
        if isinstance(construct, s3.CfnBucket) and "ArtifactsBucket" in construct.node.path:
            for check, reason in ARTIFACT_BUCKET_REASONS.items():
                skip_checkov(construct, check, reason)
        elif isinstance(construct, iam.CfnPolicy):
            kinds = wildcard_write_statements(stack.resolve(construct.policy_document))
            if kinds and all(kind in WILDCARD_WRITES for kind in kinds):
                skip_checkov(construct, "CKV_AWS_111", " ".join(dict.fromkeys(WILDCARD_WRITES[k] for k in kinds)))
