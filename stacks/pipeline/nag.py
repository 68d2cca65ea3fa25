"""cdk-nag acknowledgements for the policies CDK Pipelines generates.

The pipeline's roles are CDK's, not ours: their wildcards come from CDK's grants on the
pipeline's own artifact bucket, key, projects and bootstrap roles. Each IAM5 finding is
computed from the synthesized policy exactly as cdk-nag spells it, and acknowledged on
its policy with the reason of its kind; a finding of no known kind is left open (synth
fails on it), so a new kind of grant is reviewed before it ships.
"""

from __future__ import annotations

import re

from aws_cdk import Stack, aws_codepipeline as codepipeline, aws_iam as iam, aws_s3 as s3
from constructs import IConstruct

from stacks.nag import acknowledge, flatten

REASONS: list[tuple[re.Pattern, str]] = [(re.compile(p), r) for p, r in [
    (r"^IAM5\[Action::(s3|kms):", "CDK Pipelines' read/write grants on the pipeline's own artifact bucket and "
     "its KMS key: each wildcard is one action family (s3:GetObject*, s3:List*, kms:GenerateDataKey*, ...) "
     "and the statements name only that bucket and that key."),
    (r"^IAM5\[Resource::<\w*ArtifactsBucket\w*\.Arn>/\*\]", "Objects of the pipeline's own artifact bucket: "
     "CodePipeline stores each run's source and cloud assembly under generated keys, so the grant names that "
     "bucket's objects with a wildcard and no other bucket."),
    (r"log-group:/aws/codebuild/", "CodeBuild writes each build's log stream, named by build id, into its "
     "project's log group: the wildcard names streams of the pipeline's own projects (for the asset roles "
     "that CDK shares between asset projects, the CodeBuild groups of this account and region)."),
    (r"report-group/", "The report-group grant CDK adds to every CodeBuild role: groups named after the "
     "pipeline's own projects (for the shared asset roles, this account and region); only the validation "
     "steps publish reports, into the dedicated validation report group."),
    (r"^IAM5\[Resource::arn:\*:iam::\d{12}:role/\*\]", "Self-mutation assumes this account's CDK bootstrap "
     "roles, whose names carry the bootstrap qualifier; the statement's iam:ResourceTag/aws-cdk:bootstrap-role "
     "condition limits it to the image-publishing, file-publishing and deploy roles."),
    (r"^IAM5\[Resource::\*\]", "Resource '*' only where CDK Pipelines needs it: cloudformation:DescribeStacks "
     "and s3:ListBucket for self-mutation's cdk deploy look-ups, and codebuild:StartBuild/BatchGetBuilds/"
     "StopBuild for the asset roles that CodePipeline shares between the asset projects it creates."),
]]
ARTIFACT_LOGS_REASON = (
    "The artifact bucket holds only the pipeline's intermediate artifacts (source zips, cloud assemblies), "
    "is private, SSL-only and KMS-encrypted; CodePipeline and CodeBuild reach it with their own roles, whose "
    "calls CloudTrail records."
)
REPLICATION_OBJECTS_REASON = (
    "Objects of the replication bucket CDK creates in each other region of the pipeline's actions (its "
    "cross-region support stack): CodePipeline copies the run's artifacts there under generated keys."
)
REPLICATION_LOGS_REASON = (
    "CDK's cross-region replication bucket holds copies of the pipeline's artifacts for actions in another "
    "region, private and KMS-encrypted like the artifact bucket; only the pipeline's roles reach it, and "
    "CloudTrail records their calls."
)


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def iam5_findings(document: dict) -> list[str]:
    """The IAM5 finding ids cdk-nag reports for a resolved policy document, in order."""
    found: list[str] = []
    for statement in document.get("Statement", []):
        if statement.get("Effect") != "Allow":
            continue
        found += [f"IAM5[Action::{a}]" for a in _as_list(statement.get("Action", [])) if "*" in a]
        found += [f"IAM5[Resource::{r}]" for r in map(flatten, _as_list(statement.get("Resource", []))) if "*" in r]
    return list(dict.fromkeys(found))


def acknowledge_pipeline_findings(stack: Stack, pipeline: codepipeline.Pipeline) -> None:
    """After build_pipeline(): the pipeline stack, and the cross-region support stacks CDK
    adds beside it when a stage is in another region (their replication buckets)."""
    replication_buckets = []
    for support in pipeline.cross_region_support.values():
        acknowledge(support.replication_bucket, "S1", REPLICATION_LOGS_REASON)
        # The generated physical name, as the pipeline's policies spell it.
        replication_buckets.append(stack.resolve(support.replication_bucket.bucket_name))
    for construct in stack.node.find_all():
        if isinstance(construct, iam.CfnPolicy):
            _acknowledge_policy(stack, construct, replication_buckets)
        elif isinstance(construct, s3.CfnBucket) and "ArtifactsBucket" in construct.node.path:
            acknowledge(construct, "S1", ARTIFACT_LOGS_REASON)


def _acknowledge_policy(stack: Stack, policy: iam.CfnPolicy, replication_buckets: list[str]) -> None:
    scope: IConstruct = policy.node.scope
    for finding in iam5_findings(stack.resolve(policy.policy_document)):
        if any(finding.endswith(f":s3:::{name}/*]") for name in replication_buckets):
            acknowledge(scope, finding, REPLICATION_OBJECTS_REASON)
            continue
        reason = next((r for pattern, r in REASONS if pattern.search(finding)), None)
        if reason:
            acknowledge(scope, finding, reason)
