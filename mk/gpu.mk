# The one GPU run (scripts/gpu_check.py, ../shared/GPU.md): every GPU figure in one go.
#   make gpu-check                    here, on the CPU at its tiny size (what the test suite runs)
#   make gpu-check GPU_CHECK_ARGS=    on a GPU machine: the full run on CUDA
#   make gpu-check-inputs             re-record scripts/gpu_check_inputs.json from make model-dir's weights
GPU_CHECK_ARGS ?= --device cpu --tiny
REPORTS ?= reports

.PHONY: gpu-check gpu-check-inputs

gpu-check: setup
	$(PY) scripts/gpu_check.py --out $(REPORTS)/gpu-check $(GPU_CHECK_ARGS)

gpu-check-inputs: setup model-dir
	$(PY) scripts/gpu_check.py --record scripts/gpu_check_inputs.json --model-dir $(MODEL_DIR)
