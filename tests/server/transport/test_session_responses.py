"""Responses on one session: streaming, pipelining, cancel, the queue bound, errors, close."""

import json

import httpx
import pytest
import websockets
from server.wire import Peer
from waiting import until

THREE_SENTENCES = "おはようございます。今日は晴れです。また明日。"


@pytest.fixture
async def peer(speech_server):
    peer = await Peer.connect(speech_server.ws_url)
    created = await peer.open(format="pcm_16", audio_frames="binary")
    assert created["type"] == "session.created"
    yield peer
    await peer.close()


async def test_audio_streams_sentence_by_sentence_before_done(peer):
    await peer.send({"type": "response.create", "text": THREE_SENTENCES, "response_id": "r1"})
    assert (await peer.next_event()) == {"type": "response.created", "response_id": "r1"}
    events = []
    while not events or events[-1]["type"] != "response.done":
        events.append(await peer.next_event())
    chunks = [e for e in events if e["type"] == "audio.chunk"]
    assert len(chunks) >= 3, "each sentence's audio is sent as soon as it exists"
    assert [c["sequence"] for c in chunks] == list(range(len(chunks)))
    done = events[-1]
    assert done["status"] == "completed"
    assert done["usage"]["characters"] == len(THREE_SENTENCES)
    pcm = peer.audio_of("r1")
    assert done["usage"]["audio_ms"] == pytest.approx(len(pcm) / 2 / 24000 * 1000, abs=1)
    assert done["usage"]["audio_ms"] > 2000


async def test_many_messages_on_one_session_in_fifo_order(peer):
    ids = ["first", "second", "third"]
    for i, rid in enumerate(ids):
        await peer.send({"type": "response.create", "text": f"{i + 1}番目です。", "response_id": rid})
    await peer.until_done(*ids)
    lifecycle = [(e["type"], e.get("response_id")) for e in peer.received.events if e["type"].startswith("response.")]
    assert lifecycle == [
        ("response.created", "first"),
        ("response.queued", "second"),
        ("response.queued", "third"),
        ("response.done", "first"),
        ("response.created", "second"),
        ("response.done", "second"),
        ("response.created", "third"),
        ("response.done", "third"),
    ]
    for rid in ids:
        assert len(peer.audio_of(rid)) > 0
        assert peer.received.done(rid)["status"] == "completed"


async def test_cancel_queued_response_never_starts(peer):
    await peer.send({"type": "response.create", "text": "最初の文です。", "response_id": "a"})
    await peer.send({"type": "response.create", "text": "取り消されます。", "response_id": "b"})
    await peer.send({"type": "response.create", "text": "最後です。", "response_id": "c"})
    await peer.until(lambda e: e["type"] == "response.queued" and e["response_id"] == "c")
    await peer.send({"type": "response.cancel", "response_id": "b"})
    await peer.until_done("a", "b", "c")
    assert peer.received.done("b")["status"] == "cancelled"
    assert [e for e in peer.received.events if e.get("response_id") == "b" and e["type"] in ("response.created", "audio.chunk")] == []
    assert peer.received.done("c")["status"] == "completed"


async def test_cancel_active_stops_audio_at_once_and_the_next_starts(peer):
    long_text = "これは長い文章です。" * 12
    await peer.send({"type": "response.create", "text": long_text, "response_id": "long"})
    await peer.send({"type": "response.create", "text": "次です。", "response_id": "next"})
    await peer.until(lambda e: e["type"] == "audio.chunk" and e["response_id"] == "long")
    await peer.send({"type": "response.cancel"})  # no id: the active one
    done = await peer.until(lambda e: e["type"] == "response.done")
    assert (done["response_id"], done["status"]) == ("long", "cancelled")
    after = []
    while not after or after[-1]["type"] != "response.done":
        after.append(await peer.next_event())
    assert all(e.get("response_id") != "long" for e in after), "no audio for a cancelled response"
    assert after[0] == {"type": "response.created", "response_id": "next"}
    assert after[-1]["status"] == "completed"


async def test_queue_bound_rejects_one_more_without_harming_the_rest(peer):
    # Default WS_MAX_PENDING_RESPONSES = 15: one active, fifteen queued, the next refused.
    for i in range(17):
        await peer.send({"type": "response.create", "text": "はい。", "response_id": f"q{i}"})
    error = await peer.until(lambda e: e["type"] == "error")
    assert error["error"]["code"] == "too_many_queued_responses"
    assert error["error"]["response_id"] == "q16"
    assert "15" in error["error"]["message"]
    queued = [e["response_id"] for e in peer.received.of("response.queued")]
    assert queued == [f"q{i}" for i in range(1, 16)]
    for i in range(1, 16):
        await peer.send({"type": "response.cancel", "response_id": f"q{i}"})
    done = await peer.until_done(*[f"q{i}" for i in range(16)])
    assert {d["response_id"]: d["status"] for d in done} == {"q0": "completed"} | {f"q{i}": "cancelled" for i in range(1, 16)}
    assert [d for d in peer.received.of("response.done") if d["response_id"] == "q16"] == []


async def test_bad_frames_are_non_fatal_and_the_next_request_works(peer):
    bad = [
        (b"\xff\xfe\x00", "invalid_request_error", "UTF-8"),
        (b"{not json", "invalid_request_error", "Invalid JSON"),
        (b"[1, 2]", "invalid_request_error", "JSON object"),
        ({"type": "response.explode"}, "unknown_event_type", "'response.create'"),
        ({"type": "response.create"}, "invalid_request_error", "text: Field required"),
        ({"type": "response.create", "text": ""}, "invalid_request_error", "text: String should have at least 1 character"),
        ({"type": "response.create", "text": "あ" * 3501}, "invalid_request_error", "text: String should have at most 3500 characters"),
        ({"type": "response.create", "text": "はい", "speed": 0.1}, "invalid_request_error", "speed: Input should be greater than or equal to 0.5"),
        ({"type": "response.create", "text": "はい", "speaker_id": "x"}, "invalid_request_error", "speaker_id: Input should be"),
        ({"type": "response.cancel", "response_id": "ghost"}, "response_not_found", "'ghost'"),
        ({"type": "response.cancel"}, "response_not_found", "no active response"),
        ({"type": "open"}, "invalid_request_error", "already open"),
    ]
    for frame, code, words in bad:
        await peer.send(frame)
        error = await peer.next_event()
        assert error["type"] == "error", frame
        assert error["error"]["code"] == code, frame
        assert words in error["error"]["message"], (frame, error)
        assert "Traceback" not in error["error"]["message"]
    await peer.send({"type": "response.create", "text": "まだ大丈夫です。", "response_id": "ok"})
    (done,) = await peer.until_done("ok")
    assert done["status"] == "completed"
    assert len(peer.audio_of("ok")) > 0


async def test_duplicate_response_id_is_refused_while_outstanding_and_reusable_after(peer):
    await peer.send({"type": "response.create", "text": "一回目。", "response_id": "same"})
    await peer.send({"type": "response.create", "text": "二回目。", "response_id": "same"})
    error = await peer.until(lambda e: e["type"] == "error")
    assert error["error"]["code"] == "duplicate_response_id"
    assert error["error"]["response_id"] == "same"
    await peer.until_done("same")
    await peer.send({"type": "response.create", "text": "三回目。", "response_id": "same"})
    done = await peer.until(lambda e: e["type"] == "response.done")
    assert (done["response_id"], done["status"]) == ("same", "completed")
    assert len(peer.received.of("response.done")) == 2


async def test_server_assigns_ids_when_absent(peer):
    await peer.send({"type": "response.create", "text": "はい。"})
    created = await peer.next_event()
    assert created["type"] == "response.created"
    assert len(created["response_id"]) == 36
    done = await peer.until(lambda e: e["type"] == "response.done")
    assert done["response_id"] == created["response_id"]


async def test_max_length_truncates_audio(peer):
    await peer.send({"type": "response.create", "text": THREE_SENTENCES, "response_id": "t", "max_length": 700, "with_timestamps": True})
    (done,) = await peer.until_done("t")
    assert done["status"] == "truncated"
    pcm = peer.audio_of("t")
    assert len(pcm) / 2 / 24000 * 1000 == pytest.approx(700, abs=1)
    assert done["usage"]["audio_ms"] == pytest.approx(700, abs=1)
    alignments = [a for c in peer.received.of("audio.chunk") for a in c["alignments"]]
    assert all(a["end_ms"] <= 700 for a in alignments)


async def test_per_response_overrides_change_the_voice_and_speed(peer):
    text = "今日は晴れです。"
    await peer.send({"type": "response.create", "text": text, "response_id": "normal"})
    await peer.send({"type": "response.create", "text": text, "response_id": "fast", "speed": 2.0, "speaker_id": "jm_kumo"})
    await peer.until_done("normal", "fast")
    assert len(peer.audio_of("fast")) < 0.75 * len(peer.audio_of("normal"))


async def test_close_drains_queued_responses_then_closes_1000(peer):
    await peer.send({"type": "response.create", "text": "一つ目。", "response_id": "x"})
    await peer.send({"type": "response.create", "text": "二つ目。", "response_id": "y"})
    await peer.send({"type": "close"})
    await peer.until_done("x", "y")
    assert (await peer.next_event()) == {"type": "session.closed"}
    with pytest.raises(websockets.ConnectionClosed):
        await peer.next_event()
    assert peer.connection.close_code == 1000
    assert [d["status"] for d in peer.received.of("response.done")] == ["completed", "completed"]


async def test_ping_is_answered_with_pong(peer):
    await peer.send({"type": "ping"})
    assert (await peer.next_event()) == {"type": "pong"}


async def test_client_disconnect_mid_response_leaves_the_server_healthy(speech_server):
    async with websockets.connect(speech_server.ws_url) as ws:
        await ws.send(json.dumps({"type": "open"}).encode())
        await ws.recv()
        await ws.send(json.dumps({"type": "response.create", "text": "切断されます。" * 5}).encode())
        await ws.recv()  # response.created: the work is under way when the client vanishes
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=30) as http:
        async def everything_freed():
            load = (await http.get("/ping")).json()["load"]
            return load["sessions"] == 0 and load["syntheses"] == 0
        await until(everything_freed, "the vanished session's slots to come back", poll=0.05)
    peer = await Peer.connect(speech_server.ws_url)
    await peer.open()
    await peer.send({"type": "response.create", "text": "大丈夫。", "response_id": "alive"})
    (done,) = await peer.until_done("alive")
    assert done["status"] == "completed"
    await peer.close()
