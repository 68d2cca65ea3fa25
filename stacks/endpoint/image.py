"""The container image, built from the repo root with only container/ and tts_text/.

SageMaker CreateModel accepts only a single-platform Docker v2 (schema 2) manifest. The
CDK CLI already sets BUILDX_NO_DEFAULT_ATTESTATIONS=1 for its `docker build`, which
keeps BuildKit's provenance attestations (an OCI image index) out; the outputs below
also keep Docker media types where Docker's containerd image store would write OCI
ones, and load the result into the local image store that `cdk` pushes from, whatever
the builder. manifest_check.py verifies what actually reached ECR.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import IgnoreMode, aws_ecr_assets as ecr_assets, aws_iam as iam
from constructs import Construct

from stacks.nag import acknowledge

REPO_ROOT = Path(__file__).resolve().parents[2]
# The server imports the shared sentence chunker from tts_text/, so the build context
# is the repo root; everything but these two directories stays out of it (and out of
# the asset hash). The repo-root .dockerignore says the same for a manual `docker build`.
# `docker build --output=...` as cdk-assets passes it: SageMaker-compatible media types.
BUILD_OUTPUTS = ["type=docker,oci-mediatypes=false"]
BUILD_CONTEXT_EXCLUDE = [
    "*",
    "!container",
    "!tts_text",
    "**/__pycache__",
    "**/*.pyc",
    "**/*.egg-info",
]


def model_image(scope: Construct) -> ecr_assets.DockerImageAsset:
    return ecr_assets.DockerImageAsset(
        scope,
        "Image",
        directory=str(REPO_ROOT),
        file="container/Dockerfile",
        platform=ecr_assets.Platform.LINUX_AMD64,
        outputs=BUILD_OUTPUTS,
        ignore_mode=IgnoreMode.DOCKER,
        exclude=BUILD_CONTEXT_EXCLUDE,
        display_name="kokoro-tts-server",
    )


def grant_image_pull(scope: Construct, image: ecr_assets.DockerImageAsset, role: iam.IRole) -> iam.Policy:
    """Let the SageMaker execution role pull exactly this image's repository."""
    policy = iam.Policy(
        scope,
        "ImagePull",
        roles=[role],
        statements=[
            iam.PolicyStatement(
                sid="PullModelImage",
                actions=["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
                resources=[image.repository.repository_arn],
            ),
            # Registry-wide by design: an ECR auth token is not tied to a repository.
            iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
        ],
    )
    acknowledge(
        policy,
        "IAM5[Resource::*]",
        "Only ecr:GetAuthorizationToken has Resource '*': ECR does not support resource-level "
        "permissions for it, and the token alone grants no image; pulls are limited to this "
        "image's repository by the statement above.",
    )
    return policy
