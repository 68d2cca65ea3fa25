"""The converted weights directory (`make model-dir`): the deployed layout, built from the
int8 ONNX export, so the PyTorch engine runs and is tested on the CPU without AWS.

Import it as `from model_dir_fixture import converted_model_dir` (see running_server.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO / ".cache" / "model-dir"


def converted_model_dir() -> Path:
    """MODEL_DIR_FOR_TESTS or .cache/model-dir, converted first when it is not there yet."""
    path = Path(os.environ.get("MODEL_DIR_FOR_TESTS", DEFAULT))
    if not (path / "SHA256SUMS").is_file():
        subprocess.run([sys.executable, str(REPO / "scripts" / "model_dir.py"), str(path)], check=True)
    return path
