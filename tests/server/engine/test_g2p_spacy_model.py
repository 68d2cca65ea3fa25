"""engine/g2p/spacy_model.py: English's spaCy loads without torch and transformers where the
engine has not imported them (the embedded engine's server), and speaks exactly as with them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TEXT = "Hello, Dr. Smith! It's 3:30 p.m. and I owe you $29.50."

SPEAK = f"""
import json, sys
from tts_server.engine.g2p.english import EnglishG2P
spans = EnglishG2P(british=True)({TEXT!r})
print(json.dumps({{"phonemes": [s.phonemes for s in spans],
                  "imported": sorted(m for m in ("torch", "transformers") if sys.modules.get(m) is not None)}}))
"""


def speak(before: str = "") -> dict:
    environment = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'container'}")
    run = subprocess.run([sys.executable, "-c", before + SPEAK], capture_output=True, text=True, env=environment,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_english_loads_without_torch_or_transformers_and_speaks_as_with_torch_loaded():
    lean = speak()
    assert lean["imported"] == []
    with_torch = speak("import torch\n")  # the PyTorch engine's server: torch is loaded first
    assert with_torch["imported"] == ["torch"]
    assert lean["phonemes"] == with_torch["phonemes"] and "".join(lean["phonemes"]).strip()
