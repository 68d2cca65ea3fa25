"""The batched forward against kokoro's own batch-1 forward, on the converted real weights.

Each row of a batch must get exactly its batch-1 durations, and its batch-1 audio: the
decoder given the same conditioning within float rounding, end to end within a spectral
distance far below what the harmonic source's noise alone makes between two solo renders
(the vocoder's phase amplifies a one-ulp change of F0 to ~1e-3 of audio). The harmonic
source's draws are seeded per row in both runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from cores import ENGINE_THREADS

from tts_server.engine.batched_forward import forward_batch, predict, render
from tts_server.engine.model_dir import ModelDir
from tts_server.engine.torch_backend import TorchBackend


class _Captured(Exception):
    pass


@pytest.fixture(scope="module")
def backend(model_dir):
    return TorchBackend(ModelDir(Path(model_dir)), device="cpu", threads=ENGINE_THREADS)


def _items(backend, specs):
    """specs: (token count, voice index, speed) -> items of seeded random phoneme ids."""
    rng = np.random.default_rng(sum(count for count, _, _ in specs))
    vocab = sorted(set(backend.vocab.values()))
    names = sorted(backend.voices)
    items = []
    for count, voice, speed in specs:
        ids = [int(i) for i in rng.choice(vocab, count)]
        items.append((ids, backend.voices[names[voice % len(names)]][min(count, 509)], speed))
    return items


_SOLOS: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def _solo(model, item, seed=0):
    """kokoro's batch-1 audio and durations, rendered once per item and seed (the orders share them)."""
    ids, style, speed = item
    key = (tuple(ids), np.asarray(style).tobytes(), speed, seed)
    if key not in _SOLOS:
        _SOLOS[key] = _render_solo(model, ids, style, speed, seed)
    return _SOLOS[key]


def _render_solo(model, ids, style, speed, seed):
    torch.manual_seed(seed)
    with torch.inference_mode():
        audio, durations = model.forward_with_tokens(
            torch.tensor([[0, *ids, 0]]), torch.from_numpy(np.asarray(style)).reshape(1, 256), speed
        )
    return audio.numpy().reshape(-1), durations.numpy().reshape(-1)


def _solo_conditioning(model, item):
    """kokoro's batch-1 decoder inputs (asr, F0, N) for one item, without running the vocoder."""
    captured = {}

    def capture(asr, f0, n, s):
        captured.update(asr=asr[0], f0=f0[0], n=n[0])
        raise _Captured

    ids, style, speed = item
    model.decoder.forward = capture
    try:
        with torch.inference_mode():
            model.forward_with_tokens(torch.tensor([[0, *ids, 0]]), torch.from_numpy(style).reshape(1, 256), speed)
    except _Captured:
        pass
    finally:
        del model.decoder.forward
    return captured


def _log_spectral_distance(a: np.ndarray, b: np.ndarray) -> float:
    spec = [torch.stft(torch.from_numpy(x), 512, 128, window=torch.hann_window(512), return_complex=True).abs()
            for x in (a, b)]
    return float((torch.log(spec[0] + 1e-5) - torch.log(spec[1] + 1e-5)).abs().mean())


def test_prosody_of_each_row_is_its_batch_one_prosody_short_and_near_510_tokens(backend):
    items = _items(backend, [(3, 0, 1.0), (508, 1, 1.25), (30, 2, 0.8)])
    prosody = predict(backend.model, items)
    for row, item in enumerate(items):
        solo = _solo_conditioning(backend.model, item)
        frames = int(prosody.frames[row])
        assert frames == solo["asr"].shape[1], f"row {row}: frame count differs from batch 1"
        torch.testing.assert_close(prosody.asr[row, :, :frames], solo["asr"], atol=1e-4, rtol=0)
        torch.testing.assert_close(prosody.f0[row, : 2 * frames], solo["f0"], atol=2e-2, rtol=1e-4)
        torch.testing.assert_close(prosody.energy[row, : 2 * frames], solo["n"], atol=2e-3, rtol=1e-4)
        assert not prosody.f0[row, 2 * frames :].any(), "padding past the row's frames is not zero"


def test_decoder_renders_each_row_as_kokoro_does_alone(backend):
    """Same conditioning in: the padded decoder/vocoder leaks nothing between rows."""
    items = _items(backend, [(6, 3, 1.0), (24, 4, 1.1), (2, 0, 0.9)])
    prosody = predict(backend.model, items)
    seeds = [11, 12, 13]
    audio = render(backend.model, prosody, seeds=seeds)
    for row, seed in enumerate(seeds):
        frames = int(prosody.frames[row])
        torch.manual_seed(seed)
        with torch.inference_mode():
            solo = backend.model.decoder(
                prosody.asr[row : row + 1, :, :frames], prosody.f0[row : row + 1, : 2 * frames],
                prosody.energy[row : row + 1, : 2 * frames], prosody.styles[row : row + 1, :128],
            ).reshape(-1)
        assert len(solo) == 600 * frames
        torch.testing.assert_close(audio[row, : len(solo)], solo, atol=1e-4, rtol=0)
        assert not audio[row, len(solo) :].any(), "audio past the row's end is not zero"


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0)])
def test_forward_batch_matches_forward_with_tokens_whatever_the_order(backend, order):
    base = _items(backend, [(12, 0, 1.2), (4, 2, 0.9), (20, 4, 1.0)])
    items = [base[i] for i in order]
    seeds = [100 + i for i in order]
    rows = forward_batch(backend.model, items, seeds=seeds)
    for item, seed, (audio, durations) in zip(items, seeds, rows, strict=True):
        solo_audio, solo_durations = _solo(backend.model, item, seed)
        np.testing.assert_array_equal(durations, solo_durations)
        assert len(durations) == len(item[0]) + 2
        assert audio.dtype == np.float32 and len(audio) == 600 * int(durations.sum()) == len(solo_audio)
        assert _log_spectral_distance(audio, solo_audio) < 0.02


def test_batch_of_one_matches_forward_with_tokens(backend):
    (item,) = _items(backend, [(9, 1, 1.0)])
    ((audio, durations),) = forward_batch(backend.model, [item], seeds=[5])
    solo_audio, solo_durations = _solo(backend.model, item, 5)
    np.testing.assert_array_equal(durations, solo_durations)
    assert _log_spectral_distance(audio, solo_audio) < 0.02


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([], "items: empty batch"),
        ([([], np.zeros(256, np.float32), 1.0)], r"items\[0\] token ids: 0 given, 1 to 510 accepted"),
        ([([5] * 511, np.zeros(256, np.float32), 1.0)], r"items\[0\] token ids: 511 given, 1 to 510 accepted"),
        ([([5], np.zeros(128, np.float32), 1.0)], r"items\[0\] style: 128 values given, 256 accepted"),
        ([([5], np.zeros(256, np.float32), 0.0)], r"items\[0\] speed: 0.0 given, a positive number accepted"),
    ],
)
def test_bad_items_are_refused_naming_the_field(backend, items, message):
    with pytest.raises(ValueError, match=message):
        forward_batch(backend.model, items)
