"""The PyTorch engine from the converted weights is as intelligible as the embedded ONNX one:
Japanese transcribed by the offline Whisper listener (../shared/asr), character error rate
within 0.05 of the ONNX engine's on the same sentences."""

import sys
from pathlib import Path

import pytest
from cores import ENGINE_THREADS

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
import intelligibility

pytestmark = pytest.mark.skipif(
    not intelligibility.listener_ready(),
    reason=f"the Whisper listener is not set up (bash {intelligibility.ASR}/setup.sh; .ci/run does it)",
)


@pytest.mark.timeout(1200)
def test_japanese_cer_of_the_torch_engine_is_within_five_points_of_onnx(model_dir):
    onnx = intelligibility.score("onnx", None, ["ja"], ["wav"], threads=ENGINE_THREADS)[0]["cer"]
    torch = intelligibility.score("torch", str(model_dir), ["ja"], ["wav"], threads=ENGINE_THREADS)[0]["cer"]
    assert onnx < 0.25, f"the reference engine itself should be intelligible (CER {onnx:.3f})"
    assert torch <= onnx + 0.05, f"torch CER {torch:.3f} against onnx {onnx:.3f}"
