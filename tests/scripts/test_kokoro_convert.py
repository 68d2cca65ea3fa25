"""The conversion's layout rules, each checked against a real runtime on small tensors.

The whole model is covered by test_model_dir.py; these pin the individual rules so a
regression names the rule it broke.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from kokoro_convert.state_dict import _lstm, _module_of, _unfold_weight_norm


def test_lstm_weights_reordered_from_onnx_gates_match_onnxruntime():
    rng = np.random.default_rng(0)
    inputs, hidden, steps = 3, 4, 5
    # The export's DynamicQuantizeLSTM layout: [direction, in, 4*hidden], gates i,o,f,c.
    w = rng.normal(size=(2, inputs, 4 * hidden)).astype(np.float32)
    r = rng.normal(size=(2, hidden, 4 * hidden)).astype(np.float32)
    b = rng.normal(size=(2, 8 * hidden)).astype(np.float32)
    x = rng.normal(size=(steps, 1, inputs)).astype(np.float32)
    # The standard ONNX LSTM op (same gate order, weights [direction, 4*hidden, in]).
    graph = helper.make_graph(
        [helper.make_node("LSTM", ["x", "w", "r", "b"], ["y"], hidden_size=hidden, direction="bidirectional")],
        "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(w.transpose(0, 2, 1).copy(), "w"),
         onnx.numpy_helper.from_array(r.transpose(0, 2, 1).copy(), "r"), onnx.numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})  # [steps, direction, batch, hidden]

    lstm = torch.nn.LSTM(inputs, hidden, bidirectional=True)
    state = {key.removeprefix("m."): torch.from_numpy(value)
             for index, value in ((1, w), (2, r), (3, b)) for key, value in _lstm("m", index, value).items()}
    lstm.load_state_dict(state, strict=True)
    with torch.no_grad():
        got, _ = lstm(torch.from_numpy(x))  # [steps, batch, 2*hidden]
    np.testing.assert_allclose(got.numpy().reshape(steps, 2, hidden), expected[:, :, 0, :], atol=1e-5)


def test_weight_norm_unfolded_gives_back_the_weight_and_zero_channels_stay_zero():
    rng = np.random.default_rng(1)
    weight = rng.normal(size=(6, 4, 3)).astype(np.float32)
    weight[[1, 4]] = 0  # channels int8 quantization rounded to nothing
    v, g, zero = _unfold_weight_norm(weight)
    assert zero == 2
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(4, 6, 3))
    conv.parametrizations.weight.original0.data = torch.from_numpy(g)
    conv.parametrizations.weight.original1.data = torch.from_numpy(v)
    rebuilt = conv.weight.detach().numpy()
    assert np.isfinite(rebuilt).all()
    np.testing.assert_allclose(rebuilt, weight, atol=1e-6)


SHAPES = {key: () for key in (
    "text_encoder.cnn.0.0.weight_v", "predictor.F0.0.conv1.weight_v", "predictor.shared.weight_ih_l0",
    "predictor.lstm.weight_ih_l0", "decoder.generator.ups.0.weight_v", "decoder.asr_res.0.weight_v",
    "bert.encoder.albert_layer_groups.0.albert_layers.0.attention.query.weight")}


@pytest.mark.parametrize("node, module", [
    ("/encoder/text_encoder/cnn.0/cnn.0.0/Conv_quant", "text_encoder.cnn.0.0"),
    ("/encoder/F0.0/conv1/Conv_quant", "predictor.F0.0.conv1"),  # F0 runs outside predictor.forward
    ("/encoder/shared/LSTM_quant", "predictor.shared"),
    ("/encoder/predictor/lstm/LSTM_quant", "predictor.lstm"),
    ("/decoder/decoder/generator/ups.0/ConvTranspose", "decoder.generator.ups.0"),
    ("/decoder/decoder/asr_res/asr_res.0/Conv_quant", "decoder.asr_res.0"),
    ("/encoder/bert/encoder/albert_layer_groups.0/albert_layers.0/attention/query/MatMul_quant",
     "bert.encoder.albert_layer_groups.0.albert_layers.0.attention.query"),
    ("/decoder/decoder/generator/istft/stft/ConvTranspose", None),  # no weights of ours there
])
def test_a_nodes_scope_names_the_module_that_owns_its_weight(node, module):
    assert _module_of(node, SHAPES) == module
