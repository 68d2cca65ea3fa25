"""One snapshot per synthesized template (asset hashes masked).

After an intended infrastructure change: `make snapshot-update`, review the diff of
tests/stacks/__snapshots__/, commit it with the change.
"""

import pytest
from stack_synth import STACKS, normalize, normalize_pipeline, synthesize_pipeline
from syrupy.extensions.json import JSONSnapshotExtension


@pytest.fixture
def snapshot_json(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.mark.parametrize("stack", STACKS)
def test_template_matches_snapshot(default, stack, snapshot_json):
    assert normalize(default.templates[stack]) == snapshot_json


def test_cpu_endpoint_template_matches_snapshot(synth, snapshot_json):
    """The CPU variant (instanceType of a CPU family): same image, no GPU settings."""
    assert normalize(synth(instanceType="ml.c7i.xlarge").templates["Endpoint"]) == snapshot_json


def test_snapshots_ignore_asset_hashes():
    template = {"Image": {"Fn::Sub": "123.dkr.ecr/repo:" + "a" * 64}, "S3Key": "b" * 64 + ".zip",
                "Metadata": {"aws:asset:path": "asset." + "c" * 64}, "Sha256": "d" * 64}
    assert normalize(template) == {
        "Image": {"Fn::Sub": "123.dkr.ecr/repo:<asset-hash>"}, "S3Key": "<asset-hash>.zip",
        "Metadata": {"aws:asset:path": "asset.<asset-hash>"}, "Sha256": "d" * 64,
    }


def test_pipeline_template_matches_snapshot(snapshot_json):
    """The delivery pipeline with the placeholder accounts of stack_synth.PIPELINE_CONTEXT;
    a change to the server code (the image asset's hash) leaves it as it is."""
    assert normalize_pipeline(synthesize_pipeline().templates["Pipeline"]) == snapshot_json


def test_pipeline_snapshot_ignores_what_the_image_hash_changes():
    publish = 'cdk-assets publish "' + "a" * 64 + ':111111111111-us-east-1-c8aa321e"'
    assert normalize_pipeline({"BuildSpec": publish, "Hash": "b" * 64}) == {
        "BuildSpec": 'cdk-assets publish "<hash>:111111111111-us-east-1-<id>"', "Hash": "<hash>"}
