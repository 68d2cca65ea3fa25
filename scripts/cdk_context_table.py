#!/usr/bin/env python3
"""The CDK context reference (docs/cdk-context.md), generated from the deployment's own model
(stacks/config.py: DeploymentConfig, one field per context key) and cdk.json's defaults.

Each field gives the row: its alias is the key, cdk.json's context (or the field's own default)
the default, its `accepts` (json_schema_extra) or its constraints the accepted values, and its
description the meaning. The table sits between `<!-- cdk-context -->` and
`<!-- /cdk-context -->`; `--check` exits 1 when it drifted (the test suite runs it).
"""

from __future__ import annotations

import json
import sys

from generated_blocks import REPO, Generated, accepted, cell, main as generate
from pydantic_core import PydanticUndefined

sys.path[:0] = [str(REPO)]

from stacks.config import DeploymentConfig  # noqa: E402

FILES = [REPO / "docs" / "cdk-context.md"]
CDK_JSON = REPO / "cdk.json"


def _default(field, context: dict) -> str:
    if field.alias in context:
        value = context[field.alias]
    elif field.default_factory is not None:
        value = field.default_factory()
    else:
        value = None if field.default is PydanticUndefined else field.default
    if value in (None, "", {}, ()):
        return "empty"
    return f"`{json.dumps(value) if not isinstance(value, str) else value}`"


def _accepts(field) -> str:
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    return extra.get("accepts") or accepted(field)


def table(_arg=None) -> str:
    context = json.loads(CDK_JSON.read_text())["context"]
    rows = ["| key | default | accepted | meaning |", "|---|---|---|---|"]
    for field in DeploymentConfig.model_fields.values():
        rows.append(f"| `{field.alias}` | {cell(_default(field, context))} | {cell(_accepts(field))} "
                    f"| {cell(field.description or '')} |")
    return "\n".join(rows) + "\n"


TABLE = Generated(r"<!-- cdk-context -->", "<!-- /cdk-context -->", table, "stacks/config.py and cdk.json")


def main() -> int:
    return generate(TABLE, FILES, REPO, "scripts/cdk_context_table.py")


if __name__ == "__main__":
    raise SystemExit(main())
