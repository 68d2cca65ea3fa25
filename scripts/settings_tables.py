#!/usr/bin/env python3
"""The settings tables of README.md and docs/, generated from the server's settings model.

Each table sits between `<!-- settings:GROUPS -->` and `<!-- /settings -->` (GROUPS: the
comma-separated groups it lists, or `all`). `--check` exits 1 naming each file that drifted
(the test suite runs it); without it the tables are rewritten in place (generated_blocks.py).
"""

from __future__ import annotations

import re
import sys

from generated_blocks import REPO, Generated, main as generate

sys.path[:0] = [str(REPO / "container"), str(REPO)]

from tts_server.settings import Settings  # noqa: E402

FILES = [REPO / "README.md", REPO / "docs" / "http-and-dialects.md", REPO / "docs" / "settings.md"]


def _default(field) -> str:
    if field.default is None:
        return "unset"
    if isinstance(field.default, float) and field.default.is_integer():
        return f"`{int(field.default)}`"
    return f"`{field.default}`"


def _bounds(field) -> str:
    words = []
    for item in field.metadata:
        for name, sign in (("ge", ">="), ("gt", ">"), ("le", "<=")):
            if getattr(item, name, None) is not None:
                words.append(f"{sign} {getattr(item, name)}")
    annotation = str(field.annotation)
    if "Literal" in annotation:
        words.append(" / ".join(f"`{v}`" for v in re.findall(r"'([^']+)'", annotation)))
    return ", ".join(words)


def table(groups: str) -> str:
    wanted = None if groups == "all" else set(groups.split(","))
    rows = ["| variable | default | accepted | meaning |", "|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        group = (field.json_schema_extra or {}).get("group")
        if wanted is None or group in wanted:
            rows.append(f"| `{Settings.variable(name)}` | {_default(field)} | {_bounds(field)} | {field.description} |")
    return "\n".join(rows) + "\n"


TABLES = Generated(r"<!-- settings:(?P<arg>[a-z,]+) -->", "<!-- /settings -->", table,
                   "container/tts_server/settings.py")


def main() -> int:
    return generate(TABLES, FILES, REPO, "scripts/settings_tables.py")


if __name__ == "__main__":
    raise SystemExit(main())
