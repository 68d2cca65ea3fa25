"""The ONNX export as a lookup table: float32 value of each weight, and its consumers.

The export was quantized with onnxruntime's dynamic quantization: each weight `X` became
`X_quantized` (int8/uint8) + `X_scale`; its zero point is an input of the consuming node
(several weights share one zero-point tensor, so names cannot be trusted for it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

QUANTIZED = "_quantized"

# Consumer op -> (input index of the weight, index of its scale or None, of its zero point).
# ConvInteger/MatMulInteger apply the scale in a later Mul, so `X_scale` is found by name.
_QUANT_INPUTS = {
    "ConvInteger": {1: (None, 3)},
    "MatMulInteger": {1: (None, 3)},
    "DynamicQuantizeLSTM": {1: (8, 9), 2: (10, 11)},
}


@dataclass(frozen=True)
class Use:
    op: str
    node: str  # the node's name: the torch module scope it was exported from
    index: int  # which input of the node


class OnnxExport:
    def __init__(self, model: onnx.ModelProto):
        self.graph = model.graph
        self.raw = {init.name: numpy_helper.to_array(init) for init in self.graph.initializer}
        self.uses: dict[str, list[Use]] = defaultdict(list)
        self._nodes = {}
        for node in self.graph.node:
            self._nodes[node.name] = node
            for index, name in enumerate(node.input):
                if name:
                    self.uses[name].append(Use(node.op_type, node.name, index))

    @classmethod
    def from_bytes(cls, blob: bytes) -> OnnxExport:
        return cls(onnx.load_from_string(blob))

    def weights(self) -> list[str]:
        """Every float or quantized weight (not scales, zero points, shapes or constants)."""
        names = []
        for name, value in self.raw.items():
            if name.endswith(("_scale", "_zero_point")) or value.dtype.kind not in "fiu":
                continue
            if value.dtype.kind in "iu" and not name.endswith(QUANTIZED):
                continue  # int64 shapes, axes, splits
            names.append(name)
        return names

    def value(self, name: str) -> np.ndarray:
        """float32 value of a weight; quantized ones are dequantized: (q - zero_point) * scale."""
        raw = self.raw[name]
        if not name.endswith(QUANTIZED):
            return raw.astype(np.float32)
        use = self.uses[name][0]
        node = self._nodes[use.node]
        if use.op == "Gather":  # embedding tables: the Gather's output goes to a DequantizeLinear
            dequant = next(u for u in self.uses[node.output[0]] if u.op == "DequantizeLinear")
            inputs = self._nodes[dequant.node].input
            scale, zero_point = self.raw[inputs[1]], self.raw[inputs[2]]
        else:
            scale_index, zero_index = _QUANT_INPUTS[use.op][use.index]
            scale_name = node.input[scale_index] if scale_index is not None else name[: -len(QUANTIZED)] + "_scale"
            scale, zero_point = self.raw[scale_name], self.raw[node.input[zero_index]]
        axis = _scale_axis(use.op, raw.ndim)
        return ((raw.astype(np.float32) - _along(zero_point, axis, raw.ndim)) * _along(scale, axis, raw.ndim)).astype(np.float32)


def _scale_axis(op: str, ndim: int) -> int:
    # MatMul weights are [in, out] with one scale per output column; LSTM weights are
    # [direction, in, 4*hidden] with one scale per direction; conv weights per tensor.
    return {"MatMulInteger": ndim - 1, "DynamicQuantizeLSTM": 0}.get(op, 0)


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    values = np.asarray(values, dtype=np.float32)
    if values.ndim == 0:
        return values
    shape = [1] * ndim
    shape[axis] = values.size
    return values.reshape(shape)
