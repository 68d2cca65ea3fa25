"""The CLIs CDK Pipelines installs in its generated steps, pinned where make's are: package.json.

Without a pin, self-mutation runs `npm install -g aws-cdk@2` and each asset step
`cdk-assets@latest`: a release on npm would change a deploy that no commit changed. The same
file pins the aws-cdk CLI that `make synth/diff/deploy` run (npm ci), so one record per pin.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

PACKAGE_JSON = Path(__file__).resolve().parents[2] / "package.json"


@cache
def pinned(package: str) -> str:
    """The exact version package.json pins for `package` (a range there is refused)."""
    version = json.loads(PACKAGE_JSON.read_text())["devDependencies"][package]
    if not version[:1].isdigit():
        raise ValueError(f"package.json: {package} must be pinned to an exact version, got {version!r}")
    return version


def cdk_cli() -> str:
    return pinned("aws-cdk")


def cdk_assets_cli() -> str:
    return pinned("cdk-assets")
