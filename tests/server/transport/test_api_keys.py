"""API_KEYS on the local server: every surface asks for a key in its own clients' fields and
refuses in its own error shape; /ping never asks; unset, nothing does. The app runs on a
runtime double that is ready but never synthesizes: a request that gets past the key is
told about its bad field (400), which is how these tests see the key was taken."""

from types import SimpleNamespace

import pytest
from starlette.testclient import TestClient

from tts_server.app import create_app
from tts_server.settings import Settings

KEY = "sk-local-1"
RACHEL = "21m00Tcm4TlvDq8ikWAM"
CARTESIA = {"model_id": "sonic-3", "transcript": "hi", "voice": {"mode": "id", "id": "any"}, "context_id": "c",
            "output_format": {"container": "ogg", "sample_rate": 24000}}


def runtime():
    load = SimpleNamespace(queued_first_pieces=0, work_ahead=0, active_streams=0, max_batch=1, batch_sizes={},
                           interruptions={})

    async def shutdown():
        pass

    return SimpleNamespace(ready=True, load_error=None, profile={}, realtime_factor=0.0, first_part_s=None,
                           fast_first_fragment=None, scheduler=SimpleNamespace(load=lambda: load), start=lambda: None, shutdown=shutdown,
                           describe=lambda: {})


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Settings(api_keys=(KEY, "sk-local-2")), runtime=runtime())) as client:
        yield client


# (path, body the family claims, the key in its clients' own field, how its refusal reads)
HTTP = {
    "canonical": ("/invocations", {"text": "hi", "format": "ogg"}, {"headers": {"Authorization": f"Bearer {KEY}"}},
                  lambda body: body["error"]["code"] == "unauthorized"),
    "openai": ("/v1/audio/speech", {"input": "hi", "voice": "nova", "speed": 9},
               {"headers": {"Authorization": f"Bearer {KEY}"}},
               lambda body: body["error"]["code"] == "unauthorized" and body["error"]["type"] == "invalid_request_error"),
    "blog": ("/invocations", {"text": "hi", "voice": "af_heart", "format": "ogg"}, {"params": {"api_key": KEY}},
             lambda body: body["error"] == "unauthorized" and "API_KEYS" in body["message"]),
    "bulbul": ("/text-to-speech", {"text": "hi", "speaker": "anushka", "output_audio_codec": "ogg"},
               {"headers": {"api-subscription-key": KEY}}, lambda body: body["error"]["code"] == "unauthorized"),
    "elevenlabs": (f"/v1/text-to-speech/{RACHEL}/stream?output_format=ogg_1", {"text": "hi"},
                   {"headers": {"xi-api-key": KEY}}, lambda body: body["detail"]["status"] == "invalid_api_key"),
    "elevenlabs on /invocations": ("/invocations", {"text": "hi", "voice_id": RACHEL, "output_format": "ogg_1"},
                                   {"headers": {"xi-api-key": KEY}},
                                   lambda body: body["detail"]["status"] == "invalid_api_key"),
    "deepgram": ("/v1/speak?model=aura-2-thalia-en&encoding=ogg", {"text": "hi"},
                 {"headers": {"Authorization": f"Token {KEY}"}}, lambda body: body["err_code"] == "INVALID_AUTH"),
    "deepgram on /invocations": ("/invocations", {"text": "hi", "model": "aura-2-thalia-en", "encoding": "ogg"},
                                 {"headers": {"Authorization": f"Token {KEY}"}},
                                 lambda body: body["err_code"] == "INVALID_AUTH"),
    "cartesia": ("/tts/bytes", CARTESIA, {"headers": {"X-API-Key": KEY}},
                 lambda body: body["error_code"] == "unauthorized" and body["status_code"] == 401),
    "cartesia on /invocations": ("/invocations", CARTESIA, {"params": {"api_key": KEY}},
                                 lambda body: body["error_code"] == "unauthorized"),
}


@pytest.mark.parametrize("family", list(HTTP))
def test_every_http_surface_refuses_without_a_key_in_its_own_shape(client, family):
    path, body, _, refused = HTTP[family]
    reply = client.post(path, json=body)
    assert reply.status_code == 401 and refused(reply.json()), reply.text
    wrong = client.post(path, json=body, headers={"Authorization": "Bearer nope", "xi-api-key": "nope"})
    assert wrong.status_code == 401


@pytest.mark.parametrize("family", list(HTTP))
def test_a_key_in_the_familys_own_field_lets_the_request_through(client, family):
    path, body, key, _ = HTTP[family]
    reply = client.post(path, json=body, **key)
    assert reply.status_code == 400, reply.text  # past the key: its bad format is what it hears about


def test_lists_ask_for_a_key_and_ping_never_does(client):
    assert client.get("/v1/models").status_code == 401
    assert client.get("/v1/models", headers={"Authorization": "Bearer sk-local-2"}).status_code == 200
    assert client.get("/ping").status_code == 200


# (socket path, first message, the key in its clients' own field, how its refusal reads)
SOCKETS = {
    "canonical": ("/invocations-bidirectional-stream", {"type": "open", "format": "ogg"}, f"?api_key={KEY}",
                  lambda e: e["error"]["code"] == "unauthorized"),
    "bulbul": ("/text-to-speech/ws", {"type": "config", "data": {"output_audio_codec": "ogg"}}, f"?api_key={KEY}",
               lambda e: e["data"]["code"] == 401),
    "elevenlabs": (f"/v1/text-to-speech/{RACHEL}/stream-input?output_format=ogg_1", {"text": " ", "xi_api_key": KEY},
                   "", lambda e: e["error"] == "invalid_api_key" and e["code"] == 1008),
    "deepgram": ("/v1/speak?model=aura-2-thalia-en&encoding=ogg", {"type": "Speak", "text": "hi"}, f"?api_key={KEY}",
                 lambda e: e["type"] == "Error" and e["err_code"] == "INVALID_AUTH"),
}


@pytest.mark.parametrize("family", list(SOCKETS))
def test_every_socket_refuses_without_a_key_and_closes_1008(client, family):
    path, first, _, refused = SOCKETS[family]
    first = {k: v for k, v in first.items() if k != "xi_api_key"}
    with client.websocket_connect(path) as ws:
        ws.send_json(first)
        assert refused(ws.receive_json())
        assert ws.receive()["code"] == 1008


@pytest.mark.parametrize("family", list(SOCKETS))
def test_a_socket_with_its_key_gets_past_it(client, family):
    path, first, key, refused = SOCKETS[family]
    separator = "&" if "?" in path and key else ""
    with client.websocket_connect(path + (separator + key.lstrip("?") if separator else key)) as ws:
        ws.send_json(first)
        event = ws.receive_json()
        assert not refused(event) and "Validation Error" in str(event)  # its bad format, not its key


def test_deepgrams_clients_send_their_key_as_authorization_token(client):
    """What Pipecat's, LiveKit's and the SDK's Deepgram clients send on its socket."""
    with client.websocket_connect("/v1/speak?encoding=ogg", headers={"Authorization": f"Token {KEY}"}) as ws:
        ws.send_json({"type": "Speak", "text": "hi"})
        event = ws.receive_json()
    assert event["err_code"] == "INVALID_QUERY_PARAMETER" and "encoding" in event["err_msg"]


def test_cartesias_socket_refuses_without_its_key_and_closes_1008(client):
    """(Its socket lives on after a bad request, so the shared tests' check that a key gets past
    it would leave a session running as the test client tears down: /tts/bytes shows that.)"""
    with client.websocket_connect("/tts/websocket") as ws:
        ws.send_json(CARTESIA)
        event = ws.receive_json()
        assert (event["type"], event["error_code"], event["status_code"]) == ("error", "unauthorized", 401)
        assert "X-API-Key" in event["message"] or "x-api-key" in event["message"]
        assert ws.receive()["code"] == 1008


def test_without_api_keys_nothing_asks():
    with TestClient(create_app(Settings(), runtime=runtime())) as open_client:
        assert open_client.post("/v1/audio/speech", json={"input": "hi", "voice": "nova", "speed": 9}).status_code == 400
