"""The threads one engine of this test run gets. `make test` runs a pytest-xdist worker per core
(up to four): an engine in each worker that took every core would have its threads take turns
with the other workers' on the same cores. So each engine, in process or in a server the tests
start, gets its share of the cores (INFERENCE_THREADS for the servers, set in conftest.py)."""

import os

WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
# The cores this run may use (no affinity call on macOS: all of them)
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
ENGINE_THREADS = max(1, CORES // WORKERS)
