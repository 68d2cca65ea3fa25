"""The session engine's state machine, on a test double of the synthesizer (no model)."""

import asyncio
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tts_server.audio.formats import negotiate
from tts_server.engine.output import Alignment, SegmentAudio
from tts_server.engine.tokens import Job, Piece
from tts_server.wire.errors import ProtocolError
from tts_server.runtime import ModelRuntime
from tts_server.session.engine import SessionEngine
from tts_server.session.events import AudioChunk, ResponseCreated, ResponseDone, ResponseQueued
from tts_server.session.request import ResponseRequest, Voice
from tts_server.settings import Settings
from waiting import GENEROUS_S, until


class ScriptedSynthesizer:
    """100 ms of tone per character; 'FAIL' in a sentence raises; a gate can hold the model.

    Stands in for the synthesizer's three steps (prepare, the runner's run, assemble) behind the
    real scheduler."""

    max_batch = 1

    def __init__(self):
        self.gate = threading.Event()
        self.gate.set()
        self.calls = []
        self.runner = self
        self.waiting = 0  # inference calls held at the gate right now

    def prepare(self, text, start, end, style, speed, language):
        job = Job(tuple(range(end - start)), style, speed)
        return Piece(text, start, end, [], [], [job], 0.0)

    def run(self, jobs, control=None):
        return [self._infer(job) for job in jobs]

    def _infer(self, job):
        self.waiting += 1
        self.gate.wait(GENEROUS_S)  # only a test that forgets to open it waits this long
        self.waiting -= 1
        return len(job.ids)

    def assemble(self, piece, results, engine_seconds):
        sentence = piece.text[piece.start : piece.end]
        self.calls.append(sentence)
        if "FAIL" in sentence:
            raise RuntimeError("engine exploded")
        samples = np.full(2400 * results[0], 0.1, np.float32)
        alignments = [Alignment(sentence, piece.start, piece.end, 0, 100 * len(sentence))]
        return SegmentAudio(samples, alignments, engine_seconds)


def scripted_runtime(synthesizer):
    """A runtime whose scheduler runs the double (call inside the event loop)."""
    runtime = ModelRuntime(lambda: synthesizer, Settings(fast_first_fragment_chars=0))
    runtime.synthesizer = synthesizer
    runtime.scheduler.runner = synthesizer
    runtime.scheduler.start()
    return runtime


def make_engine(max_pending=15):
    synthesizer = ScriptedSynthesizer()
    runtime = scripted_runtime(synthesizer)
    events = []

    async def emit(event):
        events.append(event)

    return SessionEngine(runtime, emit, max_pending), synthesizer, events


def request(text="あ。い。", rid=None, **kwargs):
    voice = Voice("ja", np.zeros((510, 256), np.float32), 1.0)
    extra = {"response_id": rid} if rid else {}
    return ResponseRequest(text, voice, negotiate("pcm_16"), **kwargs, **extra)


def summary(events):
    return [(type(e).__name__, e.response_id, getattr(e, "status", None)) for e in events if not isinstance(e, AudioChunk)]


async def test_fifo_one_at_a_time_with_created_before_queued():
    engine, _, events = make_engine()
    for rid in "abc":
        await engine.submit(request(rid=rid))
    await engine.drain()
    assert summary(events) == [
        ("ResponseCreated", "a", None), ("ResponseQueued", "b", None), ("ResponseQueued", "c", None),
        ("ResponseDone", "a", "completed"), ("ResponseCreated", "b", None), ("ResponseDone", "b", "completed"),
        ("ResponseCreated", "c", None), ("ResponseDone", "c", "completed"),
    ]


async def test_each_sentence_is_its_own_chunk_and_sequence_counts_up():
    engine, synthesizer, events = make_engine()
    await engine.submit(request("一。二。三。", rid="r", with_timestamps=True))
    await engine.drain()
    chunks = [e for e in events if isinstance(e, AudioChunk)]
    assert synthesizer.calls == ["一。", "二。", "三。"]
    assert [c.sequence for c in chunks] == [0, 1, 2]
    # Timestamps of later sentences are offset by the audio before them.
    assert [c.alignments[0].start_ms for c in chunks] == [0, 200, 400]
    assert events[-1].audio_ms == 600


async def test_cancel_active_reports_cancelled_at_once_while_inference_is_stuck():
    engine, synthesizer, events = make_engine()
    synthesizer.gate.clear()  # inference hangs
    await engine.submit(request(rid="stuck"))
    await engine.submit(request(rid="next"))
    await until(lambda: synthesizer.waiting, "inference to be stuck at the gate")
    await engine.cancel(None)
    # Reported while inference is still stuck: the done does not wait for the engine.
    await until(lambda: ("ResponseDone", "stuck", "cancelled") in summary(events), "the cancelled response.done")
    assert synthesizer.waiting
    synthesizer.gate.set()
    await engine.drain()
    assert summary(events)[-2:] == [("ResponseCreated", "next", None), ("ResponseDone", "next", "completed")]
    assert not [e for e in events if isinstance(e, AudioChunk) and e.response_id == "stuck"]


async def test_failure_is_reported_once_and_the_session_goes_on():
    engine, _, events = make_engine()
    await engine.submit(request("FAIL。", rid="bad"))
    await engine.submit(request(rid="good"))
    await engine.drain()
    done = {e.response_id: e for e in events if isinstance(e, ResponseDone)}
    assert done["bad"].status == "failed"
    assert done["bad"].error.code == "internal_error"
    assert "exploded" not in done["bad"].error.message, "internals never leak"
    assert done["good"].status == "completed"


async def test_queue_bound_and_duplicate_ids_raise_without_queueing():
    engine, synthesizer, events = make_engine(max_pending=2)
    synthesizer.gate.clear()
    for rid in "abc":
        await engine.submit(request(rid=rid))
    with pytest.raises(ProtocolError) as too_many:
        await engine.submit(request(rid="d"))
    assert too_many.value.code == "too_many_queued_responses"
    with pytest.raises(ProtocolError) as duplicate:
        await engine.submit(request(rid="b"))
    assert duplicate.value.code == "duplicate_response_id"
    assert engine.outstanding == ["a", "b", "c"]
    synthesizer.gate.set()
    await engine.drain()


async def test_unknown_cancel_names_the_outstanding_ids():
    engine, _, _ = make_engine()
    with pytest.raises(ProtocolError) as nothing_active:
        await engine.cancel(None)
    assert nothing_active.value.code == "response_not_found"
    with pytest.raises(ProtocolError) as unknown:
        await engine.cancel("nope")
    assert "'nope'" in unknown.value.message


operations = st.lists(
    st.one_of(
        st.tuples(st.just("submit"), st.sampled_from("abcde"), st.sampled_from(["あ。", "い。う。", "FAIL。"])),
        st.tuples(st.just("cancel"), st.sampled_from([None, "a", "b", "c", "d", "e"]), st.none()),
        st.tuples(st.just("pause"), st.none(), st.none()),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(operations)
def test_every_accepted_response_gets_exactly_one_done(ops):
    async def scenario():
        engine, _, events = make_engine(max_pending=3)
        accepted = []
        for op, arg, text in ops:
            try:
                if op == "submit":
                    await engine.submit(request(text, rid=arg))
                    accepted.append(arg)
                elif op == "cancel":
                    await engine.cancel(arg)
                else:  # lets inference threads run a little: another interleaving, not a wait
                    await asyncio.sleep(0.002)
            except ProtocolError:
                pass
        await asyncio.wait_for(engine.drain(), GENEROUS_S)
        done_ids = [e.response_id for e in events if isinstance(e, ResponseDone)]
        assert sorted(done_ids) == sorted(accepted)
        # Per response: created or queued first, done last, no audio after done.
        for i, event in enumerate(events):
            if isinstance(event, ResponseDone):
                later = events[i + 1 :]
                # An id may be reused after done: stop at its next create/queue.
                for e in later:
                    if isinstance(e, (ResponseCreated, ResponseQueued)) and e.response_id == event.response_id:
                        break
                    assert not (isinstance(e, AudioChunk) and e.response_id == event.response_id)

    asyncio.run(scenario())


async def test_cancel_while_response_created_is_still_being_sent():
    synthesizer = ScriptedSynthesizer()
    runtime = scripted_runtime(synthesizer)
    events, slow_socket = [], asyncio.Event()

    async def emit(event):
        if isinstance(event, ResponseCreated) and event.response_id == "b":
            await slow_socket.wait()  # the frame is stuck on a slow socket
        events.append(event)

    engine = SessionEngine(runtime, emit, 15)
    await engine.submit(request(rid="a"))
    await engine.submit(request(rid="b"))
    await until(lambda: engine.outstanding == ["b"], "b to be announcing its response.created")
    await engine.cancel("b")
    slow_socket.set()
    await engine.drain()
    assert summary(events)[-2:] == [("ResponseCreated", "b", None), ("ResponseDone", "b", "cancelled")]
    assert not [e for e in events if isinstance(e, AudioChunk) and e.response_id == "b"]
    # That cancel belonged to b alone: the session's next response runs to the end.
    await engine.submit(request(rid="c"))
    await engine.drain()
    assert summary(events)[-2:] == [("ResponseCreated", "c", None), ("ResponseDone", "c", "completed")]
    assert [e.sequence for e in events if isinstance(e, AudioChunk) and e.response_id == "c"] == [0, 1]
