"""A Bulbul `text` message that ends a sentence is spoken at once, in every script the chunker
knows: the dialect and the chunker share one set of sentence ends (tts_text), so Hindi's danda
is not held back until the next message or a flush."""

from types import SimpleNamespace

import pytest

from tts_server.families.bulbul.websocket import BulbulDialect
from tts_text.chunker import SentenceChunker


class Engine:
    outstanding: list = []

    def __init__(self):
        self.texts = []

    async def submit(self, request):
        self.texts.append(request.text)


class Options:
    def request(self, text):
        return SimpleNamespace(response_id=f"r{len(text)}", text=text, output=SimpleNamespace(media_type="audio/mpeg"))


def feeding_dialect() -> BulbulDialect:
    """The dialect's text path alone: its chunker and bookkeeping, a recording engine."""
    dialect = BulbulDialect.__new__(BulbulDialect)
    dialect._chunker, dialect._fed, dialect._taken = SentenceChunker(), 0, 0
    dialect._engine, dialect._options, dialect._media_types = Engine(), Options(), {}
    return dialect


@pytest.mark.parametrize("message", ["नमस्ते दुनिया।", "पहला वाक्य॥", "こんにちは。", "Hello there!", "「行こう。」"])
async def test_a_message_ending_a_sentence_is_submitted_at_once(message):
    dialect = feeding_dialect()
    await dialect._feed(message)
    assert dialect._engine.texts == [message]


async def test_an_unfinished_sentence_waits_for_more():
    dialect = feeding_dialect()
    await dialect._feed("नमस्ते दुनिया")
    assert dialect._engine.texts == []
