"""ElevenLabs' socket state machine alone, on an engine double: what each message submits,
flushes, cancels and ends, the replies' shapes (audio with character times, isFinal, errors).
The real model speaks through the frameworks and the SDK in test_elevenlabs_clients.py."""

from types import SimpleNamespace

import pytest
from server.session.test_session_options import FULL

from tts_server.engine.output import Alignment
from tts_server.engine.voice_policy import VoicePolicy
from tts_server.families.elevenlabs import FAMILY
from tts_server.families.elevenlabs.alignment import CharTimes
from tts_server.session.events import AudioChunk, ResponseDone, Status
from tts_server.settings import Settings
from tts_server.transport.closing import Phase
from tts_server.transport.dialect import Opening, SessionContext
from tts_server.wire.errors import ErrorCode, ProtocolError

VOICE = "21m00Tcm4TlvDq8ikWAM"


class Sink:
    def __init__(self):
        self.sent, self.closed = [], None

    async def send(self, event, binary=None):
        self.sent.append(event)

    async def send_bytes(self, data):
        self.sent.append(data)

    async def close(self, code, reason=""):
        self.closed = code


class Engine:
    """The session engine as the dialect uses it: submits, cancels, refusals recorded."""

    def __init__(self):
        self.submitted, self.cancelled, self.refusal = [], [], None

    async def submit(self, request):
        self.submitted.append(request)

    async def cancel(self, response_id):
        self.cancelled.append(response_id)

    def refuse_new(self, error):
        self.refusal = error


def dialect(path: str, query: dict | None = None):
    runtime = SimpleNamespace(synthesizer=FULL, voice_policy=VoicePolicy(), fast_first_fragment=None)
    admission = SimpleNamespace(syntheses=SimpleNamespace(take=lambda: None))
    context = SessionContext(Sink(), runtime, Settings(), admission, Opening(path, {"voice_id": VOICE}, query or {}),
                             FAMILY.voices)
    speaker = FAMILY.dialect(context)
    speaker._engine = Engine()
    return speaker, context.sink, speaker._engine


SINGLE = f"/v1/text-to-speech/{VOICE}/stream-input"
MULTI = f"/v1/text-to-speech/{VOICE}/multi-stream-input"


async def test_a_stream_speaks_each_sentence_as_it_completes_and_the_rest_on_flush():
    speaker, sink, engine = dialect(SINGLE, {"output_format": "pcm_16000", "auto_mode": "false"})
    assert await speaker.start({"text": " ", "voice_settings": {"stability": 0.5, "speed": 1.1}})
    for piece in ("Hello ", "world. ", "How are"):
        await speaker.handle({"text": piece, "try_trigger_generation": True})
    assert [r.text for r in engine.submitted] == ["Hello world."]
    await speaker.handle({"text": " you", "flush": True})
    assert [r.text for r in engine.submitted] == ["Hello world.", "How are you"]
    request = engine.submitted[0]
    assert (request.output.format, request.output.sample_rate, request.voice.language) == ("pcm_16", 16000, "en-US")
    assert request.voice.name == "af_heart"  # Rachel's id stands for af_heart
    assert not sink.sent, "nothing is said before there is audio"


async def test_the_end_of_a_stream_speaks_the_rest_then_says_final_and_closes():
    speaker, sink, engine = dialect(SINGLE)
    await speaker.start({"text": " "})
    await speaker.handle({"text": "One more thing"})
    await speaker.handle({"text": ""})
    assert engine.submitted[-1].text == "One more thing"
    assert speaker.closing.phase is Phase.CLIENT_CLOSING and engine.refusal is not None
    await speaker.finish_close()  # the session loop calls it once everything is spoken
    assert sink.sent == [{"isFinal": True}] and sink.closed == 1000


async def test_audio_carries_its_characters_relative_to_its_own_audio():
    speaker, sink, engine = dialect(SINGLE)
    await speaker.start({"text": " "})
    await speaker.handle({"text": "Hi there. "})
    rid = engine.submitted[0].response_id
    words = [Alignment("Hi", 0, 2, 100, 300), Alignment("there.", 3, 9, 300, 900)]
    await speaker._on_session_event(AudioChunk(rid, 0, b"\x00\x00" * 10, words, 0, 1000))
    reply = sink.sent[0]
    assert set(reply) == {"audio", "isFinal", "alignment", "normalizedAlignment"}
    alignment = reply["alignment"]
    assert "".join(alignment["chars"]) == "Hi there. "
    assert alignment["charStartTimesMs"][0] == 100 and alignment["charStartTimesMs"][3] == 300
    end = alignment["charStartTimesMs"][-1] + alignment["charDurationsMs"][-1]
    assert end == 1000, "the clock a client keeps advances by the chunk's whole audio"


async def test_a_context_closed_after_a_flush_finishes_then_says_final():
    speaker, sink, engine = dialect(MULTI)
    await speaker.start({"text": " ", "context_id": "turn-1"})
    await speaker.handle({"text": "Sure, let me check that.", "context_id": "turn-1"})
    await speaker.handle({"context_id": "turn-1", "flush": True})
    await speaker.handle({"context_id": "turn-1", "close_context": True})
    assert engine.cancelled == [] and not sink.sent
    await speaker._on_session_event(ResponseDone(engine.submitted[0].response_id, Status.COMPLETED, 24, 1500))
    assert sink.sent == [{"isFinal": True, "contextId": "turn-1"}]


async def test_a_barge_in_cancels_what_was_never_flushed_and_the_next_context_speaks():
    speaker, sink, engine = dialect(MULTI)
    await speaker.start({"text": " ", "context_id": "a"})
    await speaker.handle({"text": "This is a long answer. It goes on. ", "context_id": "a"})
    spoken = [r.response_id for r in engine.submitted]
    await speaker.handle({"context_id": "a", "close_context": True})
    assert engine.cancelled == spoken
    for rid in spoken:
        await speaker._on_session_event(ResponseDone(rid, Status.CANCELLED, 10, 0))
    assert sink.sent == [{"isFinal": True, "contextId": "a"}]
    await speaker.handle({"text": " ", "context_id": "b"})
    await speaker.handle({"text": "Okay. ", "context_id": "b"})
    assert engine.submitted[-1].text == "Okay."


async def test_close_socket_ends_every_context_and_closes():
    speaker, sink, engine = dialect(MULTI)
    await speaker.start({"text": " ", "context_id": "a"})
    await speaker.handle({"text": "", "context_id": "a"})  # a keep-alive, nothing else
    await speaker.handle({"close_socket": True})
    assert sink.sent == [{"isFinal": True, "contextId": "a"}] and speaker.closing.phase is Phase.CLIENT_CLOSING


async def test_a_bad_opening_is_refused_in_its_shape_and_closes():
    speaker, sink, _ = dialect(SINGLE, {"output_format": "ogg_44100"})
    assert not await speaker.start({"text": " "})
    [error] = sink.sent
    assert error["error"] == "invalid_request" and error["code"] == 1008 and sink.closed == 1008
    assert error["message"].startswith("Validation Error(s):\n- output_format: Input should be 'pcm_16000'")


async def test_a_bad_message_is_reported_with_its_context_and_the_session_goes_on():
    speaker, sink, engine = dialect(MULTI)
    await speaker.start({"text": " ", "context_id": "a"})
    assert await speaker.handle({"text": 5, "context_id": "a"})
    [error] = sink.sent
    assert (error["error"], error["code"], error["contextId"]) == ("invalid_request", 400, "a")
    assert "text: Input should be a valid string" in error["message"]
    await speaker.handle({"text": "Still here. ", "context_id": "a"})
    assert engine.submitted[-1].text == "Still here."


@pytest.mark.parametrize("code, token, close", [(ErrorCode.SERVICE_OVERLOADED, "too_many_concurrent_requests", 1013),
                                                (ErrorCode.UNAUTHORIZED, "invalid_api_key", 1008)])
def test_refusals_name_its_tokens(code, token, close):
    event = FAMILY.dialect.error_event(ProtocolError(code, "no", retry_after=1))
    assert (event["error"], event["code"], event["message"]) == (token, close, "no")


def test_a_responses_characters_are_all_sent_once_and_end_with_a_space():
    chars = CharTimes("Hello world.\nHow are you?")
    first = chars.chunk([Alignment("Hello", 0, 5, 0, 200), Alignment("world.", 6, 12, 250, 500)], 0, 600)
    second = chars.chunk([Alignment("How", 13, 16, 700, 800), Alignment("are", 17, 20, 800, 900),
                          Alignment("you?", 21, 25, 900, 1100)], 600, 1200)
    assert "".join(first[0]) + "".join(second[0]) == "Hello world. How are you? "
    assert second[1] == sorted(second[1]) and second[1][-1] + second[2][-1] == 1200


async def test_in_auto_mode_each_message_is_spoken_as_it_comes():
    speaker, _, engine = dialect(MULTI, {"auto_mode": "true"})
    await speaker.start({"text": " ", "context_id": "a"})
    await speaker.handle({"text": "Hello there.", "context_id": "a"})  # a period alone would wait for more
    await speaker.handle({"text": "How are you", "context_id": "a"})
    assert [r.text for r in engine.submitted] == ["Hello there.", "How are you"]


async def test_a_context_closed_again_while_it_still_speaks_stops():
    """Pipecat flushes and closes a turn's context as its text ends, and closes it again at a barge-in."""
    speaker, sink, engine = dialect(MULTI, {"auto_mode": "true"})
    await speaker.start({"text": " ", "context_id": "a"})
    await speaker.handle({"text": "First sentence.", "context_id": "a"})
    await speaker.handle({"text": "Second sentence.", "context_id": "a"})
    await speaker.handle({"context_id": "a", "flush": True})
    await speaker.handle({"context_id": "a", "close_context": True})
    assert engine.cancelled == []
    await speaker.handle({"context_id": "a", "close_context": True})
    assert engine.cancelled == [r.response_id for r in engine.submitted]
    for request in engine.submitted:
        await speaker._on_session_event(ResponseDone(request.response_id, Status.CANCELLED, 10, 0))
    assert sink.sent == [{"isFinal": True, "contextId": "a"}]
