"""One abort path frees a session's or an HTTP request's state everywhere: the session engine's
queue and active response, its admission slot, the renderer's pieces, the scheduler's stream and
queued jobs, and (HTTP) the audio buffer. Real scheduler, a synthesizer double held mid-piece."""


from tts_server.admission import Gauge
from tts_server.session.engine import SessionEngine
from tts_server.session.events import ResponseDone
from tts_server.session.response import ResponseState
from tts_server.transport.http_synthesis import Synthesis
from waiting import until

from server.session.test_session_engine import ScriptedSynthesizer, request, scripted_runtime


def held_engine():
    synthesizer = ScriptedSynthesizer()
    synthesizer.gate.clear()  # the model holds its first piece until the test opens it
    runtime = scripted_runtime(synthesizer)
    slots = Gauge(lambda: 10)
    events = []

    async def emit(event):
        events.append(event)

    return SessionEngine(runtime, emit, 15, hold=slots.take), runtime, synthesizer, slots, events


async def test_abort_frees_the_queue_the_slot_and_the_schedulers_stream():
    engine, runtime, synthesizer, slots, events = held_engine()
    scheduler = runtime.scheduler
    await engine.submit(request("あ。い。う。", rid="a"))
    await engine.submit(request("え。", rid="b"))
    await until(lambda: synthesizer.waiting == 1, "the first piece on the model")  # the next one queued
    assert slots.in_use == 1 and scheduler.active_streams == 1
    await engine.abort()
    assert engine.outstanding and slots.in_use == 0, "the slot is back at once; the session reports nothing"
    assert scheduler.queued_first_pieces == 0 and not scheduler._pending, "no job of the aborted response waits"
    synthesizer.gate.set()
    await until(lambda: scheduler.active_streams == 0, "the stream freed once its run ended")
    assert not [e for e in events if isinstance(e, ResponseDone)], "an abort reports nothing"
    await scheduler.stop()


async def test_an_http_synthesis_closed_by_its_reader_frees_the_buffer_too():
    synthesizer = ScriptedSynthesizer()
    runtime = scripted_runtime(synthesizer)
    slots = Gauge(lambda: 10)
    synthesis = Synthesis(runtime, request("あいうえお。かきくけこ。", rid="h"), slots.take(), buffer_bytes=1)
    await synthesis.start()
    await until(lambda: synthesis.buffer.held_bytes > 0, "audio waiting for a reader that never comes")
    await synthesis.close()
    assert synthesis.buffer.held_bytes == 0 and slots.in_use == 0
    await until(lambda: runtime.scheduler.active_streams == 0, "the stream freed")
    await runtime.scheduler.stop()


async def test_a_cancelled_queued_response_goes_straight_to_done():
    engine, runtime, synthesizer, _, events = held_engine()
    await engine.submit(request("あ。", rid="a"))
    await engine.submit(request("い。", rid="b"))
    queued = engine._queue[0]
    assert queued.state is ResponseState.QUEUED
    await engine.cancel("b")
    assert queued.state is ResponseState.DONE
    active = engine._active
    assert active.state is ResponseState.ACTIVE
    synthesizer.gate.set()
    await until(lambda: active.state is ResponseState.DONE, "the active response done")
    await runtime.scheduler.stop()
