"""Server faults on every surface: 500 `internal_error` over HTTP, the dialect's error event over
WebSocket; never a traceback or an exception's text, always a request id, and the server goes on.

The real application on loopback, with an engine that fails on demand (the real model never
does on valid input): a sentence holding BOOM fails inside synthesis, and language 'zz' fails
while the request is being handled, outside the engine.
"""

import json
import re
import time
from types import SimpleNamespace

import httpx
import pytest
import websockets
from in_process_server import serving_in_thread
from server.robustness.inprocess import CountingSynthesizer

from tts_client.sse import SSEReader
from tts_server.app import create_app
from tts_server.settings import Settings
from tts_server.runtime import ModelRuntime

SECRET = "secret /internal/path/engine.py"
REQUEST_ID = re.compile(r"^\d{8}_[0-9a-f-]{36}$")


class FailingSynthesizer(CountingSynthesizer):
    """The stand-in engine of the robustness tests (4800 samples a sentence), failing on demand:
    'BOOM' in a sentence raises SECRET after its model run, language 'zz' while the request is
    being handled."""

    backend = SimpleNamespace(name="failing-test-engine", device="cpu", precision="fp32", max_tokens=510)

    def __init__(self):
        super().__init__(samples=4800)

    def voice_book(self, language):
        if language == "zz":
            raise RuntimeError(SECRET)
        return super().voice_book(language)

    def run(self, jobs, control=None):
        time.sleep(0.05)  # an engine takes a while: work is in flight for a moment
        return super().run(jobs, control)

    def assemble(self, piece, results, engine_seconds):
        if "BOOM" in piece.text[piece.start : piece.end]:
            raise RuntimeError(SECRET)
        return super().assemble(piece, results, engine_seconds)


@pytest.fixture(scope="module")
def port():
    # A sentence a piece; a double with no decoder statistics to record.
    settings = Settings(host="127.0.0.1", fast_first_fragment_chars=0, piece_growth="off", voice_statistics="none")
    app = create_app(settings, ModelRuntime(FailingSynthesizer, settings))
    with serving_in_thread(app, timeout=60) as port:
        yield port


@pytest.fixture
async def http(port):
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        yield client
    # A fresh connection: after an unhandled fault's 500 the server closes the one it used
    # (Starlette re-raises to uvicorn), and a pooled keep-alive may not have noticed yet.
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        assert (await client.get("/ping")).json()["load"]["syntheses"] == 0, "a failure gave its slot back"


def assert_internal(reply: httpx.Response) -> None:
    assert reply.status_code == 500
    error = reply.json()["error"]
    assert error["code"] == "internal_error"
    assert REQUEST_ID.match(error["request_id"])
    assert error["request_id"] in error["message"], "the message points at the server log entry"
    assert "secret" not in reply.text and "Traceback" not in reply.text


@pytest.mark.parametrize("stream", [False, True])
async def test_synthesis_failure_before_any_audio_is_500(http, stream):
    assert_internal(await http.post("/invocations", json={"text": "BOOM。", "stream": stream}))


async def test_a_fault_outside_the_engine_is_500_too(http):
    assert_internal(await http.post("/invocations", json={"text": "はい。", "language": "zz"}))


async def test_failure_mid_stream_cuts_the_byte_stream(http):
    received = bytearray()
    with pytest.raises(httpx.RemoteProtocolError):  # no clean end: the client cannot take it as complete
        async with http.stream("POST", "/invocations", json={"text": "はい。BOOM。", "stream": True, "format": "pcm_16"}) as reply:
            assert reply.status_code == 200
            async for chunk in reply.aiter_raw():
                received += chunk
    assert len(received) == 9600, "the first sentence's audio arrived"


async def test_failure_mid_sse_ends_with_a_failed_done(http):
    reader, events = SSEReader(), []
    body = {"text": "はい。BOOM。", "stream": True, "format": "pcm_16"}
    async with http.stream("POST", "/invocations", json=body, headers={"Accept": "text/event-stream"}) as reply:
        async for chunk in reply.aiter_raw():
            events += [e.json() for e in reader.feed(chunk)]
    assert [e["type"] for e in events] == ["audio.chunk", "response.done"]
    done = events[-1]
    assert done["status"] == "failed"
    assert done["error"]["code"] == "internal_error"
    assert "secret" not in json.dumps(events)


async def test_bulbul_failure_is_a_500_error_then_final_and_the_session_goes_on(port):
    async with websockets.connect(f"ws://127.0.0.1:{port}/invocations-bidirectional-stream") as ws:
        await ws.send(json.dumps({"type": "config", "data": {"output_audio_codec": "linear16"}}))
        await ws.send(json.dumps({"type": "text", "data": {"text": "BOOM。"}}))
        await ws.send(json.dumps({"type": "flush"}))
        error = json.loads(await ws.recv())
        assert error["type"] == "error" and error["data"]["code"] == 500
        assert "secret" not in error["data"]["message"]
        assert json.loads(await ws.recv()) == {"type": "event", "data": {"event_type": "final"}}
        await ws.send(json.dumps({"type": "text", "data": {"text": "はい。"}}))
        await ws.send(json.dumps({"type": "flush"}))
        assert json.loads(await ws.recv())["type"] == "audio"


async def test_bulbul_fault_while_configuring_ends_the_session_with_1011(port):
    async with websockets.connect(f"ws://127.0.0.1:{port}/invocations-bidirectional-stream") as ws:
        await ws.send(json.dumps({"type": "config", "data": {"language_code": "zz"}}))
        error = json.loads(await ws.recv())
        assert error == {"type": "error", "data": {"message": "internal error; the session ends", "code": 500}}
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
        assert ws.close_code == 1011


async def test_simple_failure_is_an_error_for_that_request_and_the_session_goes_on(port):
    async with websockets.connect(f"ws://127.0.0.1:{port}/invocations-bidirectional-stream") as ws:
        await ws.send(json.dumps({"text": "BOOM。", "request_id": "bad"}).encode())
        await ws.send(json.dumps({"text": "はい。", "request_id": "good"}).encode())
        assert json.loads(await ws.recv()) == {"type": "synthesis_start", "request_id": "bad"}
        error = json.loads(await ws.recv())
        assert (error["type"], error["request_id"], error["code"]) == ("error", "bad", "internal_error")
        assert "secret" not in error["message"]
        assert json.loads(await ws.recv()) == {"type": "synthesis_start", "request_id": "good"}
        assert isinstance(await ws.recv(), bytes)
        complete = json.loads(await ws.recv())
        assert (complete["type"], complete["request_id"]) == ("synthesis_complete", "good")
