# The browser demo, its picture (docs/images/demo.png), and the benchmark plots.
#   make run, then open http://127.0.0.1:8080/       the demo page on the local server
#   make demo ENDPOINT=name REGION=r                 the same page in front of a deployed endpoint
#                                                    (your AWS credentials), on http://127.0.0.1:$(DEMO_PORT)/
#   make demo ENDPOINT=local REGION=us-east-1 ENDPOINT_URL=https://127.0.0.1:8443 CA_FILE=ca.pem
#                                                    ... through the local SageMaker gateway (make gateway)
#   make demo-screenshot                             docs/images/demo.png (headless Chromium)
#   make plots                                       the benchmarks' PNGs from docs/benchmarks/*.json
DEMO_PORT ?= 8090
BENCHMARK_FIGURES ?= docs/benchmarks

.PHONY: demo demo-screenshot plots

demo: setup
	@test -n "$(ENDPOINT)" || { echo 'usage: make demo ENDPOINT=name REGION=r [ENDPOINT_URL=... CA_FILE=...]'; \
		echo '(the local server serves the page itself: make run, then open http://$(HOST):$(PORT)/)'; exit 2; }
	$(PY) scripts/demo_bridge.py --endpoint $(ENDPOINT) $(if $(REGION),--region $(REGION)) \
		$(if $(ENDPOINT_URL),--endpoint-url $(ENDPOINT_URL)) $(if $(CA_FILE),--ca-file $(CA_FILE)) --port $(DEMO_PORT)

demo-screenshot: setup
	$(PY) scripts/demo_screenshot.py --out docs/images/demo.png

plots: setup
	$(PY) scripts/plots.py $(wildcard $(BENCHMARK_FIGURES)/*.json)
