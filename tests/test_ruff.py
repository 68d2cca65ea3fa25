"""ruff passes over the whole repository with pyproject.toml's rules, and those rules are the
ones it claims: a blind except, an unused import, a zip that may drop items and a noqa that
silences nothing each fail it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).parent / "ruff"


def ruff(*args: str, source: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(RUFF), "check", "--no-cache", "--output-format", "concise", *args], cwd=REPO,
                          input=source, capture_output=True, text=True, timeout=120)


def test_the_repository_passes_ruff():
    result = ruff(".")
    assert result.returncode == 0, result.stdout + result.stderr


FAULTS = {
    "BLE001": "def f():\n    try:\n        return 1\n    except Exception:\n        return 2\n",
    "F401": "import os\n",
    "B905": "def f(a, b):\n    return list(zip(a, b))\n",
    "RUF100": "import os  # noqa: E402\n\nprint(os.sep)\n",
}


@pytest.mark.parametrize("code", sorted(FAULTS))
def test_each_rule_catches_its_fault(code):
    result = ruff("--stdin-filename", "fault.py", "-", source=FAULTS[code])
    assert result.returncode == 1 and code in result.stdout, result.stdout + result.stderr


def test_a_blind_except_with_a_reason_passes():
    source = FAULTS["BLE001"].replace("except Exception:", "except Exception:  # noqa: BLE001 - a boundary")
    result = ruff("--stdin-filename", "fault.py", "-", source=source)
    assert result.returncode == 0, result.stdout
