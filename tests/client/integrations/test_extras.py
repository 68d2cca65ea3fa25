"""The framework extras as a developer installs them: `.[pipecat]` beside `pipecat-ai[sagemaker]`
(Deepgram STT on SageMaker, the usual pairing) resolves without a conflict, and each
integration imports without the other framework.

The resolution is pip's own (`pip install --dry-run --ignore-installed`, as into an empty
environment) against the package index; where the index cannot be reached the test says so
and skips, rather than passing."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from package_index import run_pip

REPO = Path(__file__).resolve().parents[3]
PIPECAT = "pipecat-ai[sagemaker]==1.14.0"


def resolve(tmp_path: Path, *requirements: str) -> dict[str, str]:
    """name -> version of everything pip would install for `requirements`, into nothing."""
    report = tmp_path / "report.json"
    run_pip("install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report), *requirements, cwd=REPO)
    installs = json.loads(report.read_text())["install"]
    return {re.sub(r"[-_.]+", "-", item["metadata"]["name"]).lower(): item["metadata"]["version"] for item in installs}


def test_the_pipecat_extra_installs_beside_pipecats_own_sagemaker_extra(tmp_path):
    versions = resolve(tmp_path, f"{REPO}[pipecat]", PIPECAT)
    assert versions["pipecat-ai"] == "1.14.0" and "tts-client" in versions
    # Pipecat's extra caps the SDK below 0.10; ours accepts that line, and the transport speaks it.
    assert versions["aws-sdk-sagemaker-runtime-http2"].startswith("0.9.")


def test_both_frameworks_install_together_with_the_newest_sdk(tmp_path):
    versions = resolve(tmp_path, f"{REPO}[pipecat,livekit]")
    assert versions["livekit-agents"].startswith("1.8.") and versions["pipecat-ai"].startswith("1.14.")
    assert versions["aws-sdk-sagemaker-runtime-http2"] == "0.12.0"


@pytest.mark.parametrize("module, framework, other", [
    ("tts_client.integrations.pipecat", "pipecat", "livekit"),
    ("tts_client.integrations.livekit", "livekit", "pipecat"),
])
def test_each_integration_imports_without_the_other_framework(module, framework, other):
    pytest.importorskip(framework)
    probe = (f"import sys, {module}\n"
             f"loaded = sorted(m for m in sys.modules if m == {other!r} or m.startswith({other + '.'!r}))\n"
             "print(loaded)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"
