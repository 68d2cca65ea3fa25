# Speech server (container/tts_server/): the overload benchmark.
#   make bench-overload                  capacity, shed rate, p95 latency of admitted requests at 1x
#                                        and 2x capacity, /ping latency under load (docs/http-and-dialects.md)
#   BENCH_OVERLOAD_ARGS="--seconds 30 --json reports/overload.json --env MAX_CONCURRENT_SYNTHESES=2"
BENCH_OVERLOAD_ARGS ?=

.PHONY: bench-overload

bench-overload: setup
	$(PY) scripts/bench_overload.py $(BENCH_OVERLOAD_ARGS)
