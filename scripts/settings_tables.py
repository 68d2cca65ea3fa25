#!/usr/bin/env python3
"""The settings tables of docs/, generated from the server's settings model and each registered
client family's own (its FamilySettings).

Each table sits between `<!-- settings:GROUPS -->` and `<!-- /settings -->` (GROUPS: the
comma-separated groups it lists, or `all`). `--check` exits 1 naming each file that drifted
(the test suite runs it); without it the tables are rewritten in place (generated_blocks.py).
"""

from __future__ import annotations

import sys

from generated_blocks import REPO, Generated, accepted, cell, main as generate

sys.path[:0] = [str(REPO / "container"), str(REPO)]

from tts_server.families import REGISTERED  # noqa: E402
from tts_server.settings import Settings  # noqa: E402

MODELS = [Settings, *dict.fromkeys(family.settings for family in REGISTERED.all)]

FILES = [REPO / "docs" / "http-and-dialects.md", REPO / "docs" / "settings.md"]


def _default(field) -> str:
    if field.default is None:
        return "unset"
    if isinstance(field.default, float) and field.default.is_integer():
        return f"`{int(field.default)}`"
    return f"`{field.default}`"


def table(groups: str) -> str:
    wanted = None if groups == "all" else set(groups.split(","))
    rows = ["| variable | default | accepted | meaning |", "|---|---|---|---|"]
    for model in MODELS:
        for name, field in model.model_fields.items():
            group = (field.json_schema_extra or {}).get("group")
            if wanted is None or group in wanted:
                rows.append(f"| `{model.variable(name)}` | {_default(field)} | {cell(accepted(field))} | "
                            f"{cell(field.description)} |")
    return "\n".join(rows) + "\n"


TABLES = Generated(r"<!-- settings:(?P<arg>[a-z,]+) -->", "<!-- /settings -->", table,
                   "container/tts_server/settings.py")


def main() -> int:
    return generate(TABLES, FILES, REPO, "scripts/settings_tables.py")


if __name__ == "__main__":
    raise SystemExit(main())
