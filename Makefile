# The README's commands. `make setup` is idempotent: it reinstalls only when a
# requirements file changed. Override the interpreter with PYTHON=/path/to/python3.12
# and the venv location with VENV=... (CI points it at a cache keyed by the requirements).
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8080
REQUIREMENTS := requirements.txt requirements-dev.txt container/requirements.txt requirements-pipecat-sagemaker.txt
# The server package lives in container/, the client package at the root; both are used
# from the checkout, so a venv can be shared by several clones (CI caches it).
export PYTHONPATH := $(CURDIR):$(CURDIR)/container$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: setup run test test-avx2 bench
.DEFAULT_GOAL := help

help:
	@echo "make setup   create/update the venv ($(VENV))"
	@echo "make run     serve the embedded Kokoro model on http://$(HOST):$(PORT)"
	@echo "make test    run the whole test suite"
	@echo "make bench   time to first audio, real-time factor, server overhead"
	@echo "make demo    the demo page in front of a deployed endpoint (make run serves it at /)"
	@echo "make plots   the benchmarks' plots from docs/benchmarks/*.json"
	@echo "make docs    the docs site into site/ (make docs-serve: on http://127.0.0.1:8000)"

setup: $(VENV)/.installed

$(VENV)/.installed: $(REQUIREMENTS)
	@test -x $(PY) || { interpreter=$$(scripts/find-python) && echo "creating $(VENV) with $$interpreter" && "$$interpreter" -m venv $(VENV); }
	@echo "Installing Python packages into $(VENV) (a requirements file changed, or the first run):"
	@echo "  server   PyTorch with its CUDA libraries (several GB: the GPU engine), onnxruntime and the"
	@echo "           Kokoro-82M int8 weights (the CPU engine), Japanese G2P dictionaries, PyAV, soxr"
	@echo "  client   websockets, the SageMaker HTTP/2 SDK (awscrt), boto3;  CDK  aws-cdk-lib, cdk-nag"
	@echo "  tests    pytest, hypothesis, moto, Playwright (drives the system's chromium), matplotlib, tqdm"
	@echo "The first run downloads several GB and takes minutes; pip shows each download below."
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --progress-bar on -r requirements.txt -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps --upgrade --target $(VENV)/pipecat-sagemaker -r requirements-pipecat-sagemaker.txt
	@test -x "$${CHROMIUM:-/usr/bin/chromium}" || echo "note: no chromium found, so make test will skip the browser tests (tests/demo); Debian/Ubuntu: apt-get install chromium"
	@touch $@

run: setup
	HOST=$(HOST) PORT=$(PORT) $(PY) container/serve

# The suite runs in a pytest-xdist worker per core, four at most (each worker starts its own
# servers), a test file per worker at a time (its module fixtures start once; the files that
# use the PyTorch server as one, tests/worker_groups.py); each engine gets its share of the
# cores (tests/cores.py). TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ "$$n" -gt 4 ] && n=4; echo $$n)
test: setup
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The suite as an AVX2-only x86-64 CPU (an AMD EPYC without AVX-512) runs it, on a CPU that has
# more: oneDNN and torch's own kernels held to AVX2, so a bf16 LSTM fails here as it does there
# (tests/scripts/test_gpu_check.py). onnxruntime picks its kernels from the CPU itself.
AVX2_ONLY := ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2
test-avx2: setup
	$(AVX2_ONLY) $(MAKE) test

# Both engines: the embedded ONNX export and PyTorch on the CPU from the converted weights.
bench: setup model-dir
	$(PY) scripts/bench.py --engine onnx --json $(REPORTS)/bench-onnx.json $(BENCH_ARGS)
	$(PY) scripts/bench.py --engine torch --model-dir $(MODEL_DIR) --json $(REPORTS)/bench-torch.json $(BENCH_ARGS)

# Further targets (CDK, client, validation) live in mk/*.mk, one file per concern.
-include mk/*.mk
