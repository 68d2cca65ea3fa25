"""ElevenLabs' vendor tables: its model ids, its premade voices, its output formats, its query and
body fields, and the names its errors go by. Each maps onto ours; errors name the field as
ElevenLabs spells it.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from ...audio.formats import OutputSpec
from ...engine.voice_policy import VoiceNames
from ...wire.errors import ErrorCode, FieldError, one_of
from ...wire.fields import Speed, Text

# Its model ids: their clients send one; the model that speaks is still MODEL_ID.
MODELS = ("eleven_flash_v2_5", "eleven_flash_v2", "eleven_turbo_v2_5", "eleven_turbo_v2", "eleven_multilingual_v2",
          "eleven_multilingual_v1", "eleven_monolingual_v1", "eleven_v3", "eleven_v3_conversational", "eleven_v4",
          "eleven_v4_turbo")

# Its premade voices -> Kokoro v1.0 voices of the same gender and English variety; any other
# voice id (a cloned or library voice) speaks as the language's first voice. VOICE_ALIASES
# maps any id to a voice of your choice.
PREMADE: dict[str, str] = {
    "21m00Tcm4TlvDq8ikWAM": "af_heart",  # Rachel
    "AZnzlk1XvdvUeBnXmlld": "af_nicole",  # Domi
    "EXAVITQu4vr4xnSDxMaL": "af_bella",  # Bella / Sarah
    "MF3mGyEYCl7XYWbV9V6O": "af_sky",  # Elli
    "XrExE9yKIg1WjnnlVkGX": "af_sarah",  # Matilda
    "cgSgspJ2msm6clMCkdW9": "af_jessica",  # Jessica
    "FGY2WhTYpPnrIDTdsKH5": "af_nova",  # Laura
    "9BWtsMINqrJLrRacOk9x": "af_aoede",  # Aria
    "SAz9YHcvj6GT2YYXdXww": "af_river",  # River
    "pNInz6obpgDQGcFmaJgB": "am_adam",  # Adam
    "ErXwobaYiN019PkySvjV": "am_michael",  # Antoni
    "TxGEqnHWrfWFTfGW9XjX": "am_echo",  # Josh
    "VR6AewLTigWG4xSOukaG": "am_fenrir",  # Arnold
    "yoZ06aMxZJJ28mfd3POQ": "am_liam",  # Sam
    "TX3LPaxmHKxFdv7VOQHJ": "am_liam",  # Liam
    "nPczCjzI2devNBz1zQrb": "am_puck",  # Brian
    "cjVigY5qzO86Huf0OWal": "am_eric",  # Eric
    "iP95p4xoKVk53GoZ742B": "am_onyx",  # Chris
    "bIHbv24MWmeRgasZH58o": "am_fenrir",  # Will
    "CwhRBWXzGAHq8TQ4Fs17": "am_michael",  # Roger
    "IKne3meq5aSn9XLyUdCD": "am_eric",  # Charlie
    "JBFqnCBsd6RMkjVDRZzb": "bm_george",  # George
    "onwK4e9ZLuTAKqWW03F9": "bm_daniel",  # Daniel
    "N2lVS1w4EtoT3dr4eOWO": "bm_lewis",  # Callum
    "XB0fDUnXU5powFXDhCwa": "bf_emma",  # Charlotte
    "Xb7hH8MSUJpSbSDYk0k2": "bf_alice",  # Alice
    "pFZP5JQG7iQjIQuC4Bku": "bf_lily",  # Lily
}
VOICES = VoiceNames(aliases=PREMADE, unknown="default")

DEFAULT_OUTPUT_FORMAT = "mp3_44100_128"
# Its codec names -> ours (the format table's records); the rate is the name's own, the bit
# rate (mp3_44100_128's 128) is the encoder's choice here. Opus is Ogg/Opus, which plays at 48 kHz.
CODECS = {"pcm": "pcm_16", "mp3": "mp3", "ulaw": "mulaw", "alaw": "alaw", "opus": "opus", "wav": "wav"}
_OUTPUT_FORMAT = re.compile(r"^(?P<codec>[a-z][a-z0-9]*)_(?P<rate>\d+)(?:_(?P<kbps>\d+))?$")
EXAMPLES = ("pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "mp3_22050_32", "mp3_44100_128", "ulaw_8000",
            "alaw_8000", "opus_48000_64", "wav_24000")
# Our field names as its clients know them (negotiation's errors name these).
FIELDS = {"speaker_id": "voice_id", "language": "language_code", "format": "output_format",
          "sample_rate": "output_format", "speed": "voice_settings.speed"}


def output_spec(name: str) -> OutputSpec:
    """`pcm_16000` -> pcm_16 at 16 kHz, `mp3_44100_128` -> mp3 at 44.1 kHz, `ulaw_8000` -> mulaw ..."""
    match = _OUTPUT_FORMAT.match(name) if isinstance(name, str) else None
    codec = CODECS.get(match["codec"]) if match else None
    if codec is None or (codec == "opus" and match["rate"] != "48000"):
        raise FieldError("output_format", one_of(EXAMPLES) + " (codec_rate[_kbps]: pcm, mp3, ulaw, alaw, opus "
                                                             "at 48000, wav)")
    try:
        return OutputSpec(codec, 24000 if codec == "opus" else int(match["rate"]))  # Ogg/Opus: encoded from 24 kHz
    except FieldError as error:
        raise FieldError("output_format", f"{error.message} (the rate in {name!r})") from None


class VoiceSettings(BaseModel):
    """Its voice settings: only `speed` means something here (stability and the rest are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    speed: Speed | None = None


class Query(BaseModel):
    """The query of its socket (and of its HTTP paths): `output_format` and `language_code` matter."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    model_id: str | None = None
    output_format: str = DEFAULT_OUTPUT_FORMAT
    language_code: str | None = None
    voice_id: str | None = None  # on the shared socket (SageMaker), where the path cannot carry it


class SpeechBody(BaseModel):
    """`POST /v1/text-to-speech/{voice_id}[...]`'s body (and the same on /invocations, with `voice_id`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    text: Text
    model_id: str | None = None
    language_code: str | None = None
    voice_settings: VoiceSettings | None = None
    voice_id: str | None = None  # on /invocations, where the path cannot carry it
    output_format: str | None = None  # on /invocations, where there is no query
    with_timestamps: Annotated[bool, Field()] = False  # on /invocations: the with-timestamps lines


def claims_body(raw: dict) -> bool:
    """Its body on /invocations: `text` with `voice_id` (no other family names a voice so)."""
    return "text" in raw and "voice_id" in raw


def check_model(model_id: str | None, accepted: tuple[str, ...]) -> None:
    if model_id is not None and model_id not in (*MODELS, *accepted):
        raise FieldError("model_id", one_of((*MODELS, *accepted)))


# Our error codes as ElevenLabs names them (its `error` / `detail.status` tokens), where it has one.
TOKENS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_REQUEST: "invalid_request",
    ErrorCode.UNKNOWN_EVENT_TYPE: "invalid_request",
    ErrorCode.UNAUTHORIZED: "invalid_api_key",
    ErrorCode.SERVICE_OVERLOADED: "too_many_concurrent_requests",
    ErrorCode.MODEL_LOADING: "system_busy",
    ErrorCode.TOO_MANY_QUEUED: "max_active_conversations",
    ErrorCode.IDLE_TIMEOUT: "input_timeout_exceeded",
    ErrorCode.INTERNAL: "internal_error",
}


def token(code: ErrorCode) -> str:
    return TOKENS.get(code, str(code))
