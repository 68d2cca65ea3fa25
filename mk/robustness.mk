# Robustness (docs/robustness.md): the soak and the fuzzer, each against a server of its own.
#   make soak    sessions of pipelined responses with cancels and abrupt disconnects: nothing lost
#                or duplicated, every slot back, RSS figures
#   make fuzz    malformed frames at every dialect and over HTTP: the server and its sessions unharmed
#   SOAK_ARGS="--sessions 50 --responses 4 --json reports/soak.json"
SOAK_ARGS ?= --sessions 200 --responses 10
FUZZ_ARGS ?= --frames 10000

.PHONY: soak fuzz

soak: setup
	$(PY) scripts/soak.py $(SOAK_ARGS)

fuzz: setup
	$(PY) scripts/fuzz.py $(FUZZ_ARGS)
