"""OpenAI's speech API (SPEC §12): `/v1/audio/speech` and its lists, for the unmodified `openai`
SDK, Open WebUI, SillyTavern, and Pipecat's and LiveKit's OpenAI plugins."""

from __future__ import annotations

from starlette.routing import Route

from ...transport.family import Family
from . import http
from .errors import family_error_reply
from .fields import NAMES, claims_body

FAMILY = Family(
    name="openai",
    claims_body=claims_body,
    invoke=http.invoke,
    routes=(
        Route("/v1/audio/speech", http.speech, methods=["POST"]),
        Route("/v1/audio/voices", http.voices, methods=["GET"]),
        Route("/v1/models", http.models, methods=["GET"]),
        Route("/v1/audio/models", http.audio_models, methods=["GET"]),
    ),
    voices=NAMES,
    error_reply=family_error_reply,
)
