"""Short runs of `make soak` and `make fuzz` (scripts/soak.py, scripts/fuzz.py) against the
shared real server: each script checks its own invariants and exits non-zero on a violation."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def run(script: str, server, *args: str) -> str:
    command = [sys.executable, str(REPO / "scripts" / script), "--url", server.http_url,
               "--pid", str(server.process.pid), *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=280)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_a_short_soak_is_clean(speech_server):
    out = run("soak.py", speech_server, "--sessions", "5", "--responses", "3", "--concurrency", "3",
              "--cancel-rate", "0.3", "--disconnect-rate", "0.3", "--seed", "3")
    assert "violations: 0" in out and out.rstrip().endswith("clean")
    assert "slots_after: {'syntheses': 0" in out


def test_a_short_fuzz_is_clean(speech_server):
    out = run("fuzz.py", speech_server, "--frames", "300")
    assert "problems: 0" in out and out.rstrip().endswith("clean")
    assert "frames_nested_json" in out and "http_400" in out
