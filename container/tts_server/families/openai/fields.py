"""OpenAI's speech API as its clients send it (`POST /v1/audio/speech`): its fields, formats,
model ids and voice names, and Kokoro-FastAPI's voice blends (`a+b`, `a(2)+b(1)`).

OpenAI's voices have no Kokoro twin of the same name: each maps to a Kokoro voice of the same
gender (VOICES below); a mapped voice the engine lacks speaks as the voice
policy decides (engine/voice_policy.py).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict

from ...wire.fields import Speed, Text

# OpenAI model ids its clients send (and Kokoro-FastAPI's); the served model still speaks.
MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts", "kokoro")
# OpenAI's voices -> Kokoro v1.0 voices, by gender (and English variety: fable is British).
VOICES: dict[str, str] = {
    "alloy": "af_alloy", "ash": "am_adam", "ballad": "bm_george", "coral": "af_heart", "echo": "am_echo",
    "fable": "bm_fable", "onyx": "am_onyx", "nova": "af_nova", "sage": "af_sarah", "shimmer": "af_sky",
    "verse": "am_michael", "marin": "af_bella", "cedar": "am_liam",
}
# response_format -> (our format, sample rate): OpenAI's audio is 24 kHz; `pcm` is raw 16-bit LE.
FORMATS: dict[str, str] = {"mp3": "mp3", "opus": "opus", "aac": "aac", "flac": "flac", "wav": "wav", "pcm": "pcm_16"}
SAMPLE_RATE = 24000
_WEIGHTED = re.compile(r"^\s*([^()\s]+)\s*\(\s*([0-9]*\.?[0-9]+)\s*\)\s*$")


def _voice(value):
    """A name, a Kokoro-FastAPI blend, or OpenAI's `{"id": ...}` (a custom voice's id)."""
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        value = value["id"]
    if not isinstance(value, str):
        return value
    parts = []
    for part in value.split("+"):
        match = _WEIGHTED.match(part)
        parts.append(f"{match.group(1)}:{match.group(2)}" if match else part.strip())
    return "+".join(parts)


class SpeechRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    model: str | None = None
    input: Text
    voice: Annotated[str, BeforeValidator(_voice)]
    response_format: Literal[tuple(FORMATS)] = "mp3"  # type: ignore[valid-type]
    speed: Speed = 1.0
    instructions: str | None = None  # OpenAI's style prompt: Kokoro takes none, so it is ignored
    stream_format: Literal["audio", "sse"] = "audio"
    lang_code: str | None = None  # Kokoro-FastAPI's language field (else the voice implies it)


def claims_body(raw: dict) -> bool:
    """OpenAI's body: `input` (ours and Bulbul's say `text`)."""
    return "input" in raw and "text" not in raw
