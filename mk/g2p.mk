# G2P for every Kokoro language (container/tts_server/engine/languages.py, docs/languages.md).
#   make bench-g2p                       load time and time per sentence, per language
BENCH_G2P_ARGS ?=

.PHONY: bench-g2p

bench-g2p: setup
	$(PY) scripts/bench_g2p.py $(BENCH_G2P_ARGS)
