"""Streamed text that ends a sentence is spoken at once, in every script the chunker knows: every
family that streams text (Bulbul's `text`, ElevenLabs' chunks) cuts it with IncrementalText,
which shares the chunker's sentence ends (tts_text), so Hindi's danda is not held back until the
next message or a flush."""

import pytest

from tts_server.transport.incremental import IncrementalText
from tts_server.wire.errors import ProtocolError
from tts_server.wire.fields import MAX_TEXT_CHARS


@pytest.mark.parametrize("message", ["नमस्ते दुनिया।", "पहला वाक्य॥", "こんにちは。", "Hello there!", "「行こう。」"])
def test_a_message_ending_a_sentence_is_spoken_at_once(message):
    assert IncrementalText(None).feed(message) == message


def test_an_unfinished_sentence_waits_for_more_and_a_flush_gives_it():
    text = IncrementalText(None)
    assert text.feed("नमस्ते दुनिया") is None
    assert text.flush() == "नमस्ते दुनिया" and text.flush() is None


def test_sentences_a_message_completes_leave_together_the_rest_waits():
    text = IncrementalText(None)
    assert text.feed("Hello there. How are") == "Hello there."  # the next word proved the period
    assert text.feed(" you? I am") == "How are you?"
    assert text.flush() == "I am"


def test_too_much_text_without_a_sentence_end_is_refused_naming_the_field_and_the_way_out():
    text = IncrementalText(None, "data.text", "send 'flush'")
    text.feed("a" * (MAX_TEXT_CHARS - 1))
    with pytest.raises(ProtocolError, match=r"data.text: at most 3500 characters .* send 'flush'"):
        text.feed("bb")
