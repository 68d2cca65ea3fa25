"""ONNX weights -> the five state dicts of kokoro's KModel (bert, bert_encoder, predictor,
text_encoder, decoder), every key with the shape a model built from config.json expects.

How the export changed the weights, and how each change is undone:
- names: initializers keep their module path under `encoder.` (bert, bert_encoder,
  predictor, text_encoder) or `decoder.decoder.` (decoder); the rest (`onnx::MatMul_123`,
  `/decoder/decoder/encode/Mul_output_0`) are named by the scope of the node that consumes
  them, e.g. `/encoder/F0.0/conv1/Conv_quant` -> predictor.F0.0.conv1 (F0/N/shared run
  outside the predictor's forward, so their scope lacks `predictor`).
- MatMul weights are [in, out]: transposed to Linear's [out, in].
- weight norm was folded into the conv weight W = g * v / ||v||: stored back as
  weight_v = W, weight_g = ||W|| per output channel; a channel that int8 quantization
  made all zero gets weight_v = 1, weight_g = 0 (still W = 0, and no 0/0 = NaN).
- LSTMs are [direction, in, 4*hidden] with gates i,o,f,c: split per direction,
  transposed, gates reordered to torch's i,f,g,o; the bias [Wb | Rb] is split in two.
- InstanceNorm affine weights/biases were folded away (kokoro keeps them at identity;
  see AdaIN1d in kokoro/istftnet.py): filled with 1 and 0. bert.pooler is unused by
  kokoro and absent from the export: filled with zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import torch

from .onnx_graph import QUANTIZED, OnnxExport

PARTS = ("bert", "bert_encoder", "predictor", "text_encoder", "decoder")
_MATMUL = ("MatMulInteger", "MatMul")
_CONV = ("ConvInteger", "Conv", "ConvTranspose")
_LSTM_GATES = (0, 2, 3, 1)  # torch's i,f,g,o as indices into ONNX's i,o,f,c


@dataclass
class Report:
    mapped: list[str] = field(default_factory=list)  # state-dict keys taken from the export
    filled: dict[str, str] = field(default_factory=dict)  # key -> what it was filled with
    unused: list[str] = field(default_factory=list)  # export tensors with no state-dict key
    patched_channels: dict[str, int] = field(default_factory=dict)  # conv -> zero channels

    def params(self, state: dict[str, torch.Tensor], keys: Iterable[str]) -> int:
        return sum(state[key].numel() for key in keys)


def skeleton(config: dict) -> dict[str, torch.nn.Module]:
    """The modules KModel.__init__ builds from config.json (without loading any weights)."""
    from kokoro.istftnet import Decoder
    from kokoro.modules import CustomAlbert, ProsodyPredictor, TextEncoder
    from transformers import AlbertConfig

    bert = CustomAlbert(AlbertConfig(vocab_size=config["n_token"], **config["plbert"]))
    return {
        "bert": bert,
        "bert_encoder": torch.nn.Linear(bert.config.hidden_size, config["hidden_dim"]),
        "predictor": ProsodyPredictor(style_dim=config["style_dim"], d_hid=config["hidden_dim"],
                                      nlayers=config["n_layer"], max_dur=config["max_dur"], dropout=config["dropout"]),
        "text_encoder": TextEncoder(channels=config["hidden_dim"], kernel_size=config["text_encoder_kernel_size"],
                                    depth=config["n_layer"], n_symbols=config["n_token"]),
        "decoder": Decoder(dim_in=config["hidden_dim"], style_dim=config["style_dim"], dim_out=config["n_mels"],
                           **config["istftnet"]),
    }


def expected_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    return {f"{part}.{key}": tuple(value.shape)
            for part, module in skeleton(config).items() for key, value in module.state_dict().items()}


def convert(export: OnnxExport, shapes: dict[str, tuple[int, ...]], progress: Callable[[str], None] = lambda _: None
            ) -> tuple[dict[str, dict[str, torch.Tensor]], Report]:
    """`shapes`: expected_shapes(config), every key of the state dict with its shape."""
    flat: dict[str, np.ndarray] = {}
    report = Report()
    for name in export.weights():
        progress(name)
        produced = _map_weight(export, name, shapes, report)
        if not produced:
            report.unused.append(name)
        for key, value in produced.items():
            if key not in shapes:
                raise ValueError(f"{name} maps to {key}, which the model built from config.json does not have")
            if key in flat:
                raise ValueError(f"{key}: produced twice (second time from {name})")
            flat[key] = value
    report.mapped = sorted(flat)
    for key in shapes:
        if key not in flat:
            flat[key], report.filled[key] = _fill(key, shapes[key])
    for key, value in flat.items():
        if tuple(value.shape) != shapes[key]:
            raise ValueError(f"{key}: converted shape {tuple(value.shape)}, the model expects {shapes[key]}")
        if not np.isfinite(value).all():
            raise ValueError(f"{key}: not finite after conversion")
    state = {part: {} for part in PARTS}
    for key in shapes:  # the skeleton's key order, as torch.save of a real model would have it
        part, rest = key.split(".", 1)
        state[part][rest] = torch.from_numpy(np.ascontiguousarray(flat[key], dtype=np.float32))
    return state, report


def _map_weight(export: OnnxExport, name: str, shapes: dict, report: Report) -> dict[str, np.ndarray]:
    uses = export.uses[name]
    op = uses[0].op if uses else ""
    value = export.value(name)
    direct = _direct_key(name)
    if direct is not None and direct in shapes:
        return {direct: value.T if op in _MATMUL else value}
    if not uses:
        return {}
    module = _module_of(uses[0].node, shapes)
    if module is None:
        return {}
    if op in _MATMUL and uses[0].index == 1:
        return {f"{module}.weight": value.T}
    if op in _CONV and uses[0].index == 1:
        if f"{module}.weight_v" not in shapes:
            return {f"{module}.weight": value}
        v, g, zero = _unfold_weight_norm(value)
        if zero:
            report.patched_channels[module] = zero
        return {f"{module}.weight_v": v, f"{module}.weight_g": g}
    if op == "DynamicQuantizeLSTM":
        return _lstm(module, uses[0].index, value)
    return {}


def _direct_key(name: str) -> str | None:
    name = name.removesuffix(QUANTIZED)
    if name.startswith("decoder.decoder."):
        return "decoder." + name.removeprefix("decoder.decoder.")
    if name.startswith("encoder."):
        return name.removeprefix("encoder.")
    return None


def _module_of(node_name: str, shapes: dict) -> str | None:
    """'/encoder/text_encoder/cnn.0/cnn.0.0/Conv_quant' -> 'text_encoder.cnn.0.0'."""
    segments: list[str] = []
    for segment in node_name.strip("/").split("/")[:-1]:
        if segments and segment.startswith(segments[-1] + "."):
            segments[-1] = segment  # ModuleList/Sequential children repeat their parent's name
        else:
            segments.append(segment)
    if segments[:2] == ["decoder", "decoder"]:
        segments = segments[1:]
    elif segments[:1] == ["encoder"]:
        segments = segments[1:]
    else:
        return None
    path = ".".join(segments)
    for candidate in (path, f"predictor.{path}"):
        if any(key.startswith(candidate + ".") for key in shapes):
            return candidate
    return None


def _unfold_weight_norm(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    norm = np.sqrt((weight.astype(np.float64) ** 2).sum(axis=tuple(range(1, weight.ndim)), keepdims=True))
    zero = norm.reshape(-1) == 0
    v = weight.copy()
    v[zero] = 1.0
    return v, norm.astype(np.float32), int(zero.sum())


def _lstm(module: str, index: int, value: np.ndarray) -> dict[str, np.ndarray]:
    def gates(x: np.ndarray) -> np.ndarray:
        blocks = np.split(x, 4, axis=0)
        return np.concatenate([blocks[i] for i in _LSTM_GATES], axis=0)

    out = {}
    for direction, suffix in enumerate(("", "_reverse")):
        if index == 1:  # W: [dir, in, 4h]
            out[f"{module}.weight_ih_l0{suffix}"] = gates(value[direction].T)
        elif index == 2:  # R: [dir, h, 4h]
            out[f"{module}.weight_hh_l0{suffix}"] = gates(value[direction].T)
        elif index == 3:  # B: [dir, 8h] = input bias | recurrent bias
            w_bias, r_bias = np.split(value[direction], 2)
            out[f"{module}.bias_ih_l0{suffix}"] = gates(w_bias)
            out[f"{module}.bias_hh_l0{suffix}"] = gates(r_bias)
    return out


def _fill(key: str, shape: tuple[int, ...]) -> tuple[np.ndarray, str]:
    if key.endswith("norm.weight") and len(shape) == 1:
        return np.ones(shape, np.float32), "1 (InstanceNorm affine, folded away by the export)"
    if key.endswith("norm.bias") and len(shape) == 1:
        return np.zeros(shape, np.float32), "0 (InstanceNorm affine, folded away by the export)"
    if key.startswith("bert.pooler."):
        return np.zeros(shape, np.float32), "0 (ALBERT pooler: kokoro never uses it)"
    raise ValueError(f"{key}: no tensor in the ONNX export maps to it")
