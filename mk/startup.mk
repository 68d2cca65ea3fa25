# Cold start and the image's weight (docs/benchmarks.md, "Image and cold start").
#   make bench-startup        process start -> /ping 200, each phase the server reports, then the
#                             first requests; both engines (PyTorch from make model-dir), 3 runs each
#   BENCH_STARTUP_ARGS="--repeats 5 --variant before:CHECKOUT=/tmp/old --variant after:"
#   make image-budget         the image's size by part without Docker: installs container/requirements.txt
#                             as the Dockerfile's build stage does into $(IMAGE_BUDGET_PREFIX) (several GB)
#   IMAGE_BUDGET_ARGS="--venv /opt/venv"   measure an existing venv instead
BENCH_STARTUP_ARGS ?=
IMAGE_BUDGET_PREFIX ?= .cache/image-budget
IMAGE_BUDGET_ARGS ?=
REPORTS ?= reports

.PHONY: bench-startup image-budget

bench-startup: setup model-dir
	$(PY) scripts/bench_startup.py --model-dir $(MODEL_DIR) --json $(REPORTS)/bench-startup.json $(BENCH_STARTUP_ARGS)

image-budget: setup
	$(PY) scripts/image_budget.py --prefix $(IMAGE_BUDGET_PREFIX) --json $(REPORTS)/image-budget.json $(IMAGE_BUDGET_ARGS)
