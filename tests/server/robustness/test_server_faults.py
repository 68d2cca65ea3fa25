"""SPEC §10 / issue 10: a server fault inside a response still ends it with exactly one
`response.done` (`failed`, logged with the session and response ids) and the session goes on;
a fault that leaves the session unable to keep its promises closes it with 1011 and a log line.
On the real application with an engine double, faults injected where they cannot be provoked
from outside."""

import logging

import pytest
import websockets
from server.robustness.inprocess import CountingSynthesizer, serving
from server.wire import Peer

from tts_server.families.canonical.websocket import CanonicalDialect
from tts_server.session.engine import SessionEngine
from tts_server.session.events import ResponseDone


@pytest.fixture(scope="module")
def server():
    with serving(CountingSynthesizer()) as running:
        yield running


def url(server) -> str:
    return f"ws://127.0.0.1:{server.port}/invocations-bidirectional-stream"


async def test_a_fault_in_the_finishing_task_is_a_failed_done_and_the_session_goes_on(server, monkeypatch, caplog):
    judge = SessionEngine._outcome

    def faulty(self, response):
        if response.response_id == "boom":
            raise RuntimeError("injected fault while finishing")
        return judge(self, response)

    monkeypatch.setattr(SessionEngine, "_outcome", faulty)
    peer = await Peer.connect(url(server))
    created = await peer.open(format="pcm_16")
    for rid in ("boom", "after"):
        await peer.send({"type": "response.create", "text": "はい。", "response_id": rid})
    await peer.until_done("boom", "after")
    failed = peer.received.done("boom")
    assert failed["status"] == "failed" and failed["error"]["code"] == "internal_error"
    assert "injected" not in str(failed), "never the fault's text"
    assert peer.received.done("after")["status"] == "completed", "the session went on"
    assert [e["response_id"] for e in peer.received.of("response.done")] == ["boom", "after"], "exactly one each"
    (record,) = [r for r in caplog.records if "injected fault" in str(r.exc_info)]
    assert created["session_id"] in record.getMessage() and "boom" in record.getMessage()
    await peer.close()


async def test_a_done_that_cannot_be_sent_closes_the_session_with_1011(server, monkeypatch, caplog):
    render = CanonicalDialect._on_session_event

    async def faulty(self, event):
        if isinstance(event, ResponseDone) and event.response_id == "break":
            raise TypeError("injected bug rendering response.done")
        await render(self, event)

    monkeypatch.setattr(CanonicalDialect, "_on_session_event", faulty)
    peer = await Peer.connect(url(server))
    created = await peer.open()
    await peer.send({"type": "response.create", "text": "はい。", "response_id": "break"})
    with pytest.raises(websockets.ConnectionClosedError):
        while True:
            await peer.next_event()
    assert peer.connection.close_code == 1011
    assert peer.received.events[-1]["error"]["code"] == "internal_error"
    assert any(created["session_id"] in r.getMessage() and r.levelno >= logging.ERROR for r in caplog.records)
    other = await Peer.connect(url(server))  # the server goes on
    assert (await other.open())["type"] == "session.created"
    await other.close()
