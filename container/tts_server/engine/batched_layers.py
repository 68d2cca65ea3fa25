"""Kokoro's normalised blocks run on padded batches: every row sees only its own frames.

Each function takes one of kokoro's modules (its weights, nothing copied) and a mask
(B, 1, T) that is 1.0 on a row's valid frames. Instance-norm statistics are taken over the
valid frames only, and the padded tail is set back to zero after every norm (beta refills
it) and before every conv (a conv reads its neighbours: batch-1 sees zeros past its end).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def frame_mask(lengths: Tensor, frames: int) -> Tensor:
    """(B,) valid lengths -> (B, 1, frames) float mask, 1.0 on each row's valid frames."""
    steps = torch.arange(frames, device=lengths.device)
    return (steps[None, :] < lengths[:, None]).unsqueeze(1).float()


def adain(norm: nn.Module, x: Tensor, s: Tensor, mask: Tensor) -> Tensor:
    """kokoro AdaIN1d: (1 + gamma(s)) * instance_norm(x) + beta(s), statistics per row's valid frames."""
    count = mask.sum(dim=2, keepdim=True)
    mean = (x * mask).sum(dim=2, keepdim=True) / count
    centred = (x - mean) * mask
    var = (centred * centred).sum(dim=2, keepdim=True) / count  # biased, as instance_norm
    inorm = norm.norm
    y = centred * torch.rsqrt(var + inorm.eps)
    if inorm.affine:
        y = y * inorm.weight[None, :, None] + inorm.bias[None, :, None]
    gamma, beta = norm.fc(s)[:, :, None].chunk(2, dim=1)
    return ((1 + gamma) * y + beta) * mask


def adain_res_blk(block: nn.Module, x: Tensor, s: Tensor, mask: Tensor, out_mask: Tensor) -> Tensor:
    """kokoro AdainResBlk1d (prosody predictor, decoder). out_mask differs from mask when it upsamples."""
    x = x * mask
    h = block.actv(adain(block.norm1, x, s, mask))
    h = block.pool(h) * out_mask  # the depthwise transposed conv adds its bias to the tail
    h = block.conv1(h)
    h = block.actv(adain(block.norm2, h, s, out_mask))
    h = block.conv2(h)
    shortcut = block.upsample(x)
    if block.learned_sc:
        shortcut = block.conv1x1(shortcut)
    return (h + shortcut) * torch.rsqrt(torch.tensor(2.0, device=x.device)) * out_mask


def adain_res_block1(block: nn.Module, x: Tensor, s: Tensor, mask: Tensor) -> Tensor:
    """kokoro AdaINResBlock1 (generator): three dilated conv pairs with Snake activations."""
    x = x * mask
    for c1, c2, n1, n2, a1, a2 in zip(
        block.convs1, block.convs2, block.adain1, block.adain2, block.alpha1, block.alpha2, strict=True
    ):
        h = adain(n1, x, s, mask)
        h = h + (1 / a1) * torch.sin(a1 * h) ** 2  # Snake keeps the zero tail at zero
        h = c1(h)
        h = adain(n2, h, s, mask)
        h = h + (1 / a2) * torch.sin(a2 * h) ** 2
        h = c2(h)
        x = (h + x) * mask
    return x


def packed_lstm(lstm: nn.LSTM, x: Tensor, lengths: Tensor) -> Tensor:
    """A bidirectional LSTM over (B, T, C) whose backward direction starts at each row's own end."""
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
    out, _ = lstm(packed)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out


def leaky(x: Tensor, slope: float) -> Tensor:
    return F.leaky_relu(x, negative_slope=slope)


def adain_res_stack(blocks: nn.ModuleList, x: Tensor, s: Tensor, mask: Tensor, mask2: Tensor) -> Tensor:
    """kokoro's predictor F0/N stacks: AdainResBlk1d in turn, the mask doubling at the upsampling one."""
    for block in blocks:
        upsamples = block.upsample_type != "none"
        x = adain_res_blk(block, x, s, mask, mask2 if upsamples else mask)
        if upsamples:
            mask = mask2
    return x
