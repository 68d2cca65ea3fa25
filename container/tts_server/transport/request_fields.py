"""Request fields every HTTP body and compatibility message shares: who speaks, how, in which language.

Each client family names these fields its own way: `VoiceFields.named(...)` builds the model
for a family's spellings (the session protocol's names first, then the family's), and errors
name the field as the client spelt it, pydantic style. Fields that mean nothing here are
ignored, so other systems' clients work unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, ValidationInfo, create_model, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from ..audio.formats import AUDIO_FORMATS
from ..engine.voice_policy import NO_NAMES, VoiceNames
from ..runtime import ModelRuntime
from ..session.options import SessionOptions
from ..wire.errors import one_of
from ..wire.fields import Speed

# The session protocol's names, and the one alias every family accepts (`voice`: the blog's and OpenAI's).
CANONICAL_NAMES: dict[str, tuple[str, ...]] = {
    "speaker_id": ("speaker_id", "voice"),
    "language": ("language",),
    "format": ("format",),
    "sample_rate": ("sample_rate",),
    "speed": ("speed",),
}
MODEL_ID = "model_id"  # the validation context key holding the accepted model ids (served id first)


def aliased(names: tuple[str, ...]) -> Any:
    return Field(validation_alias=AliasChoices(*names))


def codec(names: tuple[str, ...] = CANONICAL_NAMES["format"], aliases: Mapping[str, str] | None = None) -> Any:
    """The audio format field: our format names, plus a family's own names for some (`aliases`)."""
    aliases = dict(aliases or {})
    return Annotated[
        Literal[AUDIO_FORMATS + tuple(aliases)],  # type: ignore[valid-type]
        aliased(names),
        AfterValidator(lambda name: aliases.get(name, name)),
    ]


Codec = codec()


class VoiceFields(BaseModel):
    """Who speaks, how, and in which language; validate with context={MODEL_ID: accepted ids}."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    FIELD_NAMES: ClassVar[dict[str, tuple[str, ...]]] = CANONICAL_NAMES

    model: str | None = None
    speaker_id: Annotated[str | None, aliased(CANONICAL_NAMES["speaker_id"])] = None  # None: the family's default
    language: Annotated[str | None, aliased(CANONICAL_NAMES["language"])] = None
    sample_rate: Annotated[int | None, aliased(CANONICAL_NAMES["sample_rate"])] = None
    speed: Annotated[Speed, aliased(CANONICAL_NAMES["speed"])] = 1.0
    spk_ref_audio_tokens: str | None = None

    @classmethod
    def named(cls, names: Mapping[str, tuple[str, ...]]) -> type[VoiceFields]:
        """This model with other spellings of the voice fields (a family's vendor names)."""
        overrides = {field: (cls.model_fields[field].annotation,  # bounds and default kept, only the names change
                             FieldInfo.merge_field_infos(cls.model_fields[field],
                                                         validation_alias=AliasChoices(*names[field])))
                     for field in ("speaker_id", "language", "sample_rate", "speed") if field in names}
        model = create_model(f"{cls.__name__}Named", __base__=cls, **overrides)
        model.FIELD_NAMES = {**cls.FIELD_NAMES, **names}
        return model

    @field_validator("model")
    @classmethod
    def _served_model(cls, model: str | None, info: ValidationInfo) -> str | None:
        accepted = (info.context or {}).get(MODEL_ID)
        if isinstance(accepted, str):
            accepted = (accepted,)
        if model is not None and accepted and model not in accepted:
            raise PydanticCustomError("literal_error", one_of(accepted))
        return model

    @classmethod
    def spelt(cls, raw: dict, field: str) -> str:
        """The name the client used for `field` (its first accepted name when it sent none)."""
        names = cls.FIELD_NAMES.get(field, (field,))
        return next((name for name in names if name in raw), names[0])

    def session_options(self, runtime: ModelRuntime, raw: dict, format: str, prefix: str = "", *,
                        names: VoiceNames = NO_NAMES) -> SessionOptions:
        """The negotiated options (session/options.py, with the family's voice `names`); a
        FieldError names the field as `raw` spelt it, after `prefix`."""
        return SessionOptions.negotiate(
            runtime.synthesizer,
            policy=runtime.voice_policy,
            names=names,
            language=self.language,
            speaker_id=self.speaker_id,
            format=format,
            sample_rate=self.sample_rate,
            speed=self.speed,
            custom_style=self.spk_ref_audio_tokens,
            fields={field: prefix + self.spelt(raw, field) for field in (*self.FIELD_NAMES, "spk_ref_audio_tokens", "text")},
        )
