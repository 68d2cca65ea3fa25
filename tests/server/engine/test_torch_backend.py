"""The PyTorch engine's model as loaded: its weight norm folded once, its output kokoro's own."""

import json
from pathlib import Path

import numpy as np
import torch
from cores import ENGINE_THREADS

from tts_server.engine.model_dir import ModelDir
from tts_server.engine.torch_backend import REPO_ID, TorchBackend


def test_weight_norm_is_folded_at_load_and_the_audio_is_kokoros_bit_for_bit(model_dir):
    from kokoro import KModel

    backend = TorchBackend(ModelDir(Path(model_dir)), device="cpu", threads=ENGINE_THREADS)
    assert not [name for name, module in backend.model.named_modules()
                if hasattr(module, "weight_g") or torch.nn.utils.parametrize.is_parametrized(module)]
    config = json.loads((Path(model_dir) / "config.json").read_text())
    kokoro = KModel(repo_id=REPO_ID, config=config, model=str(Path(model_dir) / "kokoro-v1_0.pth")).eval()
    assert any(hasattr(module, "weight_g") for module in kokoro.modules()), "kokoro no longer uses weight norm"
    ids, style = [50, 83, 156, 43, 102, 16, 61], backend.voices[sorted(backend.voices)[0]][7]
    outputs = []
    for model in (kokoro, backend.model):
        torch.manual_seed(3)
        with torch.inference_mode():
            audio, durations = model.forward_with_tokens(torch.tensor([[0, *ids, 0]]),
                                                         torch.from_numpy(style).reshape(1, 256), 1.0)
        outputs.append((audio.numpy(), durations.numpy()))
    np.testing.assert_array_equal(outputs[0][1], outputs[1][1])
    np.testing.assert_array_equal(outputs[0][0], outputs[1][0])
