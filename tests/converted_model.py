"""The deployed model layout converted from the embedded ONNX export, for PyTorch-engine tests.

`make model-dir`'s script, run as a user runs it (a subprocess); the session fixture
`converted_model_dir` (tests/conftest.py) converts once per test run into a temporary
directory (about 10 s on 2 cores), which the PyTorch engine's tests then serve from.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "model_dir.py"


def convert_model_dir(output: Path, *args: str) -> subprocess.CompletedProcess:
    process = subprocess.run([sys.executable, str(SCRIPT), str(output), *args],
                             capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stdout + process.stderr
    return process

