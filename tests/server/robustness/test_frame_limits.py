"""SPEC §10: frames over the size limit, nested too deep, with over-long texts or ids get an
error naming the limit, and the session goes on, in every dialect; over HTTP, a 400 (413 for
size). The real server and model over loopback."""

import json

import httpx
import pytest
import websockets
from server.wire import is_control

DEEP = b"[" * 5000 + b"]" * 5000  # 10 kB: once a RecursionError in the decoder, ending the session
DEEP_OBJECT = b'{"type":"response.create","text":"x","x":' + b'{"a":' * 40 + b"1" + b"}" * 40 + b"}"
HUGE_FRAME = b'{"type":"ping","pad":"' + b"x" * (1 << 20) + b'"}'

# (first message, a message that speaks, how an error looks in the dialect)
DIALECTS = {
    "canonical": ({"type": "open", "format": "pcm_16"}, {"type": "response.create", "text": "はい。"},
                  lambda e: e.get("type") == "error" and e["error"]["message"]),
    "bulbul": ({"type": "config", "data": {"output_audio_codec": "linear16"}}, {"type": "text", "data": {"text": "はい。"}},
               lambda e: e.get("type") == "error" and e["data"]["message"]),
    "blog": ({"text": "はい。"}, {"text": "はい。"}, lambda e: e.get("type") == "error" and e["message"]),
}


async def control_events(connection, until, limit=200):
    """Control events (audio frames skipped) up to the first one `until` accepts."""
    events = []
    for _ in range(limit):
        event = is_control(await connection.recv())
        if event is None:
            continue
        events.append(event)
        if until(event):
            return events
    raise AssertionError(f"no matching event in {events}")


def spoke(event) -> bool:
    return event.get("type") in ("response.done", "synthesis_complete") or event.get("data", {}).get("event_type") == "final"


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("frame, limit", [
    (DEEP, "JSON should nest at most 32 levels deep (MAX_JSON_DEPTH)"),
    (DEEP_OBJECT, "JSON should nest at most 32 levels deep (MAX_JSON_DEPTH)"),
    (HUGE_FRAME, "a frame should be at most 1048576 bytes (WS_MAX_FRAME_BYTES)"),
], ids=["nested-array", "nested-object", "oversize"])
async def test_a_frame_over_a_limit_is_an_error_and_the_session_goes_on(speech_server, dialect, frame, limit):
    first, speak, message_of = DIALECTS[dialect]
    async with websockets.connect(speech_server.ws_url, max_size=None) as connection:
        await connection.send(json.dumps(first).encode())
        if dialect == "canonical":
            await control_events(connection, lambda e: e["type"] == "session.created")
        if dialect == "blog":
            await control_events(connection, spoke)
        await connection.send(frame)
        events = await control_events(connection, message_of)
        assert limit in message_of(events[-1])
        await connection.send(json.dumps(speak).encode())  # the session goes on
        if dialect == "bulbul":
            await connection.send(json.dumps({"type": "flush"}).encode())
        await control_events(connection, spoke)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_an_over_long_text_is_an_error_naming_the_limit(speech_server, dialect):
    first, speak, message_of = DIALECTS[dialect]
    long_speak = json.loads(json.dumps(speak, ensure_ascii=False).replace("はい。", "あ" * 3501))
    async with websockets.connect(speech_server.ws_url, max_size=None) as connection:
        await connection.send(json.dumps(first).encode())
        if dialect == "canonical":
            await control_events(connection, lambda e: e["type"] == "session.created")
        if dialect == "blog":
            await control_events(connection, spoke)
        await connection.send(json.dumps(long_speak).encode())
        events = await control_events(connection, message_of)
        assert "3500 characters" in message_of(events[-1])


async def test_an_over_long_id_is_refused_and_never_echoed(speech_server):
    huge = "i" * 100_000
    async with websockets.connect(speech_server.ws_url, max_size=None) as connection:
        await connection.send(json.dumps({"type": "open"}))
        await control_events(connection, lambda e: e["type"] == "session.created")
        for event in ({"type": "response.create", "text": "はい。", "response_id": huge},
                      {"type": "response.cancel", "response_id": huge}):
            await connection.send(json.dumps(event))
            (error,) = await control_events(connection, lambda e: e["type"] == "error")
            assert "response_id: String should have at most 128 characters" in error["error"]["message"]
            assert huge not in json.dumps(error)


@pytest.mark.parametrize("body, status, text", [
    (DEEP, 400, "body: JSON should nest at most 32 levels deep (MAX_JSON_DEPTH)"),
    (DEEP_OBJECT.replace(b"response.create", b"x"), 400, "MAX_JSON_DEPTH"),
    (b'{"text":"' + b"x" * (2 << 20) + b'"}', 413, "MAX_REQUEST_BYTES"),
], ids=["nested-array", "nested-object", "oversize"])
async def test_http_answers_a_body_over_a_limit_with_the_envelope(speech_server, body, status, text):
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=60) as client:
        reply = await client.post("/invocations", content=body, headers={"Content-Type": "application/json"})
        assert reply.status_code == status
        assert reply.json()["error"]["code"] in ("invalid_request_error", "request_too_large")
        assert text in reply.json()["error"]["message"]
        assert (await client.post("/invocations", json={"text": "はい。"})).status_code == 200, "the server goes on"
