"""SPEC §10 on a server of its own with short limits: idle sessions are closed (so they never
starve new clients), a session ends at its maximum lifetime, and a client that sends `close`
and leaves frees its slots at once. The real server and model over loopback."""

import asyncio
import json
import time
import urllib.request

import pytest
import websockets
from running_server import start_server, stop_server
from server.wire import Peer

IDLE_S = 1.5
LIFETIME_S = 4
MAX_SESSIONS = 8


@pytest.fixture(scope="module")
def server():
    running = start_server(env={"SESSION_IDLE_TIMEOUT_S": str(IDLE_S), "MAX_SESSIONS": str(MAX_SESSIONS)},
                           languages="ja")
    yield running
    stop_server(running)


@pytest.fixture(scope="module")
def short_lived_server():
    running = start_server(env={"SESSION_MAX_LIFETIME_S": str(LIFETIME_S)}, languages="ja")
    yield running
    stop_server(running)


def load(server) -> dict:
    with urllib.request.urlopen(server.http_url + "/ping", timeout=10) as reply:
        return json.loads(reply.read())["load"]


async def wait_for_load(server, sessions: int, syntheses: int, limit_s: float) -> dict:
    deadline = time.monotonic() + limit_s
    while (now := await asyncio.to_thread(load, server))["sessions"] != sessions or now["syntheses"] != syntheses:
        assert time.monotonic() < deadline, f"slots still held: {now}"
        await asyncio.sleep(0.05)
    return now


async def ended_by_server(peer: Peer) -> list[dict]:
    """Every event up to the server's close; the close must be clean."""
    events = []
    with pytest.raises(websockets.ConnectionClosedOK):
        while True:
            events.append(await peer.next_event())
    return events


async def test_an_idle_session_is_told_and_closed_cleanly(server):
    peer = await Peer.connect(server.ws_url)
    await peer.open(format="pcm_16")
    events = await ended_by_server(peer)
    assert [e["error"]["code"] for e in events] == ["session_idle_timeout"]
    assert "SESSION_IDLE_TIMEOUT_S" in events[0]["error"]["message"]
    assert peer.connection.close_code == 1000


async def test_a_session_speaking_is_not_idle(server):
    peer = await Peer.connect(server.ws_url)
    await peer.open(format="pcm_16")
    text = "今日はとても良い天気ですね。" * 5  # seconds of synthesis, longer than IDLE_S
    await peer.send({"type": "response.create", "text": text, "response_id": "a"})
    (done,) = await peer.until_done("a")
    assert done["status"] == "completed"
    await ended_by_server(peer)  # and idle after it


async def test_idle_sessions_do_not_lock_out_new_clients(server):
    idle = [await Peer.connect(server.ws_url) for _ in range(MAX_SESSIONS)]
    for peer in idle:
        await peer.open()
    refused = await Peer.connect(server.ws_url)
    await refused.send({"type": "open"})
    assert (await refused.next_event())["error"]["code"] == "service_overloaded"  # the cap is real
    for peer in idle:
        await ended_by_server(peer)
    await wait_for_load(server, sessions=0, syntheses=0, limit_s=10)
    ninth = await Peer.connect(server.ws_url)
    assert (await ninth.open())["type"] == "session.created"
    await ninth.close()


async def test_a_session_ends_at_its_maximum_lifetime_even_when_busy(short_lived_server):
    peer = await Peer.connect(short_lived_server.ws_url)
    await peer.open()
    opened = time.monotonic()
    try:
        while True:  # never idle: a ping every 0.2 s
            await peer.send({"type": "ping"})
            await peer.until(lambda e: e["type"] == "pong")
            await asyncio.sleep(0.2)
    except websockets.ConnectionClosedOK:
        pass
    await ended_by_server(peer)  # what arrived before the close
    (error,) = peer.received.of("error")
    assert error["error"]["code"] == "session_lifetime_exceeded"
    assert time.monotonic() - opened >= LIFETIME_S
    assert peer.connection.close_code == 1000


async def test_close_then_leave_frees_everything_at_once(server):
    peer = await Peer.connect(server.ws_url)
    await peer.open(format="pcm_16")
    long_text = "今日はとても良い天気ですね。" * 20  # minutes of synthesis in all: nobody will hear it
    for rid in "abcde":
        await peer.send({"type": "response.create", "text": long_text, "response_id": rid})
    await peer.until(lambda e: e["type"] == "response.created")
    await peer.send({"type": "close"})
    peer.connection.transport.abort()  # gone, without a closing handshake
    # Before, `close` drained the queue without reading: the slots stayed held for minutes (the
    # queued speech). The limit only tells that apart; generous for a loaded machine.
    await wait_for_load(server, sessions=0, syntheses=0, limit_s=15)
