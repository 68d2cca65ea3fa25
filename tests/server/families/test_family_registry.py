"""How a family is recognised where every family shares the path (SPEC §4): on the shared socket
the query string is asked first (behind SageMaker, the client's ModelQueryString), then the first
message; an /invocations body by its fields. The canonical protocol answers the rest."""

import pytest

from tts_server.families import REGISTERED


@pytest.mark.parametrize(
    "first, family",
    [
        ({"type": "open"}, "canonical"),
        ({"type": "config", "data": {}}, "bulbul"),
        ({"text": "こんにちは"}, "blog"),
        ({"text": "こんにちは", "voice": "jf_alpha", "request_id": "a", "speed": 1.1}, "blog"),
        # Another protocol's message that carries a `text` is not the blog's.
        ({"text": " ", "voice_settings": {"stability": 0.5}}, "elevenlabs"),
        ({"text": " ", "context_id": "c1"}, "elevenlabs"),
        ({"text": " ", "try_trigger_generation": True, "generation_config": {}}, "elevenlabs"),
        ({"text": "hello", "colour": "blue"}, "canonical"),  # nobody's: the fatal session_not_open
        # Anything else goes to the canonical protocol, whose answer is the fatal session_not_open.
        ({"type": "text", "data": {"text": "config must come first"}}, "canonical"),
        ({"type": None, "text": "a type, even null, is not the blog's"}, "canonical"),
        ({"voice": "no text"}, "canonical"),
        ({}, "canonical"),
    ],
)
def test_the_first_message_chooses(first, family):
    assert REGISTERED.recognise({}, first).name == family


@pytest.mark.parametrize("query", [{"voice_id": "21m00Tcm4TlvDq8ikWAM"}, {"model_id": "eleven_flash_v2_5"},
                                   {"output_format": "pcm_16000", "auto_mode": "true"}])
def test_the_query_string_chooses_before_the_first_message(query):
    assert REGISTERED.recognise(query, {"text": "hello"}).name == "elevenlabs"


def test_a_query_no_family_claims_leaves_it_to_the_first_message():
    assert REGISTERED.recognise({"model": "bulbul:v3"}, {"type": "config", "data": {}}).name == "bulbul"


@pytest.mark.parametrize("body, family", [
    ({"text": "はい。"}, "canonical"),
    ({"text": "はい。", "voice": "af_heart"}, "blog"),
    ({"text": "はい。", "speaker": "anushka"}, "bulbul"),
    ({"input": "はい。", "voice": "nova"}, "openai"),
    ({"text": "はい。", "voice_id": "21m00Tcm4TlvDq8ikWAM"}, "elevenlabs"),
])
def test_an_invocations_body_chooses(body, family):
    assert REGISTERED.claiming(body).name == family


def test_every_family_has_one_name_and_its_own_paths():
    names = [f.name for f in REGISTERED.all]
    assert len(set(names)) == len(names)
    # One path may be a family's socket and its HTTP route both (Deepgram's /v1/speak), never two families'.
    paths = [(kind, p) for f in REGISTERED.all
             for kind, p in (*(("ws", s) for s in f.sockets), *(("http", r.path) for r in f.routes))]
    assert len(set(paths)) == len(paths), "two families claim one path"
