"""Cartesia's TTS API (SPEC §12): its socket `/tts/websocket` (contexts, `continue`, `flush`,
`cancel`, word timestamps), `POST /tts/bytes` and `/tts/sse`, its voice ids, output formats and
error shapes, so Pipecat's CartesiaTTSService, LiveKit's cartesia.TTS and the `cartesia` SDK work
with only their URL (and, where they like, the voice id) changed. Behind SageMaker: the same
socket on /invocations-bidirectional-stream (recognised by a first message with `transcript`, or
a `cartesia_version` in ModelQueryString), and the HTTP body on /invocations (its `transcript`)."""

from __future__ import annotations

from starlette.routing import Route

from ...transport.family import Family
from ...transport.keys import KeyFields
from . import http
from .fields import VOICES, claims_body
from .websocket import CartesiaDialect

FAMILY = Family(
    name="cartesia",
    dialect=CartesiaDialect,
    sockets=("/tts/websocket",),
    # LiveKit puts `cartesia_version` in the socket's query; every client's request has `transcript`.
    claims_query=lambda query: "cartesia_version" in query,
    opens_with=lambda first: "type" not in first and "transcript" in first,
    claims_body=claims_body,
    invoke=http.invoke,
    routes=(
        Route("/tts/bytes", http.tts_bytes, methods=["POST"]),
        Route("/tts/sse", http.tts_sse, methods=["POST"]),
    ),
    voices=VOICES,
    # Pipecat and LiveKit send `X-API-Key`, its SDK `Authorization: Bearer`, browsers the query.
    keys=KeyFields(headers=("x-api-key",), query=("api_key", "access_token")),
    error_reply=http.error_reply,
)
