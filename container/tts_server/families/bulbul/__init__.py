"""Bulbul v3 (bulbul-v3-api-reference.txt): its socket (`config`, `text`, `flush`), its REST paths,
its field names, codecs, model ids and speakers. Its SDK works with only its base URL pointed here."""

from __future__ import annotations

from starlette.routing import Route

from ...transport.family import Family
from ...transport.keys import KeyFields
from . import http
from .fields import MODELS, VOICES
from .settings import BulbulSettings
from .websocket import BulbulDialect

FAMILY = Family(
    name="bulbul",
    dialect=BulbulDialect,
    sockets=("/text-to-speech/ws",),
    opens_with=lambda first: first.get("type") == "config",
    claims_body=http.claims_body,
    invoke=http.invoke,
    routes=(
        Route("/text-to-speech", http.rest, methods=["POST"]),
        Route("/text-to-speech/stream", http.stream, methods=["POST"]),
    ),
    model_ids=MODELS,
    voices=VOICES,
    settings=BulbulSettings,
    keys=KeyFields(headers=("api-subscription-key",)),  # what Sarvam's SDK sends
)
