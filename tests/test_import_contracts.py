"""The layers of pyproject.toml's import-linter contracts hold, and each contract really catches
an upward import: a copy of the packages with one such import added breaks it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"
PACKAGES = {"tts_server": REPO / "container" / "tts_server", "tts_client": REPO / "tts_client",
            "tts_text": REPO / "tts_text", "tts_formats": REPO / "tts_formats"}


def lint(root: Path, *path: Path) -> subprocess.CompletedProcess:
    environment = os.environ | {"PYTHONPATH": os.pathsep.join(str(p) for p in path)}
    return subprocess.run([str(LINT), "--config", str(REPO / "pyproject.toml"), "--no-cache"], cwd=root,
                          env=environment, capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold():
    result = lint(REPO, REPO / "container", REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


# Each upward import that the layering forbids (the ones the architecture issue found, in
# today's names): the module it is added to, and the import.
UPWARD = {
    "wire -> transport (a wire-neutral helper using the outbox)": (
        "tts_server/wire/sink.py", "from tts_server.transport import outbox"),
    "wire -> engine": ("tts_server/wire/fields.py", "from tts_server.engine import synthesizer"),
    "wire -> session": ("tts_server/wire/errors.py", "from tts_server.session import options"),
    "transport -> a family": ("tts_server/transport/dialect.py", "from tts_server.families.canonical import events"),
    "session -> transport": ("tts_server/session/engine.py", "from tts_server.transport import outbox"),
    "admission -> session": ("tts_server/admission.py", "from tts_server.session import engine"),
    "engine -> scheduler": ("tts_server/engine/runner.py", "from tts_server import scheduler"),
    "one family -> another": ("tts_server/families/bulbul/http.py", "from tts_server.families.blog import tokens"),
    "the canonical family -> another": ("tts_server/families/canonical/http.py",
                                        "from tts_server.families.openai import fields"),
    "server -> client": ("tts_server/session/renderer.py", "import tts_client.session"),
    "client -> server": ("tts_client/session.py", "import tts_server.wire.errors"),
    "text -> client": ("tts_text/chunker.py", "import tts_client.events"),
    "formats -> server": ("tts_formats/__init__.py", "import tts_server.audio.encoders"),
}


@pytest.fixture(scope="module")
def copy_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("contracts")


@pytest.mark.parametrize("case", sorted(UPWARD))
def test_an_upward_import_breaks_a_contract(copy_root, case):
    module, line = UPWARD[case]
    root = copy_root / case.split(" ")[0].replace(">", "").strip("-") / str(abs(hash(case)))
    for name, source in PACKAGES.items():
        shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__", "static"))
    target = root / module
    target.write_text(target.read_text() + f"\n{line}  # upward, on purpose\n")
    result = lint(root, root)
    assert result.returncode != 0, f"{case}: no contract broke\n{result.stdout}"
    assert "BROKEN" in result.stdout
