"""The decoder half of the batched forward: kokoro's Decoder and iSTFTNet Generator over
padded rows, each row ending where its own audio ends.

Lengths are per row in decoder frames (2 per duration unit); the generator's sample count
is 300 per decoder frame, its STFT frame count one more than samples / hop. Past its end a
row's F0 is zero, so its harmonic source's phase holds still there (batch-1 interpolation
clamps at the last frame: the same value), and the STFT/iSTFT pad and normalise at each
row's own end.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .batched_layers import adain_res_blk, adain_res_block1, frame_mask, leaky


def decode(decoder: nn.Module, asr: Tensor, f0: Tensor, n: Tensor, s: Tensor, frames: Tensor,
           seeds: Sequence[int] | None = None) -> Tensor:
    """asr (B, 512, T), f0/n (B, 2T) zero past 2*frames, s (B, 128) -> audio (B, 600 T), zero past each row."""
    mask = frame_mask(frames, asr.shape[2])
    mask2 = frame_mask(2 * frames, 2 * asr.shape[2])
    f0_down = decoder.F0_conv(f0[:, None]) * mask
    n_down = decoder.N_conv(n[:, None]) * mask
    x = adain_res_blk(decoder.encode, torch.cat([asr, f0_down, n_down], dim=1), s, mask, mask)
    asr_res = decoder.asr_res(asr) * mask
    residual = True
    for block in decoder.decode:
        if residual:
            x = torch.cat([x, asr_res, f0_down, n_down], dim=1)
        upsamples = block.upsample_type != "none"
        x = adain_res_blk(block, x, s, mask, mask2 if upsamples else mask)
        if upsamples:  # kokoro feeds the residual inputs up to the upsampling block only
            residual, mask = False, mask2
    return generate(decoder.generator, x, s, f0, 2 * frames, seeds)


def generate(gen: nn.Module, x: Tensor, s: Tensor, f0: Tensor, frames: Tensor,
             seeds: Sequence[int] | None) -> Tensor:
    """kokoro Generator.forward over rows of `frames` (B,) input frames each."""
    stft = gen.stft
    n_fft, hop = stft.filter_length, stft.hop_length
    scale = round(gen.f0_upsamp.scale_factor)
    samples = frames * scale
    f0_up = gen.f0_upsamp(f0[:, None]).transpose(1, 2)  # (B, samples, 1)
    har_source = harmonic_source(gen.m_source, f0_up, samples, seeds)
    har = spectrum(har_source, samples, stft)
    har_frames = samples // hop + 1
    lengths = frames
    for i in range(gen.num_upsamples):
        x = leaky(x, 0.1)
        up = gen.ups[i]
        lengths = lengths * up.stride[0] + (1 if i == gen.num_upsamples - 1 else 0)
        x_source = gen.noise_convs[i](har)
        mask = frame_mask(lengths, x_source.shape[2])
        x_source = adain_res_block1(gen.noise_res[i], x_source, s, mask)
        x = up(x)
        if i == gen.num_upsamples - 1:
            x = gen.reflection_pad(x)
        x = (x + x_source) * mask
        xs = sum(adain_res_block1(gen.resblocks[i * gen.num_kernels + j], x, s, mask)
                 for j in range(gen.num_kernels))
        x = xs / gen.num_kernels
    assert torch.equal(lengths, har_frames), "generator frames and STFT frames disagree"
    x = gen.conv_post(leaky(x, 0.01))
    bins = n_fft // 2 + 1
    return inverse_spectrum(torch.exp(x[:, :bins]), torch.sin(x[:, bins:]), har_frames, stft)


def harmonic_source(source: nn.Module, f0: Tensor, samples: Tensor, seeds: Sequence[int] | None) -> Tensor:
    """kokoro SourceModuleHnNSF + SineGen over rows; f0 (B, S, 1) -> (B, S) excitation.

    The random initial phases and noise are the only random draws of the whole forward.
    With seeds, row b draws them from its own generator in kokoro's order and shapes for a
    batch of one, so it reproduces `torch.manual_seed(seeds[b])` + forward_with_tokens.
    """
    gen = source.l_sin_gen
    rows, length, _ = f0.shape
    fn = f0 * torch.arange(1, gen.dim + 1, device=f0.device, dtype=f0.dtype)
    rad = (fn / gen.sampling_rate) % 1
    initial, noise = _draws(rows, length, gen.dim, samples, seeds, f0.device)
    initial[:, 0] = 0  # no random phase for the fundamental
    rad[:, 0, :] = rad[:, 0, :] + initial
    up = gen.upsample_scale
    rad = F.interpolate(rad.transpose(1, 2), scale_factor=1 / up, mode="linear").transpose(1, 2)
    phase = torch.cumsum(rad, dim=1) * 2 * torch.pi
    phase = F.interpolate(phase.transpose(1, 2) * up, scale_factor=up, mode="linear").transpose(1, 2)
    sines = torch.sin(phase) * gen.sine_amp
    uv = (f0 > gen.voiced_threshold).float()
    noise_amp = uv * gen.noise_std + (1 - uv) * gen.sine_amp / 3
    waves = sines * uv + noise_amp * noise
    return source.l_tanh(source.l_linear(waves)).squeeze(-1)


def _draws(rows: int, length: int, dim: int, samples: Tensor, seeds: Sequence[int] | None,
           device: torch.device) -> tuple[Tensor, Tensor]:
    if seeds is None:
        return torch.rand(rows, dim, device=device), torch.randn(rows, length, dim, device=device)
    initial = torch.zeros(rows, dim, device=device)
    noise = torch.zeros(rows, length, dim, device=device)
    for row, (seed, count) in enumerate(zip(seeds, samples.tolist(), strict=True)):
        rng = torch.Generator(device=device).manual_seed(int(seed))
        initial[row] = torch.rand(1, dim, generator=rng, device=device)[0]
        # kokoro's randn_like fills a transposed (1, count, dim) view; CPU fills those in another order
        buffer = torch.empty(1, dim, count, device=device).transpose(1, 2)
        noise[row, :count] = buffer.normal_(generator=rng)[0]
    return initial, noise


def spectrum(signal: Tensor, samples: Tensor, stft: nn.Module) -> Tensor:
    """torch.stft(center=True, reflect) of each row's own samples -> (B, 2*bins, frames), zero past each row."""
    n_fft, hop = stft.filter_length, stft.hop_length
    pad = n_fft // 2
    total = signal.shape[1]
    pos = torch.arange(-pad, total + pad, device=signal.device).abs()[None, :]
    last = (samples - 1)[:, None]
    index = torch.where(pos > last, 2 * last - pos, pos).clamp(0, total - 1)
    padded = torch.gather(signal, 1, index)
    window = stft.window.to(signal.device)
    spec = torch.stft(padded, n_fft, hop, stft.win_length, window=window, center=False, return_complex=True)
    mask = frame_mask(samples // hop + 1, spec.shape[2])
    return torch.cat([spec.abs(), spec.angle()], dim=1) * mask


def inverse_spectrum(magnitude: Tensor, phase: Tensor, frames: Tensor, stft: nn.Module) -> Tensor:
    """torch.istft(center=True) of each row's own frames -> (B, hop * (T - 1)), zero past each row."""
    n_fft, hop = stft.filter_length, stft.hop_length
    mask = frame_mask(frames, magnitude.shape[2])
    window = stft.window.to(magnitude.device)
    chunks = torch.fft.irfft(torch.polar(magnitude, phase), n=n_fft, dim=1) * window[None, :, None] * mask
    count = chunks.shape[2]
    size = n_fft + hop * (count - 1)
    fold = dict(output_size=(1, size), kernel_size=(1, n_fft), stride=(1, hop))
    signal = F.fold(chunks, **fold).reshape(-1, size)
    envelope = F.fold((window**2)[None, :, None] * mask, **fold).reshape(-1, size)
    signal = torch.where(envelope > 1e-11, signal / envelope.clamp_min(1e-11), torch.zeros_like(signal))
    pad = n_fft // 2
    signal = signal[:, pad : pad + hop * (count - 1)]
    return signal * frame_mask(hop * (frames - 1), signal.shape[1])[:, 0]
