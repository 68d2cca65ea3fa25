"""SIGTERM (SageMaker's scale-in and endpoint updates): /ping turns 503, new work gets the
overload answer, the active responses finish, every session closes with 1001 after a final
event, and the process exits 0. Each test runs its own real server (with the real model)."""

import asyncio
import json
import signal
import urllib.error
import urllib.request

import pytest
import websockets
from running_server import start_server, stop_server
from server.wire import Peer

SENTENCE = "今日はいい天気ですね。"


@pytest.fixture
def server_factory():
    started = []

    def start(**env):
        started.append(start_server(env=env, languages="ja"))
        return started[-1]

    yield start
    for server in started:
        stop_server(server)  # one that has exited too: its TMPDIR goes with it


def http_status(url: str, body: dict | None = None) -> int:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code


async def wait_for_ping(server, status: int) -> None:
    while await asyncio.to_thread(http_status, server.http_url + "/ping") != status:
        await asyncio.sleep(0.05)


async def rest_of_session(peer: Peer) -> list[dict]:
    with pytest.raises(websockets.ConnectionClosedOK):
        while True:
            await peer.next_event()
    return peer.received.events


async def test_sigterm_lets_active_responses_finish_then_closes_with_1001_and_exits_0(server_factory):
    server = server_factory(SHUTDOWN_DEADLINE_S="120")
    peers = [await Peer.connect(server.ws_url) for _ in range(2)]
    for peer in peers:
        await peer.open(format="pcm_16", audio_frames="binary")
        await peer.send({"type": "response.create", "text": SENTENCE * 2, "response_id": "now"})
        await peer.send({"type": "response.create", "text": SENTENCE, "response_id": "later"})
        await peer.until(lambda e: e["type"] == "response.created")
    server.process.send_signal(signal.SIGTERM)
    await wait_for_ping(server, 503)

    assert await asyncio.to_thread(http_status, server.http_url + "/invocations", {"text": "はい。"}) == 503
    newcomer = await Peer.connect(server.ws_url)
    await newcomer.send({"type": "open"})
    assert (await newcomer.next_event())["error"]["code"] == "service_overloaded"

    for peer in peers:
        events = await rest_of_session(peer)
        assert peer.received.done("now")["status"] == "completed", "the active response finished"
        assert len(peer.audio_of("now")) > 0
        assert peer.received.done("later")["status"] == "cancelled", "a queued one never starts"
        assert events[-1]["type"] == "error" and events[-1]["error"]["code"] == "server_shutting_down"
        assert peer.connection.close_code == 1001
    assert await asyncio.to_thread(server.process.wait, 60) == 0


async def test_the_deadline_cuts_a_response_still_running(server_factory):
    server = server_factory(SHUTDOWN_DEADLINE_S="0.5")
    peer = await Peer.connect(server.ws_url)
    await peer.open(format="pcm_16", audio_frames="binary")
    await peer.send({"type": "response.create", "text": SENTENCE * 30, "response_id": "long"})
    await peer.until(lambda e: e["type"] == "audio.chunk")
    server.process.send_signal(signal.SIGTERM)
    events = await rest_of_session(peer)
    assert peer.received.done("long")["status"] == "cancelled"
    assert events[-1]["error"]["code"] == "server_shutting_down" and peer.connection.close_code == 1001
    assert await asyncio.to_thread(server.process.wait, 60) == 0
