"""Deepgram's socket state machine alone, on an engine double: what Speak, Flush, Clear and Close
submit, flush and cancel, the replies' shapes (binary audio, Metadata, Flushed, Cleared, Warning,
Error), and which voice and language a model name stands for. The real model speaks through the
frameworks and the SDK in test_deepgram_clients.py."""

from types import SimpleNamespace

import pytest
from server.families.test_elevenlabs_dialect import Engine, Sink
from server.session.test_session_options import FULL

from tts_server.engine.voice_policy import VoicePolicy
from tts_server.families import REGISTERED
from tts_server.families.deepgram import FAMILY
from tts_server.families.deepgram.fields import Query, output_spec
from tts_server.session.events import AudioChunk, ResponseDone, Status
from tts_server.settings import Settings
from tts_server.transport.closing import Phase
from tts_server.transport.dialect import Opening, SessionContext
from tts_server.wire.errors import FieldError


def dialect(query: dict | None = None, path: str = "/v1/speak"):
    runtime = SimpleNamespace(synthesizer=FULL, voice_policy=VoicePolicy(), fast_first_fragment=None)
    admission = SimpleNamespace(syntheses=SimpleNamespace(take=lambda: None))
    opening = Opening(path, {}, {"model": "aura-2-thalia-en", "encoding": "linear16", "sample_rate": "16000"}
                      if query is None else query)
    context = SessionContext(Sink(), runtime, Settings(), admission, opening, FAMILY.voices)
    speaker = FAMILY.dialect(context)
    speaker._engine = Engine()
    return speaker, context.sink, speaker._engine


def done(request) -> ResponseDone:
    return ResponseDone(request.response_id, Status.COMPLETED, len(request.text), 500)


def json_replies(sink) -> list[dict]:
    return [event for event in sink.sent if isinstance(event, dict)]


async def test_speak_sends_each_sentence_as_it_completes_and_flush_the_rest():
    speaker, sink, engine = dialect()
    assert await speaker.start({"type": "Speak", "text": "Hello "})
    await speaker.handle({"type": "Speak", "text": "world. How are"})
    assert [r.text for r in engine.submitted] == ["Hello world."]
    await speaker.handle({"type": "Speak", "text": " you"})
    await speaker.handle({"type": "Flush"})
    assert [r.text for r in engine.submitted] == ["Hello world.", "How are you"]
    request = engine.submitted[0]
    assert (request.output.format, request.output.sample_rate, request.voice.language) == ("pcm_16", 16000, "en-US")
    assert request.voice.name == "af_heart"  # Thalia, a woman's voice
    metadata = sink.sent[0]
    assert metadata["type"] == "Metadata" and metadata["model_name"] == "aura-2-thalia-en"
    assert {"request_id", "model_version", "model_uuid"} <= metadata.keys()


async def test_flushed_comes_once_per_flush_after_everything_sent_before_it():
    speaker, sink, engine = dialect()
    await speaker.start({"type": "Speak", "text": "One. "})
    await speaker.handle({"type": "Flush"})
    await speaker.handle({"type": "Speak", "text": "Two"})
    await speaker.handle({"type": "Flush"})
    await speaker.handle({"type": "Flush"})  # nothing new: answered once the earlier ones are
    first, second = engine.submitted
    await speaker._on_session_event(AudioChunk(first.response_id, 0, b"\x01\x00" * 4, None, 0, 10))
    assert sink.sent[1:] == [b"\x01\x00" * 4], "audio is binary; nothing is flushed before its audio ends"
    await speaker._on_session_event(done(first))
    assert json_replies(sink)[1:] == [{"type": "Flushed", "sequence_id": 0}]
    await speaker._on_session_event(done(second))
    assert json_replies(sink)[1:] == [{"type": "Flushed", "sequence_id": i} for i in range(3)]


async def test_a_flush_with_nothing_outstanding_is_answered_at_once():
    speaker, sink, _ = dialect()
    await speaker.start({"type": "Flush"})
    assert json_replies(sink)[1:] == [{"type": "Flushed", "sequence_id": 0}]


async def test_clear_cancels_what_is_unheard_and_nothing_more_of_it_arrives():
    speaker, sink, engine = dialect()
    await speaker.start({"type": "Speak", "text": "A long first sentence. A second one. And a third"})
    await speaker.handle({"type": "Flush"})
    ids = [r.response_id for r in engine.submitted]
    await speaker.handle({"type": "Clear"})
    assert engine.cancelled == ids
    assert json_replies(sink)[-1] == {"type": "Cleared", "sequence_id": 0}
    before = len(sink.sent)
    for request in engine.submitted:  # the engine's last words about them
        await speaker._on_session_event(AudioChunk(request.response_id, 1, b"\x00\x00", None, 0, 10))
        await speaker._on_session_event(ResponseDone(request.response_id, Status.CANCELLED, 0, 0))
    assert len(sink.sent) == before, "no audio and no Flushed for what Clear overtook"
    await speaker.handle({"type": "Speak", "text": "Next turn."})
    await speaker.handle({"type": "Flush"})
    await speaker._on_session_event(done(engine.submitted[-1]))
    assert json_replies(sink)[-1] == {"type": "Flushed", "sequence_id": 1}


async def test_close_speaks_the_rest_then_closes_normally():
    speaker, sink, engine = dialect()
    await speaker.start({"type": "Speak", "text": "Goodbye for now"})
    await speaker.handle({"type": "Close"})
    assert engine.submitted[-1].text == "Goodbye for now"
    assert speaker.closing.phase is Phase.CLIENT_CLOSING and engine.refusal is not None
    await speaker.finish_close()
    assert sink.closed == 1000


@pytest.mark.parametrize("message, named", [
    ({"type": "Shout", "text": "Hi."}, "type: Input should be 'Speak', 'Flush', 'Clear' or 'Close'"),
    ({"type": "Speak"}, "text: Field required"),
    ({"type": "Speak", "text": 3}, "text: Input should be a valid string"),
])
async def test_a_bad_message_is_a_warning_naming_the_field_and_the_session_goes_on(message, named):
    speaker, sink, engine = dialect()
    assert await speaker.start({"type": "Flush"})
    assert await speaker.handle(message)
    warning = sink.sent[-1]
    assert warning["type"] == "Warning" and named in warning["description"]
    assert warning["warn_msg"] == warning["description"] and warning["code"] == warning["warn_code"]
    await speaker.handle({"type": "Speak", "text": "Still here."})
    await speaker.handle({"type": "Flush"})
    assert [r.text for r in engine.submitted] == ["Still here."]


async def test_a_failed_response_is_a_warning_and_its_flush_still_answers():
    speaker, sink, engine = dialect()
    await speaker.start({"type": "Speak", "text": "Hello."})
    await speaker.handle({"type": "Flush"})
    await speaker._on_session_event(ResponseDone(engine.submitted[0].response_id, Status.FAILED, 0, 0))
    kinds = [e["type"] for e in json_replies(sink)]
    assert kinds == ["Metadata", "Warning", "Flushed"]


@pytest.mark.parametrize("query, named", [
    ({"model": "aura-2-thalia-en", "encoding": "wav"},
     "encoding: Input should be 'linear16', 'mulaw', 'alaw', 'mp3', 'opus', 'flac' or 'aac'"),
    ({"encoding": "mulaw", "sample_rate": "16000"}, "sample_rate: Input should be 8000 for encoding 'mulaw'"),
    ({"encoding": "linear16", "sample_rate": "12345"}, "sample_rate: Input should be 8000, 11025"),
    ({"speed": "3"}, "speed: Input should be less than or equal to 2"),
])
async def test_a_bad_query_is_an_error_naming_the_field_then_close_1008(query, named):
    speaker, sink, engine = dialect(query)
    assert not await speaker.start({"type": "Speak", "text": "Hi."})
    error = sink.sent[0]
    assert error["type"] == "Error" and error["err_code"] == "INVALID_QUERY_PARAMETER" and named in error["err_msg"]
    assert sink.closed == 1008 and not engine.submitted


@pytest.mark.parametrize("model, language, voice", [
    ("aura-2-thalia-en", "en-US", "af_heart"),
    ("aura-2-apollo-en", "en-US", "am_adam"),  # a man's voice: the only one this engine double has
    ("aura-asteria-en", "en-US", "af_bella"),
    ("aura-2-celeste-es", "es", "ef_dora"),  # a woman's voice, in Spanish: the language's own
    ("jf_alpha", "ja", "jf_alpha"),  # a Kokoro voice, as named
])
async def test_a_model_names_the_voice_and_its_language_wins(model, language, voice):
    speaker, _, engine = dialect({"model": model})
    await speaker.start({"type": "Speak", "text": "こんにちは。" if language == "ja" else "Hola, buenos días."})
    await speaker.handle({"type": "Flush"})
    request = engine.submitted[0]
    assert (request.voice.language, request.voice.name) == (language, voice)


async def test_a_model_of_a_language_the_engine_lacks_speaks_in_the_texts_language():
    speaker, _, engine = dialect({"model": "aura-2-julius-de"})
    await speaker.start({"type": "Speak", "text": "こんにちは。"})
    assert engine.submitted[0].voice.language == "ja" and engine.submitted[0].voice.name == "jf_alpha"


def test_http_encodings_follow_deepgrams_containers():
    assert output_spec(Query(), http=True).format == "wav"  # linear16 in a WAV container, by default
    assert output_spec(Query(container="none"), http=True).format == "pcm_16"
    assert output_spec(Query(encoding="opus")).sample_rate == 24000  # Ogg/Opus, which plays at 48 kHz
    assert output_spec(Query(encoding="mp3")).sample_rate == 22050
    with pytest.raises(FieldError, match="container: Input should be 'none', 'wav' or 'ogg'"):
        output_spec(Query(container="mp4"))


def test_on_the_shared_socket_its_query_or_its_first_message_chooses_it():
    assert REGISTERED.recognise({"model": "aura-2-helena-en", "encoding": "linear16"}, {}) is FAMILY
    assert REGISTERED.recognise({}, {"type": "Speak", "text": "Hi."}) is FAMILY
    assert REGISTERED.recognise({"model": "af_heart", "encoding": "linear16"}, {"type": "Speak", "text": "Hi."}) is FAMILY
    assert REGISTERED.recognise({"model": "bulbul:v3"}, {"type": "config"}) is not FAMILY
    assert REGISTERED.recognise({}, {"type": "open"}) is not FAMILY
    assert REGISTERED.claiming({"text": "Hi.", "model": "aura-2-thalia-en"}) is FAMILY
    assert REGISTERED.claiming({"text": "Hi.", "voice": "af_heart"}) is not FAMILY
