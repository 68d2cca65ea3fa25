"""The handler's offline path: a local model directory uploaded as a zip asset (moto S3)."""

from __future__ import annotations

import io
import os
import zipfile

import boto3
import pytest
from moto import mock_aws

from stacks.model_cache.handler import index

MODEL, REVISION, BUCKET, ASSETS = "hexgrad/Kokoro-82M", "local-0123456789abcdef", "models", "cdk-assets"
PREFIX = f"{MODEL}/{REVISION}/"
FILES = {"config.json": b'{"n_token": 178}', "kokoro-v1_0.pth": os.urandom(6 * 1024 * 1024),
         "voices/jf_alpha.pt": os.urandom(2048)}


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    monkeypatch.setattr(index, "PART_SIZE", 5 * 1024 * 1024)


@pytest.fixture
def s3():
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        for bucket in (BUCKET, ASSETS):
            client.create_bucket(Bucket=bucket)
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zf:
            for path, data in FILES.items():
                zf.writestr(path, data)
        client.put_object(Bucket=ASSETS, Key="model.zip", Body=archive.getvalue())
        yield client


PINS = {path: index.hashlib.sha256(data).hexdigest() for path, data in FILES.items()}


def spec(pins: dict[str, str] = PINS, files=FILES) -> index.CopySpec:
    return index.CopySpec.from_properties({
        "Bucket": BUCKET, "ModelId": MODEL, "Revision": REVISION,
        "Archive": {"Bucket": ASSETS, "Key": "model.zip"},
        "Files": [{"Path": p, "Sha256": pins.get(p, "")} for p in files],
    })


def test_unpacks_the_archive_verified_under_the_local_prefix(s3):
    assert index.sync(spec(), s3)["Copied"] == "3"

    for path, data in FILES.items():
        assert s3.get_object(Bucket=BUCKET, Key=PREFIX + path)["Body"].read() == data
    manifest = s3.get_object(Bucket=BUCKET, Key=PREFIX + "SHA256SUMS")["Body"].read().decode()
    assert manifest.count("\n") == 3


def test_rerun_copies_nothing_and_does_not_fetch_the_archive(s3):
    index.sync(spec(), s3)
    s3.delete_object(Bucket=ASSETS, Key="model.zip")  # fetching it now would fail

    assert index.sync(spec(), s3)["Copied"] == "0"


def test_wrong_pin_is_a_checksum_mismatch(s3):
    with pytest.raises(index.CopyError, match="kokoro-v1_0.pth: checksum mismatch"):
        index.sync(spec(pins={**PINS, "kokoro-v1_0.pth": "e" * 64}), s3)
    assert s3.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []


def test_file_missing_from_the_archive_is_named(s3):
    with pytest.raises(index.CopyError, match="voices/jm_kumo.pt: not in the uploaded model archive"):
        index.sync(spec(pins={**PINS, "voices/jm_kumo.pt": "f" * 64}, files=[*FILES, "voices/jm_kumo.pt"]), s3)


def test_exactly_one_source():
    props = {"Bucket": BUCKET, "ModelId": MODEL, "Revision": REVISION, "Files": [{"Path": "config.json"}]}
    for extra in ({}, {"HubEndpoint": "https://huggingface.co", "Archive": {"Bucket": "b", "Key": "k"}}):
        with pytest.raises(index.CopyError, match="exactly one source"):
            index.CopySpec.from_properties({**props, **extra})
