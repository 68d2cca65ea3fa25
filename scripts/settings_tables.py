#!/usr/bin/env python3
"""The settings tables of README.md and docs/, generated from the server's settings model and
each registered client family's own (its FamilySettings).

Each table sits between `<!-- settings:GROUPS -->` and `<!-- /settings -->` (GROUPS: the
comma-separated groups it lists, or `all`). `--check` exits 1 naming each file that drifted
(the test suite runs it); without it the tables are rewritten in place.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "container")]

from tts_server.families import REGISTERED  # noqa: E402
from tts_server.settings import Settings  # noqa: E402

MODELS = [Settings, *dict.fromkeys(family.settings for family in REGISTERED.all)]

FILES = [REPO / "README.md", REPO / "docs" / "http-and-dialects.md"]
BLOCK = re.compile(r"(<!-- settings:(?P<groups>[a-z,]+) -->\n)(?P<table>.*?)(<!-- /settings -->)", re.S)


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
    for model in MODELS:
        for name, field in model.model_fields.items():
            group = (field.json_schema_extra or {}).get("group")
            if wanted is None or group in wanted:
                rows.append(f"| `{model.variable(name)}` | {_default(field)} | {_bounds(field)} | {field.description} |")
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + table(m.group("groups")) + m.group(4), text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a table is out of date")
    args = parser.parse_args()
    stale = []
    for path in FILES:
        text = path.read_text()
        if BLOCK.search(text) is None:
            stale.append(f"{path.relative_to(REPO)}: no settings table")
            continue
        if render(text) != text:
            stale.append(f"{path.relative_to(REPO)}: the settings table differs from the settings models")
            if not args.check:
                path.write_text(render(text))
    if args.check and stale:
        print("\n".join(stale + ["run: python scripts/settings_tables.py"]))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
