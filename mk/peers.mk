# First audio and long text against the simplest peer, and what the windowed decode costs.
#   make bench-peers     the server against kokoro-onnx (one call per sentence; whole-text batches of
#                        up to 510 phonemes; the server's own engine on those chunks) on the same int8
#                        weights, phonemes and threads, one run (scripts/bench_peers.py; figures in
#                        docs/performance.md)
#   make bench-windows   the first piece decoded in windows against the whole decode, both engines:
#                        the Whisper listener's CER over the speech corpus, log-spectral distance,
#                        the largest step at a join, the first window's level (scripts/bench_windows.py)
#   BENCH_PEERS_ARGS="--runs 5 --texts short,ten\ sentences"
BENCH_PEERS_ARGS ?=
BENCH_WINDOWS_ARGS ?=
REPORTS ?= reports

.PHONY: bench-peers bench-windows

# kokoro-onnx without its dependencies: it asks for phonemizer, whose wheel overwrites the files of
# phonemizer-fork (the server's pin, the same `phonemizer` module) and breaks espeak's word
# alignment; the fork serves kokoro-onnx as well.
KOKORO_ONNX := kokoro-onnx==0.6.1

bench-peers: setup
	$(PY) -m pip install --quiet --no-deps $(KOKORO_ONNX)
	$(PY) scripts/bench_peers.py --json $(REPORTS)/bench-peers.json $(BENCH_PEERS_ARGS)

bench-windows: setup model-dir
	$(PY) scripts/bench_windows.py --model-dir $(MODEL_DIR) --json $(REPORTS)/bench-windows.json $(BENCH_WINDOWS_ARGS)
