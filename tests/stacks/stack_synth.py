"""Synthesize the CDK app once per context; shared by the stack tests (via conftest.py).

Synthesis runs the real app builder (stacks.app.build) with cdk.json's context, as the
CLI would, plus per-test overrides; cdk-nag runs as part of it. The product's stacks live
in a Stage, so their files are in the stage's nested assembly (`assembly_dir`); templates
are keyed by stack id ("Foundation", ..., or "Pipeline" for the pipeline stack).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# jsii prints a banner on every start under Node 20; the tests don't need it.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from aws_cdk import App, Stage
from aws_cdk.assertions import Template

from stacks.app import build

REPO = Path(__file__).resolve().parents[2]
CDK_CONTEXT = json.loads((REPO / "cdk.json").read_text())["context"]
STACKS = ("Foundation", "ModelCache", "Endpoint")


# `make deploy STAGE=staging`'s context, with a placeholder account.
STAGING_CONTEXT = {"stage": "staging", "stagingAccount": "111111111111", "stagingRegion": "eu-central-1"}
# A pipeline's context: placeholder accounts, nothing that reaches AWS.
PIPELINE_CONTEXT = {
    "pipeline": "true", "stagingAccount": "111111111111", "stagingRegion": "us-east-1",
    "prodAccount": "222222222222", "prodRegion": "us-east-1", "pipelineAccount": "333333333333",
    "connectionArn": "arn:aws:codeconnections:us-east-1:333333333333:connection/"
                     "0a1b2c3d-4e5f-6789-abcd-ef0123456789",
    "repository": "acme/kokoro-tts",
}


@dataclass(frozen=True)
class Synth:
    templates: dict[str, dict]
    report: dict
    outdir: Path
    assembly_dir: Path
    artifact_ids: dict[str, str]

    def template(self, stack: str) -> Template:
        return Template.from_json(self.templates[stack])

    def resources(self, stack: str, type_: str) -> dict[str, dict]:
        return {k: v for k, v in self.templates[stack]["Resources"].items() if v["Type"] == type_}

    def one(self, stack: str, type_: str) -> dict:
        [resource] = self.resources(stack, type_).values()
        return resource["Properties"]

    def assets(self, stack: str) -> dict:
        return json.loads((self.assembly_dir / f"{self.artifact_ids[stack]}.assets.json").read_text())

    def metadata(self, stack: str) -> dict:
        return json.loads((self.assembly_dir / f"{self.artifact_ids[stack]}.metadata.json").read_text())

    def manifest(self) -> dict:
        return json.loads((self.assembly_dir / "manifest.json").read_text())

    def depends_on(self, stack: str) -> set[str]:
        """The stack ids this stack's artifact depends on (asset manifests left out)."""
        by_artifact = {artifact: stack_id for stack_id, artifact in self.artifact_ids.items()}
        dependencies = self.manifest()["artifacts"][self.artifact_ids[stack]]["dependencies"]
        return {by_artifact[d] for d in dependencies if not d.endswith(".assets")}


@cache
def _synth(overrides: tuple[tuple[str, object], ...]) -> Synth:
    outdir = Path(tempfile.mkdtemp(prefix="cdk-test-"))
    atexit.register(shutil.rmtree, outdir, ignore_errors=True)
    # What the CLI adds to cdk.json's context (with "versionReporting": false), so these
    # templates are the ones `make synth` writes.
    cli = {"aws:cdk:version-reporting": False, "aws:cdk:enable-path-metadata": True,
           "aws:cdk:enable-asset-metadata": True}
    context = {**CDK_CONTEXT, **cli, **dict(overrides)}
    app = App(outdir=str(outdir), context=context)
    built = build(app)
    app.synth()
    if isinstance(built, Stage):
        stacks, assembly_dir = built.product_stacks, outdir / built.artifact_id
    else:
        stacks, assembly_dir = (built,), outdir
    artifact_ids = {s.node.id: s.artifact_id for s in stacks}
    templates = {stack_id: json.loads((assembly_dir / f"{artifact}.template.json").read_text())
                 for stack_id, artifact in artifact_ids.items()}
    report = json.loads((outdir / "validation-report.json").read_text())
    return Synth(templates=templates, report=report, outdir=outdir, assembly_dir=assembly_dir,
                 artifact_ids=artifact_ids)


def synthesize(**overrides) -> Synth:
    """Synth with cdk.json's context plus `overrides`; each distinct context runs once."""
    return _synth(tuple(sorted(overrides.items())))


def synthesize_pipeline(**overrides) -> Synth:
    """The pipeline stack with PIPELINE_CONTEXT plus `overrides`."""
    return synthesize(**{**PIPELINE_CONTEXT, **overrides})


_ASSET_HASH = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?=\.zip$|$)")


def normalize(node):
    """Replace asset hashes (image tags, Lambda code keys, staging paths) by a placeholder,
    so snapshots change with the infrastructure, not with every edit to server code.
    Pinned SHA-256 digests are kept: they are plain 64-hex values, not keys or tags."""
    if isinstance(node, dict):
        return {k: normalize(v) for k, v in node.items()}
    if isinstance(node, list):
        return [normalize(v) for v in node]
    if isinstance(node, str) and (node.endswith(".zip") or ":" in node or "asset." in node):
        return _ASSET_HASH.sub("<asset-hash>", node)
    return node


_ANY_HASH = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
# cdk-assets destination ids: `<asset hash>:<account>-<region>-<8 hex of the destination>`
_DESTINATION = re.compile(r"(<hash>:\d{12}-[a-z]{2}(?:-[a-z]+)+-\d-)[0-9a-f]{8}")


def normalize_pipeline(node):
    """For the pipeline template: every 64-hex value is a hash of something built (asset ids
    in the publishing buildspecs, CodeBuild's _PROJECT_CONFIG_HASH), none a pinned digest."""
    if isinstance(node, dict):
        return {k: normalize_pipeline(v) for k, v in node.items()}
    if isinstance(node, list):
        return [normalize_pipeline(v) for v in node]
    return _DESTINATION.sub(r"\1<id>", _ANY_HASH.sub("<hash>", node)) if isinstance(node, str) else node


def every_template() -> dict[str, dict]:
    """Every template the suite synthesizes, by a readable name: the default stage, the CPU
    variant, the pipeline's stages, the pipeline stack, and with prod in another region the
    support stack CDK adds (cfn-lint and checkov both go over all of them)."""
    default, cpu, pipeline = synthesize(), synthesize(instanceType="ml.c7i.xlarge"), synthesize_pipeline()
    found = {f"default/{stack}": default.templates[stack] for stack in STACKS}
    found["cpu/Endpoint"] = cpu.templates["Endpoint"]
    for path in sorted(pipeline.outdir.glob("assembly-*/*.template.json")):
        found[f"pipeline/{path.parent.name}/{path.name.removesuffix('.template.json')}"] = json.loads(path.read_text())
    found["pipeline/Pipeline"] = pipeline.templates["Pipeline"]
    for path in sorted(synthesize_pipeline(prodRegion="eu-west-1").outdir.glob("*.template.json")):
        found[f"pipeline-cross-region/{path.name.removesuffix('.template.json')}"] = json.loads(path.read_text())
    return found
