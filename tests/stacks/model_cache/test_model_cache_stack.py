"""Model cache stack: the custom resource for the Hub path, BucketDeployment for local:PATH."""

import hashlib
import json

import pytest

from stacks.model_cache.pinned_files import MANIFEST

REVISION = "f3ff3571791e39611d31c381e3a41a3af07b4987"


def weights_resource(synth) -> dict:
    [resource] = synth.resources("ModelCache", "Custom::ModelWeights").values()
    return resource["Properties"]


def test_copies_the_pinned_revision_with_every_voice(default):
    props = weights_resource(default)
    assert (props["ModelId"], props["Revision"]) == ("hexgrad/Kokoro-82M", REVISION)
    assert props["HubEndpoint"] == "https://huggingface.co"
    paths = [f["Path"] for f in props["Files"]]
    assert paths[:2] == ["config.json", "kokoro-v1_0.pth"]
    voices = [p for p in paths if p.startswith("voices/")]
    assert len(voices) == 54 and all(p.endswith(".pt") for p in voices)
    assert {"voices/jf_alpha.pt", "voices/jf_gongitsune.pt", "voices/jf_nezumi.pt",
            "voices/jf_tebukuro.pt", "voices/jm_kumo.pt"} <= set(voices)


def test_pinned_digests_travel_with_the_revision_they_belong_to(default, synth):
    pins = {f["Path"]: f["Sha256"] for f in weights_resource(default)["Files"] if f["Sha256"]}
    assert pins["kokoro-v1_0.pth"] == "496dba118d1a58f5f3db2efc88dbdc216e0483fc89fe6e47ee1f2c53f18ad1e4"
    assert len(pins) == len([f for f in json.loads(MANIFEST.read_text())["files"] if "sha256" in f])

    other = weights_resource(synth(modelRevision="0" * 40))
    assert all(f["Sha256"] == "" for f in other["Files"])  # another revision: Hub digests only


def test_handler_is_bounded_and_writes_only_this_revision(default):
    function = default.one("ModelCache", "AWS::Lambda::Function")
    assert (function["Runtime"], function["Timeout"], function["Handler"]) == ("python3.14", 900, "index.handler")
    [role] = default.resources("ModelCache", "AWS::IAM::Role").values()
    statements = {s["Sid"]: s for s in role["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]}
    write = statements["WriteThisRevision"]
    assert write["Action"] == ["s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"]
    assert write["Resource"]["Fn::Join"][1][-1] == f"/hexgrad/Kokoro-82M/{REVISION}/*"
    listing = statements["ListThisRevision"]
    assert listing["Action"] == "s3:ListBucket"
    assert listing["Condition"] == {"StringLike": {"s3:prefix": [f"hexgrad/Kokoro-82M/{REVISION}/*"]}}
    assert weights_resource(default)["ServiceTimeout"] == "1200"


@pytest.fixture(scope="module")
def local_model(tmp_path_factory):
    directory = tmp_path_factory.mktemp("kokoro")
    (directory / "voices").mkdir()
    files = {"config.json": b'{"n_token": 178}', "kokoro-v1_0.pth": b"weights", "voices/jf_alpha.pt": b"voice"}
    for path, data in files.items():
        (directory / path).write_bytes(data)
    return directory, files


def test_local_source_unpacks_the_directory_with_digests_pinned_at_synth(synth, local_model):
    directory, files = local_model
    local = synth(modelSource=f"local:{directory}")

    props = weights_resource(local)
    assert "HubEndpoint" not in props
    assert props["Archive"]["Key"].endswith(".zip")
    assert props["Files"] == [{"Path": p, "Sha256": hashlib.sha256(files[p]).hexdigest()} for p in sorted(files)]
    sums = "".join(f"{hashlib.sha256(files[p]).hexdigest()}  {p}\n" for p in sorted(files))
    revision = f"local-{hashlib.sha256(sums.encode()).hexdigest()[:16]}"
    assert props["Revision"] == revision
    uri = local.one("Endpoint", "AWS::SageMaker::Model")["PrimaryContainer"]["ModelDataSource"]["S3DataSource"]["S3Uri"]
    assert uri["Fn::Join"][1][-1] == f"/hexgrad/Kokoro-82M/{revision}/"
    [role] = local.resources("ModelCache", "AWS::IAM::Role").values()
    statements = {s["Sid"]: s for s in role["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]}
    assert statements["ReadModelArchive"]["Action"] == "s3:GetObject"  # that one object, no wildcard
    assert local.report["pluginReports"][0]["violations"] == []
