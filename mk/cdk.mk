# CDK infrastructure (app.py, stacks/): synth, diff, deploy and the stack tests.
#   make synth                      CloudFormation for all three stacks into cdk.out/,
#                                   offline: no Docker, no AWS credentials, cdk-nag on
#   make bootstrap                  once per account and region: CDK's staging bucket and ECR repo
#   make diff / make deploy         against the account and region of your AWS credentials
#                                   (STAGE=staging|prod: that stage's account, region, prefix)
#   make synth-pipeline             the delivery pipeline's CloudFormation into cdk.out/, offline
#   make deploy-pipeline            deploy the pipeline stack (then it deploys itself on commits)
#   make test-stacks                the fast checks: stack tests, snapshots, cdk-nag, cfn-lint, checkov
#   make snapshot-update            rewrite tests/stacks/__snapshots__ after an intended change
#   CDK_ARGS="-c key=value ..."     context overrides for any of them (docs/cdk-context.md)
#   REQUIRE_APPROVAL=never|broadening|any-change   default: broadening at a terminal, never
#                                   without one or when CI is set (the CLI refuses to ask then)
# The aws-cdk CLI is pinned in package.json/package-lock.json; make setup installs it.
CDK := node_modules/.bin/cdk
CDK_ARGS ?=
# No version check, telemetry or notices: synth talks to nothing on the network. jsii
# calls Node 20 end-of-life in a banner on every run but still runs the app; the banner
# is silenced here (Node 22 or 24 make it moot).
# BUILDX_NO_DEFAULT_ATTESTATIONS: the image SageMaker pulls must be a single Docker v2
# manifest, not the OCI index BuildKit's provenance attestations produce (the pinned CLI
# sets it for its own build as well; stating it here keeps it true if that changes).
CDK_ENV := CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true \
	JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 BUILDX_NO_DEFAULT_ATTESTATIONS=1
CDK_RUN = $(CDK_ENV) $(CDK) --app "$(PY) app.py" --no-notices
# The product's stacks live in a Stage: '**' selects them (--all takes top-level stacks only).
STACKS := '**'
STAGE ?=
STAGE_ARGS := $(if $(STAGE),-c stage=$(STAGE))
# Without a terminal (CI, a pipeline) the CLI cannot ask, and refuses to deploy when asked
# to ask: there, never ask; at a terminal, ask before IAM widens.
REQUIRE_APPROVAL ?= $(shell if [ -z "$$CI" ] && [ -t 0 ]; then echo broadening; else echo never; fi)
PIPELINE_ARGS := -c pipeline=true
# Placeholders to look at the pipeline without your accounts: make synth-pipeline EXAMPLE=1
EXAMPLE_ARGS := -c stagingAccount=111111111111 -c stagingRegion=us-east-1 \
	-c prodAccount=222222222222 -c prodRegion=us-east-1 -c repository=example/kokoro-tts \
	-c connectionArn=arn:aws:codeconnections:us-east-1:111111111111:connection/00000000-0000-0000-0000-000000000000
# cdk deploy builds the image with `docker build --output=...`: the legacy builder (a Docker
# CLI without the buildx component) rejects that flag, so say so before CDK starts.
BUILDX_CHECK = @if command -v docker >/dev/null && ! docker buildx version >/dev/null 2>&1; then \
	echo "Docker's buildx component is missing: the image build needs it (docker build --output)."; \
	echo "Install docker-buildx-plugin (or Docker Desktop), then run this again."; exit 1; fi

# What the targets need first. The pipeline's synth step has a venv of stacks/requirements.txt
# only and passes CDK_SETUP=node_modules/.installed, the GitHub deploy job CDK_SETUP=setup-deploy
# (mk/deploy.mk), so make does not install the server's several GB into them.
CDK_SETUP ?= setup
CDK_OUT ?= cdk.out
# checkov (tests/stacks/test_checkov.py) in a venv of its own beside $(VENV): it pins older
# boto3, botocore, packaging and more than the project's, so it may not share one.
CHECKOV_VENV := $(VENV)-checkov

.PHONY: synth bootstrap diff deploy snapshot-update synth-pipeline deploy-pipeline test-stacks

setup: node_modules/.installed $(CHECKOV_VENV)/.installed

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

$(CHECKOV_VENV)/.installed: stacks/requirements-checkov.txt
	@test -x $(CHECKOV_VENV)/bin/python || { interpreter=$$(scripts/find-python) && "$$interpreter" -m venv $(CHECKOV_VENV); }
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --no-cache-dir -r stacks/requirements-checkov.txt
	@touch $@

synth: $(CDK_SETUP)
	AWS_EC2_METADATA_DISABLED=true $(CDK_RUN) synth --quiet --output $(CDK_OUT) $(CDK_ARGS)
	@ls -1 $(CDK_OUT)/assembly-*/*.template.json

bootstrap: $(CDK_SETUP)
	$(CDK_RUN) bootstrap $(CDK_ARGS)

diff: $(CDK_SETUP)
	$(CDK_RUN) diff $(STACKS) $(STAGE_ARGS) $(CDK_ARGS)

deploy: $(CDK_SETUP)
	$(BUILDX_CHECK)
	$(CDK_RUN) deploy $(STACKS) --require-approval $(REQUIRE_APPROVAL) $(STAGE_ARGS) $(CDK_ARGS)

synth-pipeline: $(CDK_SETUP)
	AWS_EC2_METADATA_DISABLED=true $(CDK_RUN) synth --quiet --output $(CDK_OUT) $(PIPELINE_ARGS) $(if $(EXAMPLE),$(EXAMPLE_ARGS)) $(CDK_ARGS)
	@ls -1 $(CDK_OUT)/*.template.json $(CDK_OUT)/assembly-*/*.template.json

# Once, from a machine with credentials for the pipeline's account; afterwards the
# pipeline updates itself from the branch (self-mutation).
deploy-pipeline: $(CDK_SETUP)
	$(CDK_RUN) deploy Pipeline --require-approval $(REQUIRE_APPROVAL) $(PIPELINE_ARGS) $(CDK_ARGS)

test-stacks: $(CDK_SETUP) $(CHECKOV_VENV)/.installed
	$(PY) -m pytest tests/stacks -q $(PYTEST_ARGS)

# Rewrites the template snapshots; review `git diff tests/stacks/__snapshots__` after it.
snapshot-update: setup
	$(PY) -m pytest tests/stacks/test_stack_snapshots.py --snapshot-update -q
