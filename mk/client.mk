# Client library, post-deploy validation, one-shot synthesis, the bidi-vs-batch benchmark.
#   make validate                                  the local server (make run) over WebSocket
#   make validate ENDPOINT=name REGION=eu-west-1   a deployed endpoint (SageMaker HTTP/2 SDK)
#   make validate ENDPOINT=name REGION=r ENDPOINT_URL=https://127.0.0.1:8443 CA_FILE=ca.pem
#   make validate-gateway                          the local server through the local SageMaker
#                                                  gateway, with the real AWS SDK
#   make say TEXT="こんにちは。" OUT=hello.wav     make bench-agent TOKENS_PER_SECOND=20
URL ?= ws://$(HOST):$(PORT)/invocations-bidirectional-stream
REPORTS ?= reports
GATEWAY_PORT ?= 8443
OUT ?= say.wav
TOKENS_PER_SECOND ?= 20
# --endpoint ... for a SageMaker endpoint, else --url: shared by validate, say and bench-agent.
TARGET_ARGS = $(if $(ENDPOINT),--endpoint $(ENDPOINT) $(if $(REGION),--region $(REGION)) $(if $(ENDPOINT_URL),--endpoint-url $(ENDPOINT_URL)) $(if $(CA_FILE),--ca-file $(CA_FILE)),--url $(URL))

.PHONY: validate validate-gateway gateway say bench-agent

validate: setup
	$(PY) scripts/validate_endpoint.py $(TARGET_ARGS) --junit $(REPORTS)/validation.xml --json $(REPORTS)/validation.json $(VALIDATE_ARGS)

# Starts the gateway in front of the server on $(HOST):$(PORT), validates through it, stops it.
validate-gateway: setup
	@certs=$$(mktemp -d); \
	$(PY) -m sagemaker_gateway --upstream http://$(HOST):$(PORT) --port $(GATEWAY_PORT) --certs $$certs >$$certs/gateway.log 2>&1 & gateway=$$!; \
	trap 'kill $$gateway 2>/dev/null; rm -rf $$certs' EXIT; \
	for _ in $$(seq 100); do grep -q '^ca_file=' $$certs/gateway.log && break; sleep 0.1; done; \
	grep -q '^ca_file=' $$certs/gateway.log || { cat $$certs/gateway.log; exit 2; }; \
	$(PY) scripts/validate_endpoint.py --endpoint local-kokoro --region us-east-1 \
		--endpoint-url https://127.0.0.1:$(GATEWAY_PORT) --ca-file $$certs/ca.pem \
		--junit $(REPORTS)/validation-gateway.xml --json $(REPORTS)/validation-gateway.json $(VALIDATE_ARGS)

# The gateway alone, in the foreground (prints its endpoint URL and CA file).
gateway: setup
	$(PY) -m sagemaker_gateway --upstream http://$(HOST):$(PORT) --port $(GATEWAY_PORT) $(GATEWAY_ARGS)

say: setup
	@test -n "$(TEXT)" || { echo 'usage: make say TEXT="..." [OUT=say.wav] [ENDPOINT=... REGION=...]'; exit 2; }
	$(PY) scripts/say.py $(TARGET_ARGS) --text "$(TEXT)" --out $(OUT) $(SAY_ARGS)

bench-agent: setup
	$(PY) scripts/bench_agent.py $(TARGET_ARGS) --tokens-per-second $(TOKENS_PER_SECOND) --json $(REPORTS)/bench-agent.json $(BENCH_AGENT_ARGS)
