# A deploy from CI (.github/workflows/deploy.yml), without the development venv:
#   make setup-deploy        a venv of stacks/requirements-deploy.txt only (the CDK app, the validator,
#                            the load stage: no torch, no test tools, no pip cache) and the pinned CLI;
#                            then `make deploy CDK_SETUP=setup-deploy` (mk/cdk.mk) uses it
#   make check-disk          fails unless IMAGE_BUILD_GB are free where Docker keeps its data
#   make validate-stage ENDPOINT=name REGION=r   the validator, told what cdk.json's deploy asked for
#   make load-stage ENDPOINT=name REGION=r       the load stage at cdk.json's budget (staging only)
DEPLOY_REQUIREMENTS := stacks/requirements-deploy.txt stacks/requirements-validate.txt
# The image build's peak on Docker's disk: the build stage's venv (about 6.2 GB, README "The
# image's weight"), the final image's copy of it (another 6.2 GB layer), the base and pip's
# downloads while they install (about 3 GB), and a margin.
IMAGE_BUILD_GB ?= 20
DOCKER_ROOT ?= $(shell docker info --format '{{.DockerRootDir}}' 2>/dev/null || echo /var/lib/docker)

.PHONY: setup-deploy check-disk validate-stage load-stage

setup-deploy: $(VENV)/.deploy-installed node_modules/.installed

$(VENV)/.deploy-installed: $(DEPLOY_REQUIREMENTS)
	@test -x $(PY) || { interpreter=$$(scripts/find-python) && "$$interpreter" -m venv $(VENV); }
	$(PY) -m pip install --quiet --no-cache-dir --upgrade pip
	$(PY) -m pip install --quiet --no-cache-dir -r stacks/requirements-deploy.txt
	@touch $@

# The nearest existing directory of DOCKER_ROOT: its file system is the one that fills up.
check-disk:
	@dir="$(DOCKER_ROOT)"; while [ ! -d "$$dir" ]; do dir=$$(dirname "$$dir"); done; \
	free=$$(df -Pk "$$dir" | awk 'NR == 2 { printf "%d", $$4 / 1048576 }'); \
	if [ "$$free" -lt "$(IMAGE_BUILD_GB)" ]; then \
		echo "The image build needs about $(IMAGE_BUILD_GB) GB free for Docker ($$dir); $$free GB are."; \
		echo "Free disk first (a GitHub runner: remove the preinstalled SDKs, as deploy.yml does) or use a larger runner."; \
		exit 1; fi; \
	echo "disk: $$free GB free for Docker ($$dir), the image build needs about $(IMAGE_BUILD_GB) GB"

# The options come from stacks/expectations.py; if it fails (a bad cdk.json), so does the target.
validate-stage: $(CDK_SETUP)
	@test -n "$(ENDPOINT)" || { echo "usage: make validate-stage ENDPOINT=name REGION=region"; exit 2; }
	expected=$$($(PY) -m stacks.expectations validate) || exit 2; \
	$(PY) scripts/validate_endpoint.py --endpoint "$(ENDPOINT)" --region "$(REGION)" $$expected --no-progress \
		--junit $(REPORTS)/validation.xml --json $(REPORTS)/validation.json

load-stage: $(CDK_SETUP)
	@test -n "$(ENDPOINT)" || { echo "usage: make load-stage ENDPOINT=name REGION=region"; exit 2; }
	budget=$$($(PY) -m stacks.expectations load) || exit 2; \
	$(PY) scripts/load_stage.py --endpoint "$(ENDPOINT)" --region "$(REGION)" $$budget \
		--junit $(REPORTS)/load.xml --json $(REPORTS)/load.json --plot $(REPORTS)/load.png
