"""The model-cache custom resource handler against moto S3 and a fake Hub on 127.0.0.1."""

from __future__ import annotations

import json
import os
import types

import boto3
import pytest
from hub_fake import Fault, HubFake, git_blob_sha1, sha256
from botocore.exceptions import ClientError
from moto import mock_aws

from stacks.model_cache.handler import index

MODEL, REVISION, BUCKET = "hexgrad/Kokoro-82M", "f3ff3571791e39611d31c381e3a41a3af07b4987", "models"
PREFIX = f"{MODEL}/{REVISION}/"
PART = 5 * 1024 * 1024  # the smallest part S3 (and moto) accepts


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    monkeypatch.setattr(index, "PART_SIZE", PART)
    monkeypatch.setattr(index, "BACKOFF_SECONDS", 0)


@pytest.fixture
def s3():
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        # As the foundation stack's bucket: versioned, so any rewrite leaves a version behind.
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        yield client


@pytest.fixture
def hub():
    weights = os.urandom(2 * PART + 1234)  # three parts
    fake = HubFake(
        model=MODEL,
        revision=REVISION,
        files={
            "config.json": b'{"istftnet": {}, "n_token": 178}',
            "kokoro-v1_0.pth": weights,
            "voices/jf_alpha.pt": os.urandom(4096),
            "voices/jm_kumo.pt": os.urandom(4096),
        },
        lfs={"kokoro-v1_0.pth", "voices/jf_alpha.pt", "voices/jm_kumo.pt"},
    ).serve()
    yield fake
    fake.close()


def spec(hub: HubFake, pins: dict[str, str] | None = None) -> index.CopySpec:
    """By default pin the config and the weights, leave voices to the Hub's digests."""
    pins = pins if pins is not None else {p: sha256(hub.files[p]) for p in ("config.json", "kokoro-v1_0.pth")}
    return index.CopySpec.from_properties({
        "Bucket": BUCKET, "ModelId": MODEL, "Revision": REVISION, "HubEndpoint": hub.url,
        "Files": [{"Path": p, "Sha256": pins.get(p, "")} for p in hub.files],
    })


def keys(s3) -> set[str]:
    return {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}


def pending_uploads(s3) -> list:
    return s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])


def test_copies_every_file_verified_with_a_sha256_manifest(s3, hub):
    result = index.sync(spec(hub), s3)

    assert result == {"S3Uri": f"s3://{BUCKET}/{PREFIX}", "Prefix": PREFIX, "Copied": "4", "Reused": "0"}
    for path, data in hub.files.items():
        stored = s3.get_object(Bucket=BUCKET, Key=PREFIX + path)
        assert stored["Body"].read() == data
        assert stored["Metadata"] == {"sha256": sha256(data)}
    manifest = s3.get_object(Bucket=BUCKET, Key=PREFIX + "SHA256SUMS")["Body"].read().decode()
    assert manifest == "".join(f"{sha256(hub.files[p])}  {p}\n" for p in sorted(hub.files))


def test_large_file_goes_up_in_parts(s3, hub):
    index.sync(spec(hub), s3)

    head = s3.head_object(Bucket=BUCKET, Key=PREFIX + "kokoro-v1_0.pth")
    assert head["ETag"].strip('"').endswith("-3")  # a multipart ETag names its part count


def test_rerun_with_the_same_revision_copies_nothing(s3, hub):
    index.sync(spec(hub), s3)
    hub.requests.clear()
    versions_before = len(s3.list_object_versions(Bucket=BUCKET).get("Versions", []))

    result = index.sync(spec(hub), s3)

    assert (result["Copied"], result["Reused"]) == ("0", "4")
    assert hub.requests == []
    assert versions_before == len(hub.files) + 1  # the files and SHA256SUMS, once each
    assert len(s3.list_object_versions(Bucket=BUCKET).get("Versions", [])) == versions_before, "a rerun wrote to S3"


def test_a_run_cut_short_resumes_with_the_missing_files(s3, hub):
    index.sync(spec(hub), s3)
    s3.delete_object(Bucket=BUCKET, Key=PREFIX + "voices/jm_kumo.pt")
    hub.requests.clear()

    result = index.sync(spec(hub), s3)

    assert result["Copied"] == "1"
    assert [r for r in hub.requests if not r.startswith("/cdn/")] == [f"/{MODEL}/resolve/{REVISION}/voices/jm_kumo.pt"]


def test_a_changed_pin_fetches_the_file_again(s3, hub):
    index.sync(spec(hub), s3)
    hub.files["config.json"] = b'{"n_token": 179}'

    result = index.sync(spec(hub), s3)

    assert result["Copied"] == "1"
    assert s3.get_object(Bucket=BUCKET, Key=PREFIX + "config.json")["Body"].read() == b'{"n_token": 179}'


def test_missing_file_fails_naming_it_and_writes_no_manifest(s3, hub):
    hub.faults["voices/jm_kumo.pt"] = Fault(status=404)

    with pytest.raises(index.CopyError, match=r"voices/jm_kumo.pt.*HTTP 404"):
        index.sync(spec(hub), s3)

    assert PREFIX + "SHA256SUMS" not in keys(s3)
    assert PREFIX + "voices/jm_kumo.pt" not in keys(s3)


def test_server_error_is_retried(s3, hub):
    hub.faults["kokoro-v1_0.pth"] = Fault(status=503, times=2)

    assert index.sync(spec(hub), s3)["Copied"] == "4"


def test_download_cut_short_every_time_fails_and_leaves_no_upload_behind(s3, hub):
    hub.faults["kokoro-v1_0.pth"] = Fault(truncate=True)

    with pytest.raises(index.CopyError, match=r"kokoro-v1_0.pth: download failed after 3 attempts"):
        index.sync(spec(hub), s3)

    assert PREFIX + "kokoro-v1_0.pth" not in keys(s3)
    assert pending_uploads(s3) == []


def test_checksum_mismatch_against_the_pin_stores_nothing(s3, hub):
    pins = {"kokoro-v1_0.pth": "0" * 64}
    hub.lfs.discard("kokoro-v1_0.pth")  # no announced digest: caught after the download

    with pytest.raises(index.CopyError, match=r"kokoro-v1_0.pth: checksum mismatch"):
        index.sync(spec(hub, pins), s3)

    assert PREFIX + "kokoro-v1_0.pth" not in keys(s3)
    assert pending_uploads(s3) == []


def test_pin_disagreeing_with_the_hubs_announced_digest_fails_before_reading(s3, hub):
    pins = {"voices/jf_alpha.pt": "1" * 64}

    with pytest.raises(index.CopyError, match=r"jf_alpha.pt: checksum mismatch: pinned sha256 1{64}"):
        index.sync(spec(hub, pins), s3)

    assert PREFIX + "voices/jf_alpha.pt" not in keys(s3)


def test_content_not_matching_the_hubs_own_digest_is_rejected(s3, hub):
    hub.lying_etag["voices/jm_kumo.pt"] = "2" * 64

    with pytest.raises(index.CopyError, match=r"jm_kumo.pt: checksum mismatch: expected sha256 2{64}"):
        index.sync(spec(hub, pins={}), s3)

    assert PREFIX + "voices/jm_kumo.pt" not in keys(s3)


def test_unpinned_files_are_verified_against_the_hubs_digests(s3, hub):
    assert index.sync(spec(hub, pins={}), s3)["Copied"] == "4"


def test_unpinned_small_file_is_checked_against_its_git_blob_sha1(s3, hub):
    hub.lying_etag["config.json"] = git_blob_sha1(b"other content")

    with pytest.raises(index.CopyError, match=r"config.json: checksum mismatch: expected git-sha1"):
        index.sync(spec(hub, pins={}), s3)


def test_unpinned_large_file_without_an_lfs_digest_is_refused(s3, hub):
    hub.lfs.discard("kokoro-v1_0.pth")

    with pytest.raises(index.CopyError, match="larger than one part but no sha256"):
        index.sync(spec(hub, pins={}), s3)
    assert pending_uploads(s3) == []


def only_this_revision_may_be_listed(s3) -> list[str]:
    """Make the moto client answer as S3 does for a role whose ListBucket is limited to
    PREFIX: other listings are denied, and reading a missing key is a 403, not a 404
    (S3 reports 404 only to callers that may list the key). Returns the denied calls."""
    denied: list[str] = []
    exists = boto3.client("s3", region_name="us-east-1")

    def enforce(params, model, **_):
        if model.name in ("ListObjects", "ListObjectsV2"):
            allowed = params.get("Prefix", "").startswith(PREFIX)
        elif model.name in ("HeadObject", "GetObject"):
            listed = exists.list_objects_v2(Bucket=params["Bucket"], Prefix=params["Key"]).get("Contents", [])
            allowed = any(item["Key"] == params["Key"] for item in listed)
        else:
            allowed = True
        if not allowed:
            denied.append(f"{model.name} {params.get('Prefix', params.get('Key'))}")
            raise ClientError({"Error": {"Code": "403", "Message": "Forbidden"}}, model.name)

    s3.meta.events.register("before-parameter-build.s3", enforce)
    return denied


def test_works_with_a_listing_limited_to_its_own_revision(s3, hub):
    denied = only_this_revision_may_be_listed(s3)

    assert index.sync(spec(hub), s3)["Copied"] == "4"
    s3.delete_object(Bucket=BUCKET, Key=PREFIX + "voices/jm_kumo.pt")  # a run cut short
    assert index.sync(spec(hub), s3)["Copied"] == "1"
    assert index.sync(spec(hub), s3)["Copied"] == "0"
    assert denied == []


def test_logs_progress_in_bytes_of_each_files_total(s3, hub, capsys):
    index.sync(spec(hub), s3)

    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    copying = [e for e in events if e["event"] == "copying"]
    assert [(e["file"], e["files"]) for e in copying] == [(n, 4) for n in range(1, 5)]
    weights = len(hub.files["kokoro-v1_0.pth"])
    progress = [e for e in events if e["event"] == "progress" and e["path"] == "kokoro-v1_0.pth"]
    assert [e["bytes"] for e in progress] == [PART, 2 * PART, weights]  # one line per part
    assert {e["total"] for e in progress} == {weights}
    assert progress[-1]["percent"] == 100.0
    copied = {e["path"]: e["bytes"] for e in events if e["event"] == "copied"}
    assert copied == {path: len(data) for path, data in hub.files.items()}
    assert events[-1] == {"event": "synced", "prefix": PREFIX, "copied": 4, "reused": 0}


def test_stops_cleanly_when_lambda_time_runs_out(s3, hub):
    with pytest.raises(index.CopyError, match="deploy again to resume"):
        index.sync(spec(hub), s3, remaining_ms=lambda: 1_000)


@pytest.mark.parametrize("path", ["../etc/passwd", "/abs", "voices//x.pt", "a/./b"])
def test_rejects_unsafe_paths(path):
    with pytest.raises(index.CopyError, match="unsafe file path"):
        index._safe_path(path)


def cfn_event(hub: HubFake, request_type: str, **extra) -> dict:
    props = {"Bucket": BUCKET, "ModelId": MODEL, "Revision": REVISION, "HubEndpoint": hub.url,
             "Files": [{"Path": p, "Sha256": ""} for p in hub.files]}
    return {"RequestType": request_type, "ResponseURL": f"{hub.url}/cfn-response",
            "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/s/1", "RequestId": "r1",
            "LogicalResourceId": "ModelWeights", "ResourceProperties": props, **extra}


LAMBDA_CONTEXT = types.SimpleNamespace(get_remaining_time_in_millis=lambda: 900_000)


def test_handler_reports_success_to_cloudformation(s3, hub, monkeypatch):
    monkeypatch.setattr(index.boto3, "client", lambda *_: s3)

    index.handler(cfn_event(hub, "Create"), LAMBDA_CONTEXT)

    [response] = hub.cfn_responses
    assert response["Status"] == "SUCCESS"
    assert response["PhysicalResourceId"] == f"s3://{BUCKET}/{PREFIX}"
    assert response["Data"]["S3Uri"] == f"s3://{BUCKET}/{PREFIX}"


def test_handler_reports_failure_with_the_reason(s3, hub, monkeypatch):
    monkeypatch.setattr(index.boto3, "client", lambda *_: s3)
    hub.faults["config.json"] = Fault(status=401)

    index.handler(cfn_event(hub, "Create"), LAMBDA_CONTEXT)

    [response] = hub.cfn_responses
    assert response["Status"] == "FAILED"
    assert "config.json" in response["Reason"] and "HTTP 401" in response["Reason"]


def test_delete_keeps_the_weights_for_rollback(s3, hub, monkeypatch):
    monkeypatch.setattr(index.boto3, "client", lambda *_: s3)
    index.handler(cfn_event(hub, "Create"), LAMBDA_CONTEXT)
    stored = keys(s3)

    index.handler(cfn_event(hub, "Delete", PhysicalResourceId=f"s3://{BUCKET}/{PREFIX}"), LAMBDA_CONTEXT)

    assert hub.cfn_responses[-1]["Status"] == "SUCCESS"
    assert hub.cfn_responses[-1]["PhysicalResourceId"] == f"s3://{BUCKET}/{PREFIX}"
    assert keys(s3) == stored


def test_delete_after_a_failed_create_succeeds_whatever_the_properties(hub):
    event = cfn_event(hub, "Delete", PhysicalResourceId="model-cache-failed")
    event["ResourceProperties"] = {"ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:f"}

    index.handler(event, LAMBDA_CONTEXT)

    assert hub.cfn_responses[-1]["Status"] == "SUCCESS"
    assert hub.cfn_responses[-1]["PhysicalResourceId"] == "model-cache-failed"
