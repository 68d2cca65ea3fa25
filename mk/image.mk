# The container image, locally (CDK builds and pushes its own copy on `make deploy`).
#   make image          build container/Dockerfile as $(IMAGE) for linux/amd64
#   make smoke-image    run it as SageMaker does and validate it (scripts/smoke_image.sh)
# Both print "skipped" and succeed where Docker's engine is missing (CI): `docker info`
# is the test, as the CLI alone may be installed without an engine. The build runs on the
# current buildx builder, the stock `docker` driver included: a type=docker output without
# `dest` is loaded into the engine's image store (a `dest=` file would need a
# docker-container builder). It needs buildx itself: the legacy builder has no --output.
IMAGE ?= kokoro-tts:local
# What SageMaker CreateModel accepts: one platform, no attestations (BuildKit would push
# an OCI image index), Docker media types (the containerd image store would write OCI
# ones). The CDK image asset builds with the same options (stacks/endpoint/image.py).
IMAGE_BUILD_FLAGS := --platform linux/amd64 --provenance=false --sbom=false \
	--output type=docker,oci-mediatypes=false

.PHONY: image smoke-image

image:
	@if ! docker info >/dev/null 2>&1; then echo "make image: skipped: no Docker engine here (docker info failed)"; exit 0; fi; \
	if ! docker buildx version >/dev/null 2>&1; then echo "make image: Docker's buildx component is missing (the legacy builder has no --output): install docker-buildx-plugin"; exit 1; fi; \
	echo "docker buildx build $(IMAGE_BUILD_FLAGS) --tag $(IMAGE) -f container/Dockerfile ."; \
	docker buildx build $(IMAGE_BUILD_FLAGS) --tag $(IMAGE) -f container/Dockerfile .

smoke-image:
	IMAGE=$(IMAGE) PORT=$(PORT) PYTHON=$(PY) scripts/smoke_image.sh
