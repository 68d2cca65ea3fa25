"""Blocks of a file that a generator writes: the text between an opening marker line and a
closing marker is the generator's output, never edited by hand. Each generator script
(settings_tables.py, cdk_context_table.py, error_codes_table.py, chunker_tables.py) describes
its blocks with `Generated` and calls `main`: without arguments it rewrites them in place,
with `--check` it exits 1 naming each file that drifted (the test suite runs each check).
"""

from __future__ import annotations

import argparse
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Generated:
    """opening: a regex for the marker line (an optional group `arg` is passed to render);
    closing: the literal closing marker; render: the block's text from arg."""

    opening: str
    closing: str
    render: Callable[[str | None], str]
    source: str  # what the block is generated from, for the drift message

    def pattern(self) -> re.Pattern:
        return re.compile(rf"(?P<open>{self.opening}\n)(?P<body>.*?)(?P<close>{re.escape(self.closing)})", re.S)

    def rendered(self, text: str) -> str:
        return self.pattern().sub(lambda m: m["open"] + self.render(m.groupdict().get("arg")) + m["close"], text)


def cell(text: str) -> str:
    """Text as one Markdown table cell: one line, its pipes escaped, no `<word>` read as HTML."""
    return re.sub(r"<(?=[A-Za-z/!])", "&lt;", " ".join(str(text).split()).replace("|", "\\|"))


def accepted(field) -> str:
    """What a pydantic field accepts, in words: its bounds, its choices, its pattern."""
    words = []
    for item in field.metadata:
        for name, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if getattr(item, name, None) is not None:
                words.append(f"{sign} {getattr(item, name)}")
        if getattr(item, "pattern", None):
            words.append(f"matches `{item.pattern}`")
    choices = [typing.get_args(t) for t in (field.annotation, *typing.get_args(field.annotation))
               if typing.get_origin(t) is typing.Literal]
    if choices:
        words.append(" / ".join(f"`{v}`" for v in choices[0]))
    return ", ".join(words)


def sync(generated: Generated, files: list[Path], root: Path, check: bool) -> list[str]:
    """The drift found in each file (rewritten unless check); a file without the block is drift too."""
    stale = []
    for path in files:
        text = path.read_text()
        name = path.relative_to(root)
        if generated.pattern().search(text) is None:
            stale.append(f"{name}: no generated block ({generated.opening})")
        elif generated.rendered(text) != text:
            stale.append(f"{name}: the generated block differs from {generated.source}")
            if not check:
                path.write_text(generated.rendered(text))
    return stale


def main(generated: Generated, files: list[Path], root: Path, script: str, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"Rewrite the blocks generated from {generated.source}")
    parser.add_argument("--check", action="store_true", help="exit 1 if a block is out of date")
    args = parser.parse_args(argv)
    stale = sync(generated, files, root, args.check)
    if args.check and stale:
        print("\n".join(stale + [f"run: python {script}"]))
        return 1
    return 0
