#!/usr/bin/env bash
# Smoke-test the built image the way SageMaker runs it, before any deploy:
#   docker run <image> serve, the model directory mounted read-only at /opt/ml/model,
#   then wait for GET /ping to answer 200 and run the post-deploy validator against it.
# The root filesystem is read-only too, with only /tmp and the user's home writable, so
# a server that writes anywhere else fails here rather than on the endpoint.
#
#   scripts/smoke_image.sh                      (make smoke-image)
# Environment:
#   IMAGE            image to run (default kokoro-tts:local, what `make image` builds)
#   MODEL_DIR        host directory to mount at /opt/ml/model (default: an empty one,
#                    so the embedded engine serves; `make model-dir` writes a real one)
#   PORT             host port on 127.0.0.1 (default 8080)
#   PYTHON           interpreter with the client library (default .venv/bin/python)
#   VALIDATE_ARGS    extra validator arguments, e.g. --checks 'session.*'
#   DOCKER_RUN_ARGS  extra `docker run` arguments, e.g. --gpus all
#   PING_TIMEOUT     seconds to wait for /ping 200 (default 600, SageMaker's start-up limit)
# Exit status: the validator's (0 all passed, 1 a check failed, 2 unreachable); 0 with
# "skipped" where there is no Docker engine (CI), 3 when the container never got ready.
set -euo pipefail

IMAGE=${IMAGE:-kokoro-tts:local}
PORT=${PORT:-8080}
PYTHON=${PYTHON:-.venv/bin/python}
PING_TIMEOUT=${PING_TIMEOUT:-600}
cd "$(dirname "$0")/.."

if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
    echo "smoke_image: skipped: no Docker engine here (docker info failed)"
    exit 0
fi
if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "smoke_image: image $IMAGE not found; build it with make image" >&2
    exit 2
fi

scratch=$(mktemp -d)
model=${MODEL_DIR:-$scratch/model}
mkdir -p "$model"
name="kokoro-smoke-$$"
cleanup() {
    docker rm --force "$name" >/dev/null 2>&1 || true
    rm -rf "$scratch"
}
trap cleanup EXIT

echo "smoke_image: running $IMAGE with $model mounted read-only at /opt/ml/model"
# shellcheck disable=SC2086  # DOCKER_RUN_ARGS is a list of words on purpose
docker run --detach --name "$name" \
    --publish "127.0.0.1:$PORT:8080" \
    --volume "$(cd "$model" && pwd):/opt/ml/model:ro" \
    --read-only --tmpfs /tmp --tmpfs /home/tts:uid=10001,gid=0,mode=0750 \
    ${DOCKER_RUN_ARGS:-} "$IMAGE" serve >/dev/null

deadline=$((SECONDS + PING_TIMEOUT))
until [ "$(curl --silent --output /dev/null --write-out '%{http_code}' "http://127.0.0.1:$PORT/ping" || true)" = 200 ]; do
    if [ "$(docker inspect --format '{{.State.Running}}' "$name" 2>/dev/null)" != true ] || [ $SECONDS -ge $deadline ]; then
        echo "smoke_image: the container did not become ready (/ping never answered 200):" >&2
        docker logs --tail 40 "$name" >&2 || true
        exit 3
    fi
    sleep 1
done
echo "smoke_image: /ping answered 200 after $SECONDS s; validating"

status=0
# shellcheck disable=SC2086
"$PYTHON" scripts/validate_endpoint.py --url "ws://127.0.0.1:$PORT/invocations-bidirectional-stream" \
    ${VALIDATE_ARGS:-} || status=$?
echo "smoke_image: validator exit status $status"
exit $status
