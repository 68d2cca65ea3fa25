"""The first message of a session decides its dialect (SPEC §4): the registered families are asked."""

import pytest

from tts_server.families import REGISTERED
from tts_server.families.bulbul.websocket import BulbulDialect
from tts_server.families.canonical.websocket import CanonicalDialect
from tts_server.families.blog.websocket import SimpleDialect


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
    assert REGISTERED.dialect_for(first) is dialect
