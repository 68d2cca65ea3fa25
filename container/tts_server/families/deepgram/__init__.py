"""Deepgram Aura's text-to-speech API: its streaming socket and its REST path, both `/v1/speak`,
its models (a voice and a language each), encodings and error shapes, so Pipecat's
DeepgramTTSService, LiveKit's deepgram.TTS and the `deepgram-sdk` work with only their base URL
changed. Behind SageMaker: the same socket on /invocations-bidirectional-stream with the query in
ModelQueryString (Pipecat's DeepgramSageMakerTTSService), and the REST body on /invocations with
the query's fields in it."""

from __future__ import annotations

from starlette.routing import Route

from ...transport.family import Family
from ...transport.keys import KeyFields
from . import http
from .fields import VOICES
from .websocket import DeepgramDialect

PATH = "/v1/speak"
MESSAGE_TYPES = frozenset({"Speak", "Flush", "Clear", "Close"})


def claims_query(query) -> bool:
    """Its socket's query on the shared socket: an Aura `model` (Bulbul's clients send `model` too);
    any other model (a Kokoro voice) is told by its first message."""
    return query.get("model", "").lower().startswith("aura")


FAMILY = Family(
    name="deepgram",
    dialect=DeepgramDialect,
    sockets=(PATH,),
    claims_query=claims_query,
    opens_with=lambda first: first.get("type") in MESSAGE_TYPES,
    claims_body=http.claims_body,
    invoke=http.invoke,
    routes=(Route(PATH, http.speak, methods=["POST"]),),
    voices=VOICES,
    keys=KeyFields(schemes=("Token", "Bearer"), query=("api_key", "token")),
    error_reply=http.error_reply,
)
