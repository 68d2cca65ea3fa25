#!/usr/bin/env python3
"""The error codes reference (docs/errors.md), generated from the server's own record
(container/tts_server/wire/errors.py: ErrorCode, its HTTP_STATUS and MEANINGS).

The table sits between `<!-- error-codes -->` and `<!-- /error-codes -->`; `--check` exits 1
when it drifted (the test suite runs it).
"""

from __future__ import annotations

import sys

from generated_blocks import REPO, Generated, cell, main as generate

sys.path[:0] = [str(REPO / "container")]

from tts_server.wire.errors import HTTP_STATUS, MEANINGS, ErrorCode  # noqa: E402

FILES = [REPO / "docs" / "errors.md"]


def table(_arg=None) -> str:
    rows = ["| code | HTTP status | meaning |", "|---|---|---|"]
    rows += [f"| `{code}` | {HTTP_STATUS[code]} | {cell(MEANINGS[code])} |" for code in ErrorCode]
    return "\n".join(rows) + "\n"


TABLE = Generated(r"<!-- error-codes -->", "<!-- /error-codes -->", table, "container/tts_server/wire/errors.py")


def main() -> int:
    return generate(TABLE, FILES, REPO, "scripts/error_codes_table.py")


if __name__ == "__main__":
    raise SystemExit(main())
