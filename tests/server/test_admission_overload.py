"""Overload on the real server, with a small capacity (2 syntheses, 2 sessions): shed with a
well-formed 503 / service_overloaded + 1013 while every slot is still held, never queued; /ping
stays truthful; nothing hangs or is lost past capacity, and the server recovers when load drops.
How fast a 503 comes and /ping's latency under load are figures of `make bench-overload`."""

import asyncio
import base64
import json
import re
import time  # a request_timestamp, the blog client's staleness field

import httpx
import pytest
import websockets
from running_server import start_server, stop_server, wait_until_listening, wait_until_ready
from waiting import until

CAPACITY = {"MAX_CONCURRENT_SYNTHESES": "2", "MAX_SESSIONS": "2", "OVERLOAD_RETRY_AFTER_S": "3"}
LONG_TEXT = "はい。" + "これは負荷試験のための長い文章です。" * 8  # a short first sentence: audio starts soon
REQUEST_ID = re.compile(r"^\d{8}_[0-9a-f-]{36}$")


async def while_loading(server) -> dict:
    """What a client gets before the model is ready (its load gate still shut): HTTP, and a Bulbul session."""
    await asyncio.to_thread(wait_until_listening, server)
    async with httpx.AsyncClient(base_url=server.http_url, timeout=30) as http:
        ping = await http.get("/ping")
        reply = await http.post("/invocations", json={"text": "はい。"})
    async with websockets.connect(server.ws_url) as ws:
        await ws.send(json.dumps({"type": "config", "data": {}}).encode())
        bulbul = json.loads(await ws.recv())
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
    return {"ping": ping, "http": reply, "bulbul": bulbul, "bulbul_close": ws.close_code}


@pytest.fixture(scope="module")
async def small():
    server = start_server(env=CAPACITY, wait=False, gated=True, languages="ja")
    try:
        early = await while_loading(server)
        server.open_load_gate()
        await asyncio.to_thread(wait_until_ready, server)
        yield server, early
    finally:
        stop_server(server)


@pytest.fixture
async def http(small):
    server, _ = small
    async with httpx.AsyncClient(base_url=server.http_url, timeout=60) as client:
        yield client


async def load(http) -> dict:
    return (await http.get("/ping")).json()["load"]


async def load_when(http, condition, what: str) -> dict:
    """The load once `condition(load)` holds, polled."""
    async def check():
        now = await load(http)
        return now if condition(now) else None

    return await until(check, what, poll=0.05)


async def settled(http) -> dict:
    """The load once every slot is back (a dropped client's work is aborted, not finished)."""
    return await load_when(http, lambda now: not (now["syntheses"] or now["sessions"]), "every slot to be given back")


def assert_overloaded(reply: httpx.Response) -> None:
    assert reply.status_code == 503
    assert reply.headers["retry-after"] == "3"
    error = reply.json()["error"]
    assert REQUEST_ID.match(error.pop("request_id"))
    assert error == {"message": "server at capacity, retry later", "code": "service_overloaded", "retry_after": 3}


async def test_while_loading_http_is_503_model_loading_and_sessions_get_1013(small):
    _, early = small
    assert early["ping"].status_code == 503 and early["ping"].json() == {"status": "loading"}
    reply = early["http"]
    assert reply.status_code == 503 and reply.headers["retry-after"] == "5"
    error = reply.json()["error"]
    assert (error["code"], error["retry_after"]) == ("model_loading", 5) and REQUEST_ID.match(error["request_id"])
    # Refused in its own dialect.
    assert early["bulbul"] == {"type": "error", "data": {"message": "the model is still loading; retry shortly",
                                                         "code": 503, "retry_after": 5}}
    assert early["bulbul_close"] == 1013


async def test_http_above_capacity_is_shed_at_once_and_slots_come_back(http):
    counts = {key: value for key, value in (await load(http)).items() if "syntheses" in key or "sessions" in key}
    assert counts == {"syntheses": 0, "max_syntheses": 2, "sessions": 0, "max_sessions": 2}
    body = {"text": LONG_TEXT, "stream": True, "format": "pcm_16"}
    async with http.stream("POST", "/invocations", json=body) as first, \
            http.stream("POST", "/invocations", json=body) as second:
        assert first.status_code == second.status_code == 200
        shed = await http.post("/invocations", json={"text": "はい。"})
        # Answered while both slots were still held by streams nobody has read: it did not
        # wait for a slot, so it was shed, not queued.
        assert_overloaded(shed)
        blog = await http.post("/invocations", json={"text": "はい。", "voice": "jf_alpha", "request_timestamp": time.time()})
        assert blog.status_code == 503 and blog.headers["retry-after"] == "3"  # their client: 503 is QueueSaturatedError
        assert blog.json() == {"error": "queue_saturated", "message": "server at capacity, retry later",
                               "request_id": blog.json()["request_id"], "retry_after": 3}
        assert (await load(http))["syntheses"] == 2
        await anext(first.aiter_raw())
    await settled(http)  # both clients went away mid-stream: their work is aborted, the slots come back
    assert (await http.post("/invocations", json={"text": "はい。"})).status_code == 200


async def test_sessions_above_capacity_get_their_dialects_error_and_1013(small, http):
    server, _ = small
    held = [await websockets.connect(server.ws_url) for _ in range(2)]
    for ws in held:
        await ws.send(json.dumps({"type": "open"}).encode())
        assert json.loads(await ws.recv())["type"] == "session.created"
    refusals = {
        "canonical": ({"type": "open"}, {"type": "error", "error": {
            "code": "service_overloaded", "message": "server at capacity, retry later", "retry_after": 3}}),
        "bulbul": ({"type": "config", "data": {}}, {"type": "error", "data": {
            "message": "server at capacity, retry later", "code": 503, "retry_after": 3}}),
        # The blog's client types errors by tokens in the message: queue_saturated is overload.
        "blog": ({"text": "はい。"}, {"type": "error", "request_id": None, "message": "queue_saturated: server at capacity, retry later",
                                      "code": "service_overloaded", "retry_after": 3}),
    }
    for first, expected in refusals.values():
        async with websockets.connect(server.ws_url) as ws:
            await ws.send(json.dumps(first).encode())
            assert json.loads(await ws.recv()) == expected
            with pytest.raises(websockets.ConnectionClosed):
                await ws.recv()
            assert ws.close_code == 1013
    await held[0].close()
    await load_when(http, lambda now: now["sessions"] == 1, "the closed session's slot to come back")
    async with websockets.connect(server.ws_url) as ws:  # a freed slot admits the next session
        await ws.send(json.dumps({"type": "open"}).encode())
        assert json.loads(await ws.recv())["type"] == "session.created"
    await held[1].close()
    await settled(http)


async def test_a_busy_session_counts_against_http_capacity(small, http):
    server, _ = small
    async with websockets.connect(server.ws_url) as ws, \
            http.stream("POST", "/invocations", json={"text": LONG_TEXT, "stream": True}) as streaming:
        await ws.send(json.dumps({"type": "open"}).encode())
        await ws.recv()
        await ws.send(json.dumps({"type": "response.create", "text": LONG_TEXT}).encode())
        assert json.loads(await ws.recv())["type"] == "response.created"
        assert_overloaded(await http.post("/invocations", json={"text": "はい。"}))
        assert streaming.status_code == 200
    await settled(http)


async def one_request(http) -> dict:
    reply = await http.post("/invocations", json={"text": "はい、わかりました。", "format": "pcm_16"})
    result = {"status": reply.status_code}
    if reply.status_code == 200:
        result["audio"] = len(base64.b64decode(reply.json()["audios"][0]))
    else:
        assert_overloaded(reply)
    return result


async def bulbul_turn(url: str, everyone_answered: asyncio.Barrier) -> str:
    """A Bulbul session: spoken or refused. A spoken one keeps its session slot until every
    turn has its answer, so which are refused does not depend on how fast the others speak."""
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps({"type": "config", "data": {"output_audio_codec": "linear16"}}).encode())
        await ws.send(json.dumps({"type": "text", "data": {"text": "はい、わかりました。"}}).encode())
        await ws.send(json.dumps({"type": "flush"}).encode())
        audio = 0
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "audio":
                audio += len(message["data"]["audio"])
            elif message["type"] == "event":
                assert audio > 0
                await everyone_answered.wait()
                return "spoken"
            else:
                assert message["data"]["code"] == 503
                with pytest.raises(websockets.ConnectionClosed):
                    await ws.recv()
                assert ws.close_code == 1013
                await everyone_answered.wait()
                return "refused"


async def pings_while(task: asyncio.Task, http) -> int:
    pings = 0
    while not task.done():
        assert (await http.get("/ping")).status_code == 200, "busy is healthy: /ping stays 200"
        pings += 1
        await asyncio.sleep(0.05)  # a monitor's polling interval, not a wait for anything
    return pings


async def test_past_capacity_every_request_gets_audio_or_a_503_and_the_server_recovers(small, http):
    server, _ = small
    replies: list[dict] = []  # every HTTP reply of the burst

    def admitted() -> list[dict]:
        return [r for r in replies if r["status"] == 200]

    def shed() -> list[dict]:
        return [r for r in replies if r["status"] == 503]

    async def client() -> None:
        """One of 8 clients (4x capacity): requests until 4 were admitted and 8 shed in all;
        after a 503 it pauses briefly (a quick retry)."""
        while len(admitted()) < 4 or len(shed()) < 8:
            replies.append(await one_request(http))  # which asserts: audio, or a well-formed 503
            if replies[-1]["status"] == 503:
                await asyncio.sleep(0.5)  # the client's own back-off before it retries

    async def burst():
        everyone_answered = asyncio.Barrier(4)
        sessions = [bulbul_turn(server.ws_url, everyone_answered) for _ in range(4)]
        return await asyncio.gather(*sessions, *(client() for _ in range(8)))

    task = asyncio.create_task(asyncio.wait_for(burst(), 200))  # nothing may hang
    assert await pings_while(task, http) > 0
    turns = task.result()[:4]
    assert len(admitted()) + len(shed()) == len(replies), "every reply was audio or a 503"
    assert turns.count("spoken") == 2 and turns.count("refused") == 2  # MAX_SESSIONS = 2
    # Load drops: every slot is back and requests are admitted again.
    await settled(http)
    for _ in range(3):
        assert (await one_request(http))["status"] == 200
