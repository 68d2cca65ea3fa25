"""The first message of a session decides its dialect (SPEC §4)."""

import pytest

from tts_server.dialects import choose_dialect
from tts_server.dialects.bulbul import BulbulDialect
from tts_server.dialects.canonical import CanonicalDialect
from tts_server.dialects.simple import SimpleDialect


@pytest.mark.parametrize(
    "first, dialect",
    [
        ({"type": "open"}, CanonicalDialect),
        ({"type": "config", "data": {}}, BulbulDialect),
        ({"text": "こんにちは"}, SimpleDialect),
        ({"text": "こんにちは", "voice": "jf_alpha"}, SimpleDialect),
        # Anything else goes to the canonical protocol, whose answer is the fatal session_not_open.
        ({"type": "text", "data": {"text": "config must come first"}}, CanonicalDialect),
        ({"type": None, "text": "a type, even null, is not the simple dialect"}, CanonicalDialect),
        ({"voice": "no text"}, CanonicalDialect),
        ({}, CanonicalDialect),
    ],
)
def test_first_message_chooses(first, dialect):
    assert choose_dialect(first) is dialect
