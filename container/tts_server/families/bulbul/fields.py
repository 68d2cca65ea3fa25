"""Bulbul v3's vendor tables: its field names, codec names, model ids and speakers.

Its clients send these; each maps onto ours, and errors name the field as Bulbul spells it.
"""

from __future__ import annotations

from ...engine.voice_policy import VoiceNames
from ...transport.request_fields import CANONICAL_NAMES, VoiceFields, codec
from .settings import BulbulSettings

# Each voice field's accepted names: the session protocol's first, then Bulbul's.
NAMES: dict[str, tuple[str, ...]] = {
    "speaker_id": ("speaker_id", "speaker", "voice"),
    "language": ("language", "target_language_code", "language_code"),
    "format": ("format", "output_audio_codec"),
    "sample_rate": ("sample_rate", "speech_sample_rate"),
    "speed": ("speed", "pace"),
}
# Names only Bulbul's clients send: a /invocations body with one of them is Bulbul's.
OWN_NAMES = frozenset(name for field, names in NAMES.items() for name in names
                      if name not in CANONICAL_NAMES[field]) | {"enable_preprocessing"}
CODECS = {"linear16": "pcm_16"}  # Bulbul's codec names that differ from ours
Codec = codec(NAMES["format"], CODECS)
# Bulbul's model ids: their clients send one; the model that speaks is still MODEL_ID.
MODELS = ("bulbul:v3", "bulbul:v2", "bulbul:v4-flash")

# Bulbul v2/v3 speakers by the gender of their voice (Sarvam's speaker list): each maps to its
# gender's first preset, `woman-1` or `man-1`, which every language with such a voice has.
_FEMALE = ("anushka", "manisha", "vidya", "arya", "ritu", "priya", "neha", "pooja", "simran", "kavya",
           "ishita", "shreya", "roopa", "tanya", "shruti", "suhani", "kavitha", "rupali")
_MALE = ("abhilash", "karun", "hitesh", "aditya", "rahul", "rohan", "amit", "dev", "ratan", "varun", "manan",
         "sumit", "kabir", "aayan", "shubh", "ashutosh", "advait", "anand", "tarun", "sunny", "mani", "gokul",
         "vijay", "mohit", "rehan", "soham")
SPEAKERS: dict[str, str] = {name: "woman-1" for name in _FEMALE} | {name: "man-1" for name in _MALE}

BulbulVoiceFields = VoiceFields.named(NAMES)


VOICES = VoiceNames(aliases=SPEAKERS)


def voices(settings: BulbulSettings) -> VoiceNames:
    """Its speakers: BULBUL_SPEAKER_MAP when set, else the built-in map by gender."""
    return VOICES if settings.bulbul_speaker_map is None else VoiceNames(aliases=settings.bulbul_speaker_map)
