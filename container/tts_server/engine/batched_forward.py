"""Batched Kokoro-82M inference over the modules of one loaded KModel (no weights copied).

kokoro 0.9.4's KModel.forward_with_tokens runs one sequence. forward_batch runs rows of
different lengths, voices and speeds together, in two halves with one host read between
them (the longest row's frame count):
  1. ALBERT (attention mask), duration encoder and duration LSTM over each row's tokens
     -> durations; alignment by cumsum + searchsorted per row;
  2. F0/energy and text encoder over each row's frames -> the decoder (batched_decoder).
Every row gets the durations it gets alone and, with its harmonic-source draws seeded,
the audio it gets alone (within float rounding): tests/server/engine/test_batched_forward.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .batched_decoder import decode
from .batched_layers import adain_res_stack, frame_mask, packed_lstm

STYLE_DIM = 256
Item = tuple[Sequence[int], "np.ndarray | Tensor", float]  # token ids (no pads), style row, speed


@dataclass(frozen=True)
class Prosody:
    """The first half's output for B rows: what the decoder needs, padded, zero past each row."""

    durations: Tensor  # (B, T) long per token, pads included; zero past each row's tokens
    tokens: Tensor  # (B,) tokens per row, pads included
    frames: Tensor  # (B,) duration units per row: audio is 600 * frames samples
    asr: Tensor  # (B, 512, F) text encoder output per frame
    f0: Tensor  # (B, 2F) pitch curve
    energy: Tensor  # (B, 2F)
    styles: Tensor  # (B, 256)


def forward_batch(model, items: Sequence[Item], *, seeds: Sequence[int] | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Rows (token ids without pads, style (256,), speed) -> per row (audio float32 at 24 kHz,
    durations int64 of len(ids) + 2, pads included); len(audio) == 600 * durations.sum().

    seeds: one per row; row b's random initial phases and noise then equal those of
    `torch.manual_seed(seeds[b])` followed by model.forward_with_tokens on that row alone.
    """
    prosody = predict(model, items)
    audio = render(model, prosody, seeds=seeds).float().cpu().numpy()
    durations = prosody.durations.cpu().numpy()
    counts = prosody.frames.cpu().numpy() * 600
    tokens = prosody.tokens.cpu().numpy()
    return [
        (audio[row, : counts[row]].copy(), durations[row, : tokens[row]].copy())
        for row in range(len(items))
    ]


def predict(model, items: Sequence[Item]) -> Prosody:
    """The first half: durations, then pitch, energy and text features per frame of each row."""
    device = model.device
    ids, lengths, styles, speeds = _inputs(items, device, model.context_length - 2)
    with torch.inference_mode():
        text_mask = torch.arange(ids.shape[1], device=device)[None, :] >= lengths[:, None]
        d, durations = _durations(model, ids, lengths, text_mask, styles, speeds)
        frames = durations.sum(dim=1)
        total = int(frames.max())  # the one host read: the frame axis of the second half
        index = _alignment(durations, total)
        mask = frame_mask(frames, total)
        en = _gather(d.transpose(1, 2), index) * mask
        f0, energy = _f0_energy(model.predictor, en, styles[:, 128:], frames)
        asr = _gather(model.text_encoder(ids, lengths, text_mask), index) * mask
    return Prosody(durations, lengths, frames, asr, f0, energy, styles)


def render(model, prosody: Prosody, *, seeds: Sequence[int] | None = None) -> Tensor:
    """The second half: decoder and vocoder -> audio (B, 600 F), zero past each row's 600 * frames."""
    if seeds is not None and len(seeds) != len(prosody.frames):
        raise ValueError(f"seeds: {len(seeds)} given for {len(prosody.frames)} rows (one per row)")
    p = prosody
    with torch.inference_mode():
        return decode(model.decoder, p.asr, p.f0, p.energy, p.styles[:, :128], p.frames, seeds)


def _inputs(items: Sequence[Item], device, max_tokens: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    if not items:
        raise ValueError("items: empty batch (give at least one (token ids, style, speed))")
    rows = []
    for position, (token_ids, _, speed) in enumerate(items):
        if not 1 <= len(token_ids) <= max_tokens:
            raise ValueError(f"items[{position}] token ids: {len(token_ids)} given, 1 to {max_tokens} accepted")
        if not speed > 0:
            raise ValueError(f"items[{position}] speed: {speed} given, a positive number accepted")
        rows.append([0, *token_ids, 0])
    width = max(map(len, rows))
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    for row, tokens in enumerate(rows):
        ids[row, : len(tokens)] = torch.tensor(tokens)
    styles = torch.stack([_style(style, position) for position, (_, style, _) in enumerate(items)])
    speeds = torch.tensor([float(speed) for _, _, speed in items], dtype=torch.float32)
    lengths = torch.tensor([len(tokens) for tokens in rows])
    return ids.to(device), lengths.to(device), styles.to(device), speeds.to(device)


def _style(style, position: int) -> Tensor:
    values = torch.as_tensor(np.asarray(style.cpu() if isinstance(style, Tensor) else style, dtype=np.float32))
    if values.numel() != STYLE_DIM:
        raise ValueError(f"items[{position}] style: {values.numel()} values given, {STYLE_DIM} accepted")
    return values.reshape(STYLE_DIM)


def _durations(model, ids: Tensor, lengths: Tensor, text_mask: Tensor, styles: Tensor,
               speeds: Tensor) -> tuple[Tensor, Tensor]:
    """-> duration encoder output d (B, T, 640), durations (B, T) long, zero on padding."""
    bert = model.bert(ids, attention_mask=(~text_mask).int())
    d_en = model.bert_encoder(bert).transpose(-1, -2)
    d = model.predictor.text_encoder(d_en, styles[:, 128:], lengths, text_mask)
    x = packed_lstm(model.predictor.lstm, d, lengths)
    duration = torch.sigmoid(model.predictor.duration_proj(x)).sum(dim=-1) / speeds[:, None]
    durations = torch.round(duration).clamp(min=1).long()
    return d, durations.masked_fill(text_mask, 0)


def _alignment(durations: Tensor, total: int) -> Tensor:
    """(B, T) durations -> (B, total) token index of every frame (kokoro's one-hot alignment as indices)."""
    ends = durations.cumsum(dim=1)
    steps = torch.arange(total, device=durations.device).expand(durations.shape[0], total).contiguous()
    return torch.searchsorted(ends, steps, right=True).clamp(max=durations.shape[1] - 1)


def _gather(x: Tensor, index: Tensor) -> Tensor:
    """(B, C, T) per token, (B, F) token index -> (B, C, F): exactly x @ one-hot alignment."""
    return torch.gather(x, 2, index[:, None, :].expand(-1, x.shape[1], -1))


def _f0_energy(predictor, en: Tensor, s: Tensor, frames: Tensor) -> tuple[Tensor, Tensor]:
    """kokoro ProsodyPredictor.F0Ntrain over each row's frames -> F0, N (B, 2F), zero past 2*frames."""
    x = packed_lstm(predictor.shared, en.transpose(1, 2), frames).transpose(1, 2)
    mask = frame_mask(frames, en.shape[2])
    mask2 = frame_mask(2 * frames, 2 * en.shape[2])
    f0 = predictor.F0_proj(adain_res_stack(predictor.F0, x, s, mask, mask2)) * mask2
    n = predictor.N_proj(adain_res_stack(predictor.N, x, s, mask, mask2)) * mask2
    return f0.squeeze(1), n.squeeze(1)
