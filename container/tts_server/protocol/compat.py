"""Request fields of the compatibility surfaces: POST /invocations, the Bulbul and simple dialects.

Every field takes the session protocol's name and the names Bulbul v3 (and the blog's simple
client) use for it, and errors name the field as the client spelt it, pydantic style.
Fields other systems send that mean nothing here are ignored, so their clients work unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from ..audio.formats import AUDIO_FORMATS
from ..engine.synthesizer import Synthesizer
from ..errors import FieldError, one_of
from ..session.options import SessionOptions
from .events import MAX_TEXT_CHARS, Speed
from .voice_defaults import resolve_voice

# Each field's accepted names: the session protocol's first, then Bulbul's (and the blog's `voice`).
FIELD_NAMES: dict[str, tuple[str, ...]] = {
    "speaker_id": ("speaker_id", "speaker", "voice"),
    "language": ("language", "target_language_code", "language_code"),
    "format": ("format", "output_audio_codec"),
    "sample_rate": ("sample_rate", "speech_sample_rate"),
    "speed": ("speed", "pace"),
}
BULBUL_CODECS = {"linear16": "pcm_16"}  # Bulbul's codec names that differ from ours
MODEL_ID = "model_id"  # the validation context key holding the accepted model ids (served id first)


def _named(field: str) -> Any:
    return Field(validation_alias=AliasChoices(*FIELD_NAMES[field]))


def _not_blank(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("string_blank", "String should contain a character that is not whitespace")
    return text


def spelt(raw: dict, field: str) -> str:
    """The name the client used for `field` (its first accepted name when it sent none)."""
    names = FIELD_NAMES.get(field, (field,))
    return next((name for name in names if name in raw), names[0])


Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS), AfterValidator(_not_blank)]
Codec = Annotated[
    Literal[AUDIO_FORMATS + tuple(BULBUL_CODECS)],  # type: ignore[valid-type]
    _named("format"),
    AfterValidator(lambda codec: BULBUL_CODECS.get(codec, codec)),
]


class VoiceFields(BaseModel):
    """Who speaks, how, and in which language; validate with context={MODEL_ID: served id}."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    model: str | None = None
    speaker_id: Annotated[str | None, _named("speaker_id")] = None  # None: see voice_defaults.resolve_voice
    language: Annotated[str | None, _named("language")] = None
    sample_rate: Annotated[int | None, _named("sample_rate")] = None
    speed: Annotated[Speed, _named("speed")] = 1.0
    spk_ref_audio_tokens: str | None = None

    @field_validator("model")
    @classmethod
    def _served_model(cls, model: str | None, info: ValidationInfo) -> str | None:
        accepted = (info.context or {}).get(MODEL_ID)
        if isinstance(accepted, str):
            accepted = (accepted,)
        if model is not None and accepted and model not in accepted:
            raise PydanticCustomError("literal_error", one_of(accepted))
        return model

    def session_options(self, synthesizer: Synthesizer, raw: dict, format: str, prefix: str = "", *,
                        speakers: Mapping[str, str] | None = None, blog_default: bool = False) -> SessionOptions:
        """The negotiated options; a FieldError names the field as `raw` spelt it, after `prefix`.

        `speakers` maps other systems' speaker names (Bulbul's) to ours; `blog_default` makes
        the blog's `af_heart` the default voice where the engine has it."""
        language, speaker_id = resolve_voice(synthesizer, self.language, self.speaker_id, speakers, blog_default)
        try:
            return SessionOptions.negotiate(
                synthesizer,
                language=language,
                speaker_id=speaker_id,
                format=format,
                sample_rate=self.sample_rate,
                speed=self.speed,
                custom_style=self.spk_ref_audio_tokens,
            )
        except FieldError as error:
            name, message = spelt(raw, error.field), error.message
            if error.field == "speaker_id" and name in raw:
                asked = raw[name]
                message += f", got {asked!r}" + (f" (mapped to {speaker_id!r})" if speaker_id != asked else "")
            raise FieldError(prefix + name, message) from None
