# Cross-session scheduler: the scaling curve (scripts/bench_scaling.py), both CPU engines.
#   make bench-scaling                         N = 1, 2, 4, 8 sessions, 30 s each, onnx then torch
#   BENCH_SCALING_ARGS="--levels 1,2,4 --seconds 60 --think 1"   (think: a random pause before each create)
#   BENCH_SCALING_ARGS="--no-preemption"   (PREEMPTION=off: first pieces never stop a running sentence)
BENCH_SCALING_ARGS ?=
REPORTS ?= reports

.PHONY: bench-scaling

bench-scaling: setup model-dir
	$(PY) scripts/bench_scaling.py --engine onnx --json $(REPORTS)/scaling-onnx.json $(BENCH_SCALING_ARGS)
	$(PY) scripts/bench_scaling.py --engine torch --model-dir $(MODEL_DIR) --json $(REPORTS)/scaling-torch.json $(BENCH_SCALING_ARGS)
