"""The image manifest check: its handler against moto ECR, its place in the template."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from moto import mock_aws

from stacks.endpoint.manifest_handler import index

REPOSITORY = "cdk-hnb659fds-container-assets-123456789012-us-east-1"
URI = f"123456789012.dkr.ecr.us-east-1.amazonaws.com/{REPOSITORY}"
DOCKER_V2 = "application/vnd.docker.distribution.manifest.v2+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"  # BuildKit's default with attestations
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"  # containerd image store


@pytest.fixture
def ecr():
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        client = boto3.client("ecr", region_name="us-east-1")
        client.create_repository(repositoryName=REPOSITORY)
        yield client


def push(ecr, tag: str, media_type: str) -> str:
    manifest = {"schemaVersion": 2, "mediaType": media_type,
                "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                           "digest": "sha256:" + "0" * 64, "size": 1},
                "layers": [{"digest": "sha256:" + tag.ljust(64, "1")[:64]}]}
    ecr.put_image(repositoryName=REPOSITORY, imageManifest=json.dumps(manifest), imageTag=tag,
                  imageManifestMediaType=media_type)
    return f"{URI}:{tag}"


def test_a_docker_v2_manifest_passes(ecr):
    push(ecr, "good", DOCKER_V2)

    assert index.check(ecr, REPOSITORY, "good") == DOCKER_V2


@pytest.mark.parametrize("media_type", [OCI_INDEX, OCI_MANIFEST])
def test_an_oci_manifest_is_refused_with_the_cause_and_the_fix(ecr, media_type):
    push(ecr, "oci", media_type)

    with pytest.raises(index.ManifestError) as error:
        index.check(ecr, REPOSITORY, "oci")

    message = str(error.value)
    assert f"{REPOSITORY}:oci was pushed as {media_type}" in message
    assert "Unsupported manifest media type" in message  # what CreateModel would have said
    assert "--provenance=false" in message and "oci-mediatypes=false" in message
    assert len(message) < 1000  # CloudFormation's Reason is cut there


def test_a_missing_image_is_named(ecr):
    with pytest.raises(index.ManifestError, match=f"{REPOSITORY}:absent is not in ECR"):
        index.check(ecr, REPOSITORY, "absent")


@pytest.mark.parametrize("uri,expected", [
    (f"{URI}:abc", (REPOSITORY, "abc")),
    ("localhost:5000/team/tts:v1", ("team/tts", "v1")),
])
def test_image_uri_is_split_into_repository_and_tag(uri, expected):
    assert index.parse_image_uri(uri) == expected


@pytest.mark.parametrize("uri", ["", "no-slash:tag", f"{URI}", f"{URI}@sha256:{'a' * 64}"])
def test_an_image_uri_without_a_tag_is_refused(uri):
    with pytest.raises(index.ManifestError, match="expected <registry>/<repository>:<tag>"):
        index.parse_image_uri(uri)


@pytest.fixture
def cloudformation():
    """Records the responses the handler PUTs to its ResponseURL."""
    responses: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self):
            responses.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/response", responses
    server.shutdown()
    server.server_close()


def event(url: str, request_type: str, uri: str, **extra) -> dict:
    return {"RequestType": request_type, "ResponseURL": url, "RequestId": "r1",
            "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/e/1",
            "LogicalResourceId": "ImageCheck", "ResourceProperties": {"ImageUri": uri}, **extra}


@pytest.mark.parametrize("request_type", ["Create", "Update"])
def test_handler_reports_success_for_an_accepted_image(ecr, cloudformation, monkeypatch, request_type):
    url, responses = cloudformation
    monkeypatch.setattr(index.boto3, "client", lambda *_: ecr)
    uri = push(ecr, "good", DOCKER_V2)

    index.handler(event(url, request_type, uri), None)

    [response] = responses
    assert (response["Status"], response["PhysicalResourceId"]) == ("SUCCESS", uri)
    assert response["Data"] == {"MediaType": DOCKER_V2}


def test_handler_fails_the_deployment_for_an_oci_index(ecr, cloudformation, monkeypatch):
    url, responses = cloudformation
    monkeypatch.setattr(index.boto3, "client", lambda *_: ecr)

    index.handler(event(url, "Create", push(ecr, "oci", OCI_INDEX)), None)

    [response] = responses
    assert response["Status"] == "FAILED"
    assert f"was pushed as {OCI_INDEX}" in response["Reason"]


def test_delete_always_succeeds(cloudformation):
    url, responses = cloudformation

    index.handler(event(url, "Delete", "", PhysicalResourceId=f"{URI}:old"), None)

    assert (responses[0]["Status"], responses[0]["PhysicalResourceId"]) == ("SUCCESS", f"{URI}:old")


def test_model_is_created_only_after_the_check_of_the_image_it_pulls(default):
    [(check_id, check)] = default.resources("Endpoint", "Custom::ImageManifestCheck").items()
    model = default.one("Endpoint", "AWS::SageMaker::Model")
    assert check["Properties"]["ImageUri"] == model["PrimaryContainer"]["Image"]
    [model_resource] = default.resources("Endpoint", "AWS::SageMaker::Model").values()
    assert check_id in model_resource["DependsOn"]


def test_check_may_only_describe_images_of_the_asset_repository(default):
    [check] = default.resources("Endpoint", "Custom::ImageManifestCheck").values()
    function_id = check["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    role_id = default.resources("Endpoint", "AWS::Lambda::Function")[function_id]["Properties"]["Role"]["Fn::GetAtt"][0]
    role = default.resources("Endpoint", "AWS::IAM::Role")[role_id]["Properties"]
    statements = {s["Sid"]: s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]}
    assert statements["DescribeEndpointImage"]["Action"] == "ecr:DescribeImages"
    arn = statements["DescribeEndpointImage"]["Resource"]["Fn::Join"][1]
    assert arn[-2:] == [":repository/", {"Fn::Sub": "cdk-hnb659fds-container-assets-${AWS::AccountId}-${AWS::Region}"}]
    assert set(statements) == {"WriteOwnLogs", "DescribeEndpointImage"}


def test_cdk_builds_the_image_with_docker_media_types(default):
    [image] = default.assets("Endpoint")["dockerImages"].values()
    assert image["source"]["dockerOutputs"] == ["type=docker,oci-mediatypes=false"]
    assert image["source"]["platform"] == "linux/amd64"  # one platform: no manifest list
