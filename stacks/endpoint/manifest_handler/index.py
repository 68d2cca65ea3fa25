"""Refuse an image SageMaker would refuse: check the pushed manifest's media type.

A CloudFormation custom resource handler for AWS Lambda (stdlib + boto3 only), run
before the SageMaker model is created. SageMaker CreateModel accepts only single-platform
Docker image manifests (Docker Image Manifest V2, Schema 2). BuildKit's default
provenance attestations, and Docker's containerd image store, push an OCI image index
or OCI manifest instead, and CreateModel then fails with "Unsupported manifest media
type" deep inside a stack update. This check fails first, saying why and what to do.
"""

from __future__ import annotations


import boto3

try:  # in the Lambda the asset's root is on the path; in tests this is a package
    from .cfn_response import log, respond
except ImportError:
    from cfn_response import log, respond

DOCKER_V2 = "application/vnd.docker.distribution.manifest.v2+json"
ACCEPTED = (DOCKER_V2,)
FIX = ("Rebuild it for one platform without attestations and with Docker media types: "
       "docker buildx build --platform linux/amd64 --provenance=false --sbom=false "
       "--output type=docker,oci-mediatypes=false (the CDK image asset passes the same "
       "options); see docs/deploy.md, 'The image manifest pitfall'.")


class ManifestError(Exception):
    """The image exists but SageMaker would refuse its manifest, or it is missing."""


def check(ecr, repository: str, tag: str) -> str:
    """Return the media type of `repository:tag` when SageMaker accepts it, else raise."""
    try:
        [detail] = ecr.describe_images(repositoryName=repository, imageIds=[{"imageTag": tag}])["imageDetails"]
    except ecr.exceptions.ImageNotFoundException:
        raise ManifestError(f"{repository}:{tag} is not in ECR; was the image asset published?") from None
    media_type = detail.get("imageManifestMediaType", "<none reported>")
    if media_type not in ACCEPTED:
        raise ManifestError(
            f"{repository}:{tag} was pushed as {media_type}; SageMaker CreateModel accepts only "
            f"{' or '.join(ACCEPTED)} and would fail with 'Unsupported manifest media type'. {FIX}"
        )
    return media_type


def parse_image_uri(uri: str) -> tuple[str, str]:
    """`<account>.dkr.ecr.<region>.amazonaws.com/<repository>:<tag>` -> (repository, tag)."""
    _, slash, path = uri.partition("/")
    repository, colon, tag = path.rpartition(":")
    if not (slash and colon and repository and tag) or "@" in path:
        raise ManifestError(f"ImageUri {uri!r}: expected <registry>/<repository>:<tag>")
    return repository, tag


def handler(event: dict, context) -> None:
    """Lambda entry point: check on Create and Update, never fail a Delete."""
    uri = event.get("ResourceProperties", {}).get("ImageUri", "")
    physical_id = event.get("PhysicalResourceId") or "image-manifest-check"
    try:
        data = {}
        if event["RequestType"] != "Delete":
            media_type = check(boto3.client("ecr"), *parse_image_uri(uri))
            physical_id = uri
            data = {"MediaType": media_type}
            log("accepted", image=physical_id, media_type=media_type)
        respond(event, "SUCCESS", physical_id, data=data)
    except Exception as error:  # noqa: BLE001 - any failure must reach CloudFormation
        log("refused", error=str(error))
        respond(event, "FAILED", physical_id, reason=str(error))
