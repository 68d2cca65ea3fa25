"""Deepgram Aura's vendor tables: its models (each one voice in one language), its encodings and
their rates, its query fields and the names its errors go by. Each maps onto ours; errors name
the field as Deepgram spells it.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from ...audio.formats import OutputSpec
from ...engine.voice_policy import VoiceNames
from ...wire.errors import ErrorCode, FieldError, one_of
from ...wire.fields import Speed

# A model names its voice and its language: aura-2-thalia-en, aura-2-sirio-es, aura-asteria-en.
_MODEL = re.compile(r"^aura(?:-2)?-(?P<voice>[a-z]+)-(?P<language>[a-z]{2})$")
DEFAULT_MODEL = "aura-asteria-en"  # Deepgram's own default

# Its voices, by gender (Deepgram's voice list: Aura-2's English, Spanish and Japanese voices,
# Aura-1's English ones): each speaks as a Kokoro voice of that gender, which the voice policy
# then moves into the request's language (woman-1 / man-1 of a Spanish text). Any other model
# (a voice not listed, a custom one) speaks as the language's first voice.
# Its default voices first (Deepgram's, Pipecat's, LiveKit's), so they get the first voices.
_WOMEN = ("thalia", "asteria", "helena", "andromeda", "amalthea", "athena", "aurora", "callista", "cora", "cordelia",
          "delia", "electra", "harmonia", "hera", "iris", "janus", "juno", "luna", "minerva", "ophelia", "pandora", "phoebe",
          "selene", "stella", "theia", "vesta", "carina", "celeste", "diana", "estrella", "selena",
          "izanami", "uzume", "ama")
_MEN = ("apollo", "arcas", "aries", "atlas", "draco", "hermes", "hyperion", "jupiter", "mars", "neptune", "odysseus",
        "orion", "orpheus", "perseus", "angus", "helios", "pluto", "saturn", "zeus", "sirio", "nestor", "alvaro",
        "aquila", "javier", "fujin", "ebisu")
# The American English voices each gender's names take turns at (Kokoro v1.0's best graded first).
_KOKORO_WOMEN = ("af_heart", "af_bella", "af_nicole", "af_aoede", "af_kore", "af_sarah", "af_nova", "af_sky",
                 "af_alloy", "af_jessica", "af_river")
_KOKORO_MEN = ("am_michael", "am_fenrir", "am_puck", "am_echo", "am_eric", "am_liam", "am_onyx", "am_adam")
LANGUAGES = ("en", "es", "fr", "it", "ja", "de", "nl")  # Aura's model languages


def _aliases() -> dict[str, str]:
    """Every `aura[-2]-{voice}-{language}` name of the tables above -> its Kokoro voice."""
    aliases = {}
    for names, voices in ((_WOMEN, _KOKORO_WOMEN), (_MEN, _KOKORO_MEN)):
        for index, name in enumerate(names):
            for model in (f"aura-{name}-en", *(f"aura-2-{name}-{language}" for language in LANGUAGES)):
                aliases[model] = voices[index % len(voices)]
    return aliases


VOICES = VoiceNames(aliases=_aliases(), unknown="default")


def model_language(model: str, offered: tuple[str, ...]) -> str | None:
    """The language a model's name implies, where the engine speaks it (`aura-2-thalia-en` -> en);
    None (the text decides) for any other model."""
    match = _MODEL.match(model.lower())
    language = match["language"] if match else None
    return language if language and any(code.split("-")[0] == language for code in offered) else None


# Its encodings -> ours (the format table's records), with the rate each takes by default.
# linear16 over HTTP comes in a WAV container unless `container=none` (Deepgram's own default).
ENCODINGS = {"linear16": ("pcm_16", 24000), "mulaw": ("mulaw", 8000), "alaw": ("alaw", 8000),
             "mp3": ("mp3", 22050), "opus": ("opus", 48000), "flac": ("flac", 48000), "aac": ("aac", 22050)}
CONTAINERS = ("none", "wav", "ogg")
# Our field names as its clients know them (negotiation's errors name these).
FIELDS = {"speaker_id": "model", "language": "the model's language (aura-2-<voice>-<language>)", "format": "encoding"}


class Query(BaseModel):
    """The query of `/v1/speak` (socket and HTTP alike); `bit_rate`, `mip_opt_out`, `tag`, ... are
    accepted and ignored (the bit rate is the encoder's choice here)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    model: str = DEFAULT_MODEL
    encoding: str = "linear16"
    sample_rate: int | None = None
    container: str | None = None
    speed: Speed | None = None


def output_spec(query: Query, http: bool = False) -> OutputSpec:
    """`encoding=linear16&sample_rate=16000` -> pcm_16 at 16 kHz; `mulaw` -> mulaw at 8 kHz; over
    HTTP, linear16 without `container=none` -> wav. Opus is Ogg/Opus (it plays at 48 kHz)."""
    if query.encoding not in ENCODINGS:
        raise FieldError("encoding", one_of(tuple(ENCODINGS)))
    if query.container is not None and query.container not in CONTAINERS:
        raise FieldError("container", one_of(CONTAINERS))
    ours, default_rate = ENCODINGS[query.encoding]
    rate = default_rate if query.sample_rate is None else query.sample_rate
    if query.encoding == "opus":
        if rate != 48000:
            raise FieldError("sample_rate", "Input should be 48000 for encoding 'opus'")
        rate = 24000  # Ogg/Opus: encoded from 24 kHz
    if http and ours == "pcm_16" and query.container != "none":
        ours = "wav"
    try:
        return OutputSpec(ours, rate)
    except FieldError as error:
        message = error.message.replace(f" for format {ours!r}", "")
        raise FieldError(error.field, f"{message} for encoding {query.encoding!r}") from None


# Our error codes as Deepgram names them (its `err_code` tokens), where it has one.
TOKENS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_REQUEST: "INVALID_REQUEST",
    ErrorCode.UNKNOWN_EVENT_TYPE: "INVALID_MESSAGE",
    ErrorCode.UNAUTHORIZED: "INVALID_AUTH",
    ErrorCode.SERVICE_OVERLOADED: "TOO_MANY_REQUESTS",
    ErrorCode.TOO_MANY_QUEUED: "TOO_MANY_REQUESTS",
    ErrorCode.MODEL_LOADING: "SERVICE_UNAVAILABLE",
    ErrorCode.SHUTTING_DOWN: "SERVICE_UNAVAILABLE",
    ErrorCode.REQUEST_TOO_LARGE: "PAYLOAD_TOO_LARGE",
    ErrorCode.INTERNAL: "INTERNAL_SERVER_ERROR",
}
INVALID_QUERY = "INVALID_QUERY_PARAMETER"  # a bad opening (its query), over HTTP and on the socket


def token(code: ErrorCode) -> str:
    return TOKENS.get(code, str(code).upper())
