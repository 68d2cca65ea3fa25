"""A speech span's instance-norm statistics weighted to its piece's share of silence, a first
window's with a short lead to the whole lead's, and statistics recorded from one decode and given
to another (engine/span_norm.py); on the real model: tests/server/engine/test_windows.py."""

import numpy as np
import pytest
import torch

from tts_server.engine.speech_span import SPEECH_ENERGY
from tts_server.engine.span_norm import FrameWeights, SpanNorm, Statistics, WeightsHolder, install

SILENT, SPOKEN = SPEECH_ENERGY - 4, SPEECH_ENERGY + 7


def energy(pattern: str) -> np.ndarray:
    """'.' a frame of the model's silence, 'a' a frame of speech."""
    return np.array([SILENT if c == "." else SPOKEN for c in pattern], dtype=np.float32)


def test_only_a_decode_of_all_the_speech_and_some_of_the_silence_is_weighted():
    piece = energy("....aaaaaaaaaaaa........")  # 12 of 24 frames silent
    assert FrameWeights.for_frames(piece, 24, 0, 24) is None, "the whole piece: the stock statistics are its own"
    assert FrameWeights.for_frames(None, 24, 2, 18) is None, "no energy: nothing to tell silence by"
    assert FrameWeights.for_frames(piece, 24, 2, 10) is None, "a first window: part of the speech"
    assert FrameWeights.for_frames(piece, 24, 10, 24) is None, "a last window"
    assert FrameWeights.for_frames(piece, 24, 4, 16) is None, "the speech alone: no silence to weight"
    weights = FrameWeights.for_frames(piece, 24, 2, 18)  # a speech span
    assert weights.share == 0.5 and weights.silent.tolist() == [True] * 2 + [False] * 12 + [True] * 2


def test_a_first_window_from_part_of_the_lead_counts_its_silence_as_the_whole_leads():
    piece = energy("........aaaaaaaaaaaaaaaa........")  # a lead of 8 silent frames, then 16 of speech
    assert FrameWeights.for_frames(piece, 32, 0, 14, lead_from=0) is None, "the whole lead: the stock statistics"
    assert FrameWeights.for_frames(piece, 32, 4, 14) is None, "no lead asked for: the stock statistics"
    assert FrameWeights.for_frames(piece, 32, 10, 20, lead_from=0) is None, "a later window: no silence in it"
    weights = FrameWeights.for_frames(piece, 32, 4, 14, lead_from=0)  # 4 of the lead's frames decoded
    assert weights.silent.tolist() == [True] * 4 + [False] * 6
    assert weights.share == 8 / 14, "as the window from the lead's start holds it: 8 silent frames of 14"
    assert FrameWeights.for_frames(piece, 32, 4, 14, lead_from=2).share == 6 / 12


def test_each_resolution_weights_silence_at_its_share_of_the_piece():
    weights = FrameWeights(np.array([True, True, False, False, False, True, False, False]), share=0.5)
    for per_frame in (1, 2, 20, 120):
        at = weights.at(8 * per_frame)
        assert at.runs == [(0, 2 * per_frame), (5 * per_frame, 6 * per_frame)]
        silent_steps = 3 * per_frame
        assert at.silent * silent_steps == pytest.approx(0.5) and at.spoken * (8 * per_frame - silent_steps) == pytest.approx(0.5)
    odd = weights.at(8 * 120 + 1)  # the generator's last stage has one step more than 120 a frame
    assert abs(sum(stop - start for start, stop in odd.runs) - 3 * 120) <= 1 and odd.runs[0][0] == 0
    assert FrameWeights(np.array([True, False]), share=0.5).at(1) is None, "one step cannot hold both"


@pytest.fixture
def norm():
    torch.manual_seed(0)
    stock = torch.nn.InstanceNorm1d(16, affine=True)
    torch.nn.init.normal_(stock.weight)
    torch.nn.init.normal_(stock.bias)
    holder = WeightsHolder()
    return stock, holder, SpanNorm(stock, holder, 0)


@torch.inference_mode()
def test_without_weights_or_at_the_windows_own_share_it_is_the_stock_norm(norm):
    stock, holder, window = norm
    x = torch.randn(1, 16, 600) * 3 + 5
    assert torch.equal(window(x), stock(x)), "no window being decoded: the stock norm itself"
    silent = np.array([True] * 6 + [False] * 24)
    holder.weights = FrameWeights(silent, share=6 / 30)
    assert torch.allclose(window(x), stock(x), atol=1e-5)


@torch.inference_mode()
def test_silence_counts_for_the_pieces_share_in_the_statistics(norm):
    stock, holder, window = norm
    x = torch.randn(1, 16, 600) * 3 + 5
    x[..., :120] *= 0.01  # the silent steps: near zero, as the model's silence is
    silent = np.array([True] * 6 + [False] * 24)
    holder.weights = FrameWeights(silent, share=0.5)
    w = torch.from_numpy(np.where(np.repeat(silent, 20), 0.5 / 120, 0.5 / 480).astype(np.float32))
    mean = (x * w).sum(-1, keepdim=True)
    var = ((x - mean) ** 2 * w).sum(-1, keepdim=True)
    expected = (x - mean) / torch.sqrt(var + stock.eps) * stock.weight[:, None] + stock.bias[:, None]
    assert torch.allclose(window(x), expected, atol=1e-4)
    assert not torch.allclose(window(x), stock(x), atol=1e-2), "a different share: different statistics"


@torch.inference_mode()
def test_statistics_recorded_from_one_decode_normalise_another_as_they_did_the_first(norm):
    """A reference decode records each norm's mean and variance; a window given them is normalised
    with those, not its own: its steps come out as the same steps did in the reference."""
    stock, holder, window = norm
    reference = torch.randn(1, 16, 600) * 3 + 5
    holder.recording = [None]
    assert torch.allclose(window(reference), stock(reference), atol=1e-5), "recording changes nothing"
    mean, variance = holder.recording[0]
    assert torch.allclose(mean, reference.mean(-1, keepdim=True)) and mean.shape == (1, 16, 1)
    assert torch.allclose(variance, reference.var(-1, keepdim=True, unbiased=False))
    holder.recording, holder.given = None, Statistics(((mean, variance),))
    part = reference[..., 100:160]  # a window of the reference: its own statistics differ from the whole's
    assert torch.allclose(window(part), stock(reference)[..., 100:160], atol=1e-4)
    assert not torch.allclose(stock(part), stock(reference)[..., 100:160], atol=1e-2)


def test_install_numbers_the_norms_in_the_order_a_decode_runs_them():
    decoder = torch.nn.Sequential(torch.nn.InstanceNorm1d(4), torch.nn.Sequential(torch.nn.InstanceNorm1d(6)))
    holder = install(decoder)
    assert holder.norms == 2 and [decoder[0].index, decoder[1][0].index] == [0, 1]
    holder.recording = [None, None]
    with torch.inference_mode():
        decoder[0](torch.randn(1, 4, 50))
        decoder[1](torch.randn(1, 6, 50))
    assert [mean.shape[1] for mean, _ in holder.recording] == [4, 6]


def test_install_swaps_every_instance_norm_for_one_with_its_parameters():
    torch.manual_seed(0)
    decoder = torch.nn.Sequential(torch.nn.Conv1d(4, 4, 3), torch.nn.Sequential(torch.nn.InstanceNorm1d(4, affine=True)))
    torch.nn.init.normal_(decoder[1][0].weight)
    before = decoder[1][0].weight.detach().clone()
    holder = install(decoder)
    swapped = decoder[1][0]
    assert isinstance(swapped, SpanNorm) and swapped.holder is holder and holder.weights is None
    assert torch.equal(swapped.weight.detach(), before)
