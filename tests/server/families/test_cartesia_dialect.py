"""Cartesia's socket state machine alone, on an engine double: what each request submits, flushes,
cancels and ends, and the replies' shapes (chunks, word timestamps, flush_done, done, errors).
The real model speaks through the frameworks and the SDK in test_cartesia_clients.py."""

from types import SimpleNamespace

from server.families.test_elevenlabs_dialect import Engine, Sink
from server.session.test_session_options import FULL

from tts_server.engine.output import Alignment
from tts_server.engine.voice_policy import VoicePolicy
from tts_server.families import REGISTERED
from tts_server.families.cartesia import FAMILY
from tts_server.families.cartesia.timestamps import WordTimes
from tts_server.session.events import AudioChunk, ResponseDone, Status
from tts_server.settings import Settings
from tts_server.transport.dialect import Opening, SessionContext
from tts_server.wire.errors import ErrorCode, ProtocolError

KATIE = "f786b574-daa5-4673-aa0c-cbe3e8534c02"


def dialect():
    runtime = SimpleNamespace(synthesizer=FULL, voice_policy=VoicePolicy(), fast_first_fragment=None)
    admission = SimpleNamespace(syntheses=SimpleNamespace(take=lambda: None))
    context = SessionContext(Sink(), runtime, Settings(), admission, Opening("/tts/websocket"), FAMILY.voices)
    speaker = FAMILY.dialect(context)
    speaker._engine = Engine()
    return speaker, context.sink, speaker._engine


def request(transcript: str, context_id: str = "ctx", **extra) -> dict:
    """What Pipecat's CartesiaTTSService sends (`_build_msg`)."""
    return {"transcript": transcript, "continue": True, "context_id": context_id, "model_id": "sonic-3.6",
            "voice": {"mode": "id", "id": KATIE},
            "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 16000},
            "add_timestamps": True, "use_normalized_timestamps": False, "language": "en"} | extra


async def test_a_contexts_transcripts_speak_each_sentence_as_it_completes_and_the_rest_at_its_end():
    speaker, sink, engine = dialect()
    assert await speaker.start(request("Hello "))
    await speaker.handle(request("world. How are"))
    assert [r.text for r in engine.submitted] == ["Hello world."]
    await speaker.handle(request(" you", **{"continue": False}))
    assert [r.text for r in engine.submitted] == ["Hello world.", "How are you"]
    first = engine.submitted[0]
    assert (first.output.format, first.output.sample_rate, first.voice.language) == ("pcm_16", 16000, "en-US")
    assert first.voice.name == "af_heart" and first.with_timestamps  # Katie's id stands for af_heart
    assert not sink.sent
    for r in engine.submitted:
        await speaker._on_session_event(ResponseDone(r.response_id, Status.COMPLETED, 10, 800))
    assert sink.sent == [{"type": "done", "context_id": "ctx", "done": True, "status_code": 200}]


async def test_without_buffering_each_transcript_is_spoken_as_it_comes():
    speaker, _, engine = dialect()
    await speaker.start(request("Hello there", max_buffer_delay_ms=0))  # no sentence end, still spoken
    await speaker.handle(request(" How are you", max_buffer_delay_ms=0))
    assert [r.text for r in engine.submitted] == ["Hello there", "How are you"]


async def test_chunks_and_word_times_run_on_across_a_contexts_responses():
    speaker, sink, engine = dialect()
    await speaker.start(request("Hi there. "))
    await speaker.handle(request("Bye now. "))
    first, second = engine.submitted
    await speaker._on_session_event(AudioChunk(first.response_id, 0, b"\x01\x00", [
        Alignment("Hi", 0, 2, 100, 300), Alignment("there", 3, 8, 300, 800), Alignment(".", 8, 9, 800, 850)], 0, 1000))
    await speaker._on_session_event(ResponseDone(first.response_id, Status.COMPLETED, 9, 1000))
    await speaker._on_session_event(AudioChunk(second.response_id, 0, b"\x02\x00", [
        Alignment("Bye", 0, 3, 50, 300), Alignment("now.", 4, 8, 300, 700)], 0, 900))
    chunk, timed, _, timed_2 = sink.sent
    assert chunk == {"type": "chunk", "context_id": "ctx", "data": "AQA=", "done": False, "status_code": 200,
                     "flush_id": 1}
    assert timed["type"] == "timestamps" and timed["context_id"] == "ctx"
    assert timed["word_timestamps"] == {"words": ["Hi", "there."], "start": [0.1, 0.3], "end": [0.3, 0.85]}
    assert timed_2["word_timestamps"] == {"words": ["Bye", "now."], "start": [1.05, 1.3], "end": [1.3, 1.7]}


async def test_a_flush_speaks_the_rest_and_says_flush_done_after_its_audio():
    speaker, sink, engine = dialect()
    await speaker.start(request("One thing"))
    await speaker.handle(request("", flush=True))
    [spoken] = engine.submitted
    assert spoken.text == "One thing" and not sink.sent
    await speaker._on_session_event(ResponseDone(spoken.response_id, Status.COMPLETED, 9, 500))
    assert sink.sent == [{"type": "flush_done", "context_id": "ctx", "flush_done": True, "flush_id": 1,
                          "done": False, "status_code": 200}]
    await speaker.handle(request("And another.", **{"continue": False}))
    assert engine.submitted[-1].text == "And another."


async def test_cancel_stops_a_context_and_nothing_more_is_sent_for_it():
    speaker, sink, engine = dialect()
    await speaker.start(request("This is long. It goes on. "))
    spoken = [r.response_id for r in engine.submitted]
    await speaker.handle({"context_id": "ctx", "cancel": True})
    assert engine.cancelled == spoken
    await speaker._on_session_event(AudioChunk(spoken[0], 0, b"\x00\x00", None, 0, 10))
    for rid in spoken:
        await speaker._on_session_event(ResponseDone(rid, Status.CANCELLED, 10, 0))
    assert sink.sent == []
    await speaker.handle(request("Okay. ", "next"))  # the next context speaks
    assert engine.submitted[-1].text == "Okay."
    await speaker.handle({"context_id": "never-seen", "cancel": True})  # already stopped: nothing to do


async def test_a_bad_request_is_told_in_its_shape_naming_the_field_and_the_socket_goes_on():
    speaker, sink, engine = dialect()
    bad = request("Hi.", output_format={"container": "raw", "encoding": "pcm_s24le", "sample_rate": 16000})
    assert await speaker.start(bad)
    [error] = sink.sent
    assert (error["type"], error["context_id"], error["done"], error["status_code"]) == ("error", "ctx", True, 400)
    assert error["error_code"] == "invalid_request" and error["title"] == "Invalid request"
    assert "output_format.encoding: Input should be 'pcm_s16le', 'pcm_f32le', 'pcm_mulaw' or 'pcm_alaw'" in error[
        "message"]
    await speaker.handle(request("Still here. "))
    assert engine.submitted[-1].text == "Still here."


async def test_its_language_wins_over_the_texts_and_names_its_field_when_not_spoken():
    speaker, sink, engine = dialect()
    await speaker.start(request("Hola. ", "a", language="es"))
    await speaker.handle(request("Hello. ", "b", language=None))
    assert [r.voice.language for r in engine.submitted] == ["es", "en-US"]
    await speaker.handle(request("Hallo. ", "c", language="de"))
    assert sink.sent[-1]["message"].startswith("Validation Error(s):\n- language: Input should be")


async def test_a_failed_response_ends_its_context_with_an_error():
    speaker, sink, engine = dialect()
    await speaker.start(request("First. "))
    await speaker.handle(request("Second. "))
    first, second = engine.submitted
    failure = ProtocolError.invalid("language: no speech in 'en-US'; set language")
    await speaker._on_session_event(ResponseDone(first.response_id, Status.FAILED, 6, 0, failure))
    assert engine.cancelled == [second.response_id]
    assert sink.sent[-1]["type"] == "error" and sink.sent[-1]["context_id"] == "ctx" and sink.sent[-1]["done"]


def test_refusals_name_its_error_codes():
    event = FAMILY.dialect.error_event(ProtocolError(ErrorCode.UNAUTHORIZED, "api key: send one"))
    assert (event["type"], event["error_code"], event["status_code"], event["message"]) == (
        "error", "unauthorized", 401, "api key: send one")


def test_on_the_shared_socket_its_requests_are_its_own_not_elevenlabs():
    assert REGISTERED.recognise({}, request("Hi.")).name == "cartesia"
    assert REGISTERED.recognise({"cartesia_version": "2025-04-16"}, {}).name == "cartesia"
    assert REGISTERED.claiming({"transcript": "Hi.", "voice": {"id": KATIE}}).name == "cartesia"


def test_a_words_tokens_make_one_word_with_its_punctuation():
    words = WordTimes("Don't stop — go!")
    timed = words.chunk([Alignment("Do", 0, 2, 0, 100), Alignment("n't", 2, 5, 100, 200),
                         Alignment("stop", 6, 10, 200, 400), Alignment("go", 13, 15, 500, 600)], 0)
    assert timed == {"words": ["Don't", "stop", "go!"], "start": [0.0, 0.2, 0.5], "end": [0.2, 0.4, 0.6]}
