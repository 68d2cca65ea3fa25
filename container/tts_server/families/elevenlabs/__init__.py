"""ElevenLabs' text-to-speech API (SPEC §12): its sockets `stream-input` and `multi-stream-input`,
its HTTP paths, its voice ids, output formats and error shapes, so Pipecat's
ElevenLabsTTSService, LiveKit's elevenlabs.TTS and the `elevenlabs` SDK work with only their
base URL (and, where they like, the voice id) changed. Behind SageMaker: the same socket on
/invocations-bidirectional-stream with the query in ModelQueryString (`voice_id` there), and
the HTTP body on /invocations with `voice_id` in it."""

from __future__ import annotations

from starlette.routing import Route

from ...transport.family import Family
from ...transport.keys import KeyFields
from . import http
from .fields import VOICES, claims_body
from .websocket import ElevenLabsDialect

PATH = "/v1/text-to-speech/{voice_id}"
# Its own query keys: on the shared socket, a ModelQueryString with one of them is its.
QUERY_KEYS = frozenset({"voice_id", "model_id", "output_format", "auto_mode", "inactivity_timeout", "sync_alignment",
                        "enable_ssml_parsing", "apply_text_normalization", "single_use_token"})
# Fields only its first messages carry.
MESSAGE_KEYS = frozenset({"voice_settings", "generation_config", "context_id", "try_trigger_generation",
                          "xi_api_key", "xi-api-key", "pronunciation_dictionary_locators", "close_socket"})

FAMILY = Family(
    name="elevenlabs",
    dialect=ElevenLabsDialect,
    sockets=(f"{PATH}/stream-input", f"{PATH}/multi-stream-input"),
    claims_query=lambda query: bool(QUERY_KEYS & query.keys()),
    opens_with=lambda first: "type" not in first and bool(MESSAGE_KEYS & first.keys()),
    claims_body=claims_body,
    invoke=http.invoke,
    routes=(
        Route(PATH, http.convert, methods=["POST"]),
        Route(f"{PATH}/stream", http.convert, methods=["POST"]),
        Route(f"{PATH}/with-timestamps", http.with_timestamps, methods=["POST"]),
        Route(f"{PATH}/stream/with-timestamps", http.stream_with_timestamps, methods=["POST"]),
    ),
    voices=VOICES,
    keys=KeyFields(headers=("xi-api-key",),
                   query=("api_key", "xi-api-key", "xi_api_key", "authorization", "single_use_token"),
                   message=("xi-api-key", "xi_api_key", "authorization")),
    error_reply=http.error_reply,
)
