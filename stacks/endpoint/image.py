"""The container image, built from the repo root with only container/, tts_text/ and tts_formats/.

SageMaker CreateModel accepts only a single-platform Docker v2 (schema 2) manifest. The
CDK CLI already sets BUILDX_NO_DEFAULT_ATTESTATIONS=1 for its `docker build`, which
keeps BuildKit's provenance attestations (an OCI image index) out; the outputs below
also keep Docker media types where Docker's containerd image store would write OCI
ones, and load the result into the local image store that `cdk` pushes from, whatever
the builder. manifest_check.py verifies what actually reached ECR.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import IgnoreMode, aws_ecr_assets as ecr_assets
from constructs import Construct

REPO_ROOT = Path(__file__).resolve().parents[2]
# The server imports the shared sentence chunker from tts_text/ and the audio format table
# from tts_formats/, so the build context is the repo root; everything but these three
# directories stays out of it (and out of
# the asset hash). The repo-root .dockerignore says the same for a manual `docker build`.
# `docker build --output=...` as cdk-assets passes it: SageMaker-compatible media types.
# Works on a stock engine with buildx's default `docker` driver: a type=docker output with
# no `dest` becomes the engine's own image exporter there (buildx build/opt.go), and on
# other drivers a `docker load`; only a `dest=` tarball needs a docker-container builder
# ("Docker exporter is not supported for the docker driver"). What fails is a Docker CLI
# without the buildx component: the legacy builder has no --output ("unknown flag:
# --output"), so mk/image.mk and mk/cdk.mk check for buildx before building.
BUILD_OUTPUTS = ["type=docker,oci-mediatypes=false"]
BUILD_CONTEXT_EXCLUDE = [
    "*",
    "!container",
    "!tts_text",
    "!tts_formats",
    "**/__pycache__",
    "**/*.pyc",
    "**/*.egg-info",
]


def model_image(scope: Construct, *, user: str, base_image: str = "") -> ecr_assets.DockerImageAsset:
    """`user` and `base_image` become the Dockerfile's CONTAINER_USER and BASE_IMAGE build
    arguments (an empty base image keeps the Dockerfile's default)."""
    build_args = {"CONTAINER_USER": user, **({"BASE_IMAGE": base_image} if base_image else {})}
    return ecr_assets.DockerImageAsset(
        scope,
        "Image",
        directory=str(REPO_ROOT),
        file="container/Dockerfile",
        build_args=build_args,
        platform=ecr_assets.Platform.LINUX_AMD64,
        outputs=BUILD_OUTPUTS,
        ignore_mode=IgnoreMode.DOCKER,
        exclude=BUILD_CONTEXT_EXCLUDE,
        display_name="kokoro-tts-server",
    )
