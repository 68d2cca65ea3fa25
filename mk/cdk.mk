# CDK infrastructure (app.py, stacks/): synth, diff, deploy and the stack tests.
#   make synth                      CloudFormation for all three stacks into cdk.out/,
#                                   offline: no Docker, no AWS credentials, cdk-nag on
#   make bootstrap                  once per account and region: CDK's staging bucket and ECR repo
#   make diff / make deploy         against the account and region of your AWS credentials
#   make snapshot-update            rewrite tests/stacks/__snapshots__ after an intended change
#   CDK_ARGS="-c key=value ..."     context overrides for any of them (README.md, Deployment)
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

.PHONY: synth bootstrap diff deploy snapshot-update

setup: node_modules/.installed

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

synth: setup
	AWS_EC2_METADATA_DISABLED=true $(CDK_RUN) synth --quiet $(CDK_ARGS)
	@ls -1 cdk.out/*.template.json

bootstrap: setup
	$(CDK_RUN) bootstrap $(CDK_ARGS)

diff: setup
	$(CDK_RUN) diff --all $(CDK_ARGS)

deploy: setup
	$(CDK_RUN) deploy --all --require-approval broadening $(CDK_ARGS)

# Rewrites the template snapshots; review `git diff tests/stacks/__snapshots__` after it.
snapshot-update: setup
	$(PY) -m pytest tests/stacks/test_stack_snapshots.py --snapshot-update -q
