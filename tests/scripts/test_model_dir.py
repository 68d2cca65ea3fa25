"""`make model-dir`: the int8 ONNX export converted into the layout the endpoint loads.

The converted directory comes from the session fixture `converted_model_dir` (the script
run as a subprocess). The PyTorch side is kokoro 0.9.4's own KModel; the reference is
the server's ONNX engine on the same token ids, style and speed.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from cores import ENGINE_THREADS
from converted_model import SCRIPT

from stacks.model_cache.pinned_files import local_files
from tts_server.engine.backend import SAMPLES_PER_DURATION_UNIT
from tts_server.engine.g2p.japanese import JapaneseG2P
from tts_server.engine.onnx_backend import OnnxBackend

PARTS = {"bert", "bert_encoder", "predictor", "text_encoder", "decoder"}
VOICES = {"jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"}
CORPUS = [  # (text, voice): short, so that the full model runs on 2 cores within the test timeout
    ("こんにちは、今日はいい天気ですね。", "jf_alpha"),
    ("明日の会議は午後3時からです。", "jf_nezumi"),
    ("本当にそれでいいのですか？", "jf_tebukuro"),
    ("ネコがソファの上でぐっすり眠っている。", "jm_kumo"),
]
# Building kokoro's modules warns about LSTM dropout and the deprecated weight_norm API.
pytestmark = [pytest.mark.filterwarnings("ignore:dropout option adds dropout"),
              pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")]


@pytest.fixture(scope="module")
def kmodel(converted_model_dir):
    from kokoro.model import KModel

    return KModel(repo_id="hexgrad/Kokoro-82M", config=str(converted_model_dir / "config.json"),
                  model=str(converted_model_dir / "kokoro-v1_0.pth")).eval()


@pytest.fixture(scope="module")
def model_dir_script():
    """scripts/model_dir.py as a module, to run its build in this process."""
    spec = importlib.util.spec_from_file_location("model_dir_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def onnx_backend():
    return OnnxBackend(threads=ENGINE_THREADS)


def test_kmodel_loads_every_part_with_strict_key_matching(converted_model_dir, kmodel):
    # KModel itself falls back to strict=False on a mismatch, silently: load strictly here.
    state = torch.load(converted_model_dir / "kokoro-v1_0.pth", map_location="cpu", weights_only=True)
    assert set(state) == PARTS
    for part, tensors in state.items():
        result = getattr(kmodel, part).load_state_dict(tensors, strict=True)
        assert not result.missing_keys and not result.unexpected_keys
        assert all(t.dtype == torch.float32 and torch.isfinite(t).all() for t in tensors.values()), part
    assert sum(len(tensors) for tensors in state.values()) == 688


def test_config_is_kokoros_with_the_exports_vocab(converted_model_dir, onnx_backend):
    config = json.loads((converted_model_dir / "config.json").read_text(encoding="utf-8"))
    assert config["vocab"] == dict(onnx_backend.vocab)
    assert (config["n_token"], config["hidden_dim"], config["style_dim"]) == (178, 512, 128)
    assert {"istftnet", "plbert", "max_dur", "n_layer", "n_mels", "text_encoder_kernel_size"} <= set(config)


def test_voices_are_the_embedded_packs_shaped_like_kokoros(converted_model_dir, onnx_backend):
    paths = sorted((converted_model_dir / "voices").glob("*.pt"))
    assert {p.stem for p in paths} == VOICES
    for path in paths:
        pack = torch.load(path, weights_only=True)
        assert pack.shape == (510, 1, 256) and pack.dtype == torch.float32
        np.testing.assert_array_equal(pack.reshape(510, 256).numpy(), onnx_backend.voices[path.stem])


def test_sha256sums_is_the_manifest_the_model_cache_stack_writes(converted_model_dir):
    manifest = (converted_model_dir / "SHA256SUMS").read_text()
    assert all(re.fullmatch(r"[0-9a-f]{64}  \S+", line) for line in manifest.splitlines())
    # The handler writes "<sha256>  <path>\n" per file, sorted by path; the digests here
    # are the stack's own, computed by the code that pins a local model directory.
    files = [f for f in local_files(converted_model_dir) if f["Path"] != "SHA256SUMS"]
    assert manifest == "".join(f"{f['Sha256']}  {f['Path']}\n" for f in sorted(files, key=lambda f: f["Path"]))
    assert {f["Path"] for f in files} == {"config.json", "kokoro-v1_0.pth", *(f"voices/{v}.pt" for v in VOICES)}


def test_a_rerun_rewrites_only_what_changed_and_then_nothing(converted_model_dir, model_dir_script, tmp_path, capsys):
    # The script's build in this process (the fixture already ran it as a subprocess): a second
    # interpreter would cost its imports twice more. Its bytes equal the subprocess's, or the
    # repair below would rewrite more than the damaged file.
    converted = Path(shutil.copytree(converted_model_dir, tmp_path / "model-dir"))  # the run's own is read only

    def mtimes():
        return {p: p.stat().st_mtime_ns for p in converted.rglob("*") if p.is_file()}

    voice = converted / "voices" / "jm_kumo.pt"
    data = bytearray(voice.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte damaged: its digest no longer matches
    voice.write_bytes(bytes(data))
    before = mtimes()
    capsys.readouterr()
    model_dir_script.build(converted)
    repaired = capsys.readouterr().out
    assert "wrote 1 of 8 files" in repaired and "voices/jm_kumo.pt" in repaired
    after = mtimes()
    assert [p for p in before if before[p] != after[p]] == [voice]

    model_dir_script.build(converted)
    assert "up to date: 8 files, nothing rewritten" in capsys.readouterr().out
    assert mtimes() == after
    assert model_dir_script.layout.verify(converted) == []


def _dbfs(audio: np.ndarray) -> float:
    return 20 * np.log10(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))


def test_durations_agree_with_the_onnx_engine_within_one_unit(kmodel, onnx_backend):
    g2p = JapaneseG2P()
    differences = []
    for text, voice in CORPUS:
        ids = [onnx_backend.vocab[c] for span in g2p(text) for c in span.phonemes if c in onnx_backend.vocab]
        style = onnx_backend.voices[voice][len(ids) - 1]
        reference = onnx_backend.infer(ids, style, 1.0)
        audio, durations = kmodel.forward_with_tokens(torch.LongTensor([[0, *ids, 0]]),
                                                      torch.from_numpy(style).reshape(1, 256), 1.0)
        audio, durations = audio.numpy(), durations.numpy()
        assert len(durations) == len(ids) + 2
        assert len(audio) == SAMPLES_PER_DURATION_UNIT * durations.sum(), text
        assert np.isfinite(audio).all()
        # int8 vs fp32 weights: same loudness within a few dB (the fp32 model is quieter).
        assert abs(_dbfs(audio) - _dbfs(reference.audio)) < 6, text
        differences.append(np.abs(durations - reference.durations))
    differences = np.concatenate(differences)
    assert differences.max() <= 1
    assert np.mean(differences == 0) >= 0.9
