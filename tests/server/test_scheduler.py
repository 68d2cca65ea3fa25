"""The scheduler's order, batching, cancellation and preemption, on a model double whose runs a
test releases."""

import asyncio
import threading

import numpy as np
import pytest

from tts_server import scheduler as scheduler_module
from tts_server.engine.backend import Interrupted
from tts_server.engine.tokens import Job
from tts_server.scheduler import Scheduler
from waiting import until as until_condition


class GatedRunner:
    """Records each batch (as the job lengths it got) and holds it until the test releases it."""

    interruptible = False

    def __init__(self, max_batch=1):
        self.max_batch = max_batch
        self.batches = []
        self.release = threading.Semaphore(0)

    def run(self, jobs, control=None):
        self.batches.append([len(job.ids) for job in jobs])
        self.release.acquire(timeout=10)
        return [len(job.ids) for job in jobs]


class InterruptibleRunner(GatedRunner):
    """Also ends a run when the scheduler interrupts it, as the real backends do."""

    interruptible = True

    def __init__(self):
        super().__init__()
        self.interrupted = []

    def run(self, jobs, control=None):
        self.batches.append([len(job.ids) for job in jobs])
        control.on_interrupt(self.release.release)
        self.release.acquire(timeout=10)
        if control.interrupted:
            self.interrupted.append([len(job.ids) for job in jobs])
            raise Interrupted
        return [len(job.ids) for job in jobs]


class ThreadRecordingRunner(GatedRunner):
    """Also records the thread each run ran on."""

    def __init__(self):
        super().__init__()
        self.threads = []

    def run(self, jobs, control=None):
        self.threads.append(threading.get_ident())
        return super().run(jobs, control)


def job(length):
    return Job(tuple(range(length)), np.zeros(256, np.float32), 1.0)


async def started(max_batch=1, runner=None, preemption=True):
    scheduler = Scheduler(preemption)
    scheduler.runner = runner or GatedRunner(max_batch)
    scheduler.start()
    return scheduler


async def until(condition):
    await until_condition(condition, "the scheduler to reach the state the test needs")  # generous on a busy machine


async def test_first_pieces_go_first_then_the_stream_that_runs_dry_soonest():
    scheduler = await started()
    ahead, behind, newcomer = (scheduler.open_stream(name) for name in ("ahead", "behind", "new"))
    ahead.sent(10.0)  # ten seconds of audio already with its listener
    behind.sent(1.0)
    blocker = asyncio.ensure_future(scheduler.run([job(7)], scheduler.open_stream("blocker"), first=True))
    await until(lambda: scheduler.runner.batches)  # the model is busy: the rest queues
    waiting = [asyncio.ensure_future(scheduler.run([job(length)], stream, first))
               for length, stream, first in ((10, ahead, False), (20, behind, False), (30, newcomer, True))]
    await until(lambda: len(scheduler._pending) == 3)
    for _ in range(4):
        scheduler.runner.release.release()
    await asyncio.gather(blocker, *waiting)
    assert scheduler.runner.batches == [[7], [30], [20], [10]]
    await scheduler.stop()


async def test_a_cancelled_response_leaves_the_queue_at_once_and_its_running_result_is_dropped():
    scheduler = await started()
    gone, other = scheduler.open_stream("gone"), scheduler.open_stream("other")
    running = asyncio.ensure_future(scheduler.run([job(5)], gone, first=True))
    await until(lambda: scheduler.runner.batches)
    queued = asyncio.ensure_future(scheduler.run([job(6)], gone, first=False))
    kept = asyncio.ensure_future(scheduler.run([job(8)], other, first=True))
    await until(lambda: len(scheduler._pending) == 2)
    running.cancel()
    queued.cancel()
    scheduler.finish_stream(gone)
    await until(lambda: len(scheduler._pending) == 1)
    assert scheduler.active_streams == 2, "the cancelled stream counts until the model is free of it"
    scheduler.runner.release.release()
    await until(lambda: len(scheduler.runner.batches) == 2)
    assert scheduler.active_streams == 1
    scheduler.runner.release.release()
    results, _ = await kept
    assert results == [8] and scheduler.runner.batches == [[5], [8]], "the queued piece never ran"
    with pytest.raises(asyncio.CancelledError):
        await running
    await scheduler.stop()


async def test_a_batch_takes_urgent_jobs_of_similar_length():
    scheduler = await started(max_batch=3)
    blocker = asyncio.ensure_future(scheduler.run([job(50)], scheduler.open_stream("b"), first=True))
    await until(lambda: scheduler.runner.batches)
    lengths = [40, 400, 60, 30, 45]
    waiting = [asyncio.ensure_future(scheduler.run([job(n)], scheduler.open_stream(str(n)), first=True))
               for n in lengths]
    await until(lambda: len(scheduler._pending) == len(lengths))
    for _ in range(4):
        scheduler.runner.release.release()
    await asyncio.gather(blocker, *waiting)
    assert scheduler.runner.batches == [[50], [40, 60, 30], [400], [45]]
    assert scheduler.batch_sizes == {1: 3, 3: 1}
    await scheduler.stop()


async def test_a_failed_model_run_fails_each_waiting_piece():
    class Failing(GatedRunner):
        def run(self, jobs, control=None):
            raise RuntimeError("model exploded")

    scheduler = Scheduler(preemption=True)
    scheduler.runner = Failing()
    scheduler.start()
    with pytest.raises(RuntimeError, match="model exploded"):
        await scheduler.run([job(3)], scheduler.open_stream("s"), first=True)
    await scheduler.stop()


@pytest.fixture
def clock(monkeypatch):
    """The scheduler's model-run clock, set by the test: `clock[0] = seconds`."""
    now = [0.0]
    monkeypatch.setattr(scheduler_module, "clock", lambda: now[0])
    return now


async def test_a_first_piece_interrupts_a_barely_started_piece_which_then_runs_again_unstoppable(clock):
    scheduler = await started(runner=InterruptibleRunner())
    runner = scheduler.runner
    a, b, c = (scheduler.open_stream(name) for name in "abc")
    later = asyncio.ensure_future(scheduler.run([job(40)], a, first=False))
    await until(lambda: runner.batches)
    first = asyncio.ensure_future(scheduler.run([job(10)], b, first=True))
    await until(lambda: len(runner.batches) == 2)
    assert runner.interrupted == [[40]] and runner.batches == [[40], [10]], "the first piece went first at once"
    runner.release.release()
    assert (await first)[0] == [10]
    await until(lambda: len(runner.batches) == 3)  # the stopped piece, back on the model
    another = asyncio.ensure_future(scheduler.run([job(12)], c, first=True))
    await until(lambda: scheduler.queued_first_pieces == 1)
    assert runner.interrupted == [[40]], "a piece is stopped once at most"
    runner.release.release()
    assert (await later)[0] == [40], "the stopped piece's result arrives as if nothing happened"
    runner.release.release()
    assert (await another)[0] == [12]
    assert runner.batches == [[40], [10], [40], [12]]
    assert scheduler.interruptions == {"first piece": 1}
    await scheduler.stop()


async def test_a_first_piece_waits_for_a_run_past_half_its_predicted_time(clock):
    scheduler = await started(runner=InterruptibleRunner())
    runner = scheduler.runner
    measured = asyncio.ensure_future(scheduler.run([job(10)], scheduler.open_stream("m"), first=True))
    await until(lambda: runner.batches)
    clock[0] = 1.0  # 10 tokens in 1 s: a 40-token run is predicted to take 4 s
    runner.release.release()
    await measured
    later = asyncio.ensure_future(scheduler.run([job(40)], scheduler.open_stream("a"), first=False))
    await until(lambda: len(runner.batches) == 2)
    clock[0] = 4.0  # 3 of its 4 predicted seconds done
    first = asyncio.ensure_future(scheduler.run([job(10)], scheduler.open_stream("b"), first=True))
    await until(lambda: scheduler.queued_first_pieces == 1)
    assert not runner.interrupted and not scheduler.interruptions, "finishing is cheaper than starting over"
    runner.release.release()
    runner.release.release()
    await asyncio.gather(later, first)
    assert runner.batches == [[10], [40], [10]]
    await scheduler.stop()


async def test_a_cancelled_response_frees_the_model_at_once():
    scheduler = await started(runner=InterruptibleRunner())
    runner = scheduler.runner
    gone, other = scheduler.open_stream("gone"), scheduler.open_stream("other")
    running = asyncio.ensure_future(scheduler.run([job(50)], gone, first=False))
    await until(lambda: runner.batches)
    kept = asyncio.ensure_future(scheduler.run([job(8)], other, first=False))
    await until(lambda: scheduler._pending)
    running.cancel()
    scheduler.finish_stream(gone)
    await until(lambda: len(runner.batches) == 2)  # no release: the interrupt ended the run
    assert runner.interrupted == [[50]] and scheduler.interruptions == {"cancelled": 1}
    assert scheduler.active_streams == 1, "the cancelled stream's slot is back once its run stopped"
    runner.release.release()
    assert (await kept)[0] == [8]
    assert runner.batches == [[50], [8]], "the cancelled piece never ran again"
    await scheduler.stop()


async def test_with_preemption_off_a_first_piece_waits_but_a_cancel_still_frees_the_model(clock):
    scheduler = await started(runner=InterruptibleRunner(), preemption=False)
    runner = scheduler.runner
    gone = scheduler.open_stream("gone")
    running = asyncio.ensure_future(scheduler.run([job(40)], gone, first=False))
    await until(lambda: runner.batches)
    first = asyncio.ensure_future(scheduler.run([job(10)], scheduler.open_stream("b"), first=True))
    await until(lambda: scheduler.queued_first_pieces == 1)
    assert not runner.interrupted, "PREEMPTION=off: the barely started piece runs on"
    running.cancel()
    scheduler.finish_stream(gone)
    await until(lambda: len(runner.batches) == 2)
    assert runner.interrupted == [[40]] and scheduler.interruptions == {"cancelled": 1}
    runner.release.release()
    assert (await first)[0] == [10]
    await scheduler.stop()


@pytest.mark.parametrize("profile, batch_limit, first_piece_batch", [
    ({1: 0.30, 2: 0.30, 4: 0.31}, 1, 1),  # a CPU: a batch of b takes b times as long, so no batching
    ({1: 0.10, 2: 0.09, 4: 0.085}, 1, 1),  # batching that saves too little to pay
    ({1: 0.10, 2: 0.055, 4: 0.03, 8: 0.016, 16: 0.012}, 16, 4),  # a GPU: 4 together take 1.2x one alone
    ({1: 0.10}, 1, 1),
])
def test_batch_sizes_are_used_where_the_warm_up_says_they_pay(profile, batch_limit, first_piece_batch):
    scheduler = Scheduler(preemption=True)
    scheduler.runner = GatedRunner(max_batch=16)
    scheduler.measured(profile)
    assert (scheduler.max_batch, scheduler.first_piece_batch) == (batch_limit, first_piece_batch)


async def test_a_first_piece_runs_alone_where_batch_mates_would_delay_it():
    scheduler = await started(max_batch=3)
    scheduler.measured({1: 0.3, 2: 0.2, 4: 0.1})  # batching pays, but a batch of 2 takes 1.33x one
    blocker = asyncio.ensure_future(scheduler.run([job(50)], scheduler.open_stream("b"), first=True))
    await until(lambda: scheduler.runner.batches)
    waiting = [asyncio.ensure_future(scheduler.run([job(n)], scheduler.open_stream(str(n)), first))
               for n, first in ((40, True), (42, False), (45, False))]
    await until(lambda: len(scheduler._pending) == 3)
    for _ in range(3):
        scheduler.runner.release.release()
    await asyncio.gather(blocker, *waiting)
    assert scheduler.runner.batches == [[50], [40], [42, 45]], "later pieces still share a run"
    await scheduler.stop()


def windowed_job(length, window=0):
    """A job of a piece decoded in two windows (engine/windows.py), planned already."""
    from tts_server.engine.tokens import Split
    from tts_server.engine.windows import Window

    split = Split(0.3, windows=[Window(8, 30, 8), Window(14, 70, 22)])
    return Job(tuple(range(length)), np.zeros(256, np.float32), 1.0, split, window)


async def next_window(windows):
    return await windows.__anext__()


async def test_a_first_window_is_a_first_piece_and_the_window_after_it_is_queued_at_once(clock):
    scheduler = await started(runner=InterruptibleRunner())
    runner = scheduler.runner
    speaking, newcomer = scheduler.open_stream("speaking"), scheduler.open_stream("new")
    speaking.sent(10.0)
    later = asyncio.ensure_future(scheduler.run([job(40)], speaking, first=False))
    await until(lambda: runner.batches)
    windows = scheduler.windows(windowed_job(10), newcomer, first=True)
    first_window = asyncio.ensure_future(next_window(windows))
    await until(lambda: len(runner.batches) == 2)
    assert runner.interrupted == [[40]], "the first window stopped the barely started piece"
    runner.release.release()
    await first_window
    await until(lambda: len(runner.batches) == 3)
    assert scheduler.queued_first_pieces == 0, "a piece's later windows are not first pieces"
    rest = asyncio.ensure_future(next_window(windows))
    for _ in range(2):
        runner.release.release()
    await asyncio.gather(rest, later)
    assert runner.batches == [[40], [10], [10], [40]], \
        "the next window was in line before the stopped piece went back on the model"
    with pytest.raises(StopAsyncIteration):
        await next_window(windows)
    await scheduler.stop()


async def test_a_window_runs_alone():
    scheduler = await started(max_batch=3)
    blocker = asyncio.ensure_future(scheduler.run([job(10)], scheduler.open_stream("b"), first=True))
    await until(lambda: scheduler.runner.batches)
    windows = scheduler.windows(windowed_job(10, window=1), scheduler.open_stream("w"), first=False)
    window = asyncio.ensure_future(next_window(windows))
    others = [asyncio.ensure_future(scheduler.run([job(10)], scheduler.open_stream(str(n)), first=False))
              for n in range(2)]
    await until(lambda: len(scheduler._pending) == 3)
    for _ in range(3):
        scheduler.runner.release.release()
    await asyncio.gather(blocker, window, *others)
    assert scheduler.runner.batches == [[10], [10], [10, 10]], "jobs of one length, but a window shares no run"
    await scheduler.stop()


async def test_a_barge_in_between_windows_runs_no_more_of_them():
    scheduler = await started()
    stream = scheduler.open_stream("s")
    windows = scheduler.windows(windowed_job(10), stream, first=True)
    window = asyncio.ensure_future(next_window(windows))
    await until(lambda: scheduler.runner.batches)
    other = asyncio.ensure_future(scheduler.run([job(20)], scheduler.open_stream("c"), first=True))
    await until(lambda: scheduler.queued_first_pieces == 1)
    scheduler.runner.release.release()
    await window  # its next window now waits behind the other response's first piece
    await until(lambda: len(scheduler.runner.batches) == 2)
    await windows.aclose()  # the listener barged in
    scheduler.finish_stream(stream)
    scheduler.runner.release.release()
    await other
    await asyncio.sleep(0.05)
    assert scheduler.runner.batches == [[10], [20]], "the second window never ran"
    assert not scheduler._pending and scheduler.active_streams == 1
    await scheduler.stop()


async def test_the_models_busy_time_adds_up_every_run_stopped_ones_included(clock):
    """What bench_peers sets against a response's total: the time the model thread ran."""
    scheduler = await started(runner=InterruptibleRunner())
    runner = scheduler.runner
    later = asyncio.ensure_future(scheduler.run([job(40)], scheduler.open_stream("a"), first=False))
    await until(lambda: runner.batches)
    clock[0] = 0.5  # the later piece has run half a second when a first piece stops it
    first = asyncio.ensure_future(scheduler.run([job(10)], scheduler.open_stream("b"), first=True))
    await until(lambda: len(runner.batches) == 2)
    clock[0] = 0.75
    runner.release.release()
    await first
    await until(lambda: len(runner.batches) == 3)
    clock[0] = 2.0
    runner.release.release()
    await later
    assert scheduler.model_seconds == pytest.approx(0.5 + 0.25 + 1.25)
    await scheduler.stop()


async def test_a_call_on_the_model_thread_runs_where_the_model_runs_after_the_run_in_progress():
    """scripts/bench.py times its engine floor there: torch on another thread would start a second
    OpenMP team and slow every run of the server it measures."""
    runner = ThreadRecordingRunner()
    scheduler = await started(runner=runner)
    speaking = asyncio.ensure_future(scheduler.run([job(5)], scheduler.open_stream("s"), first=True))
    await until(lambda: runner.batches)
    called = scheduler.on_model_thread(threading.get_ident)
    await asyncio.sleep(0.05)
    assert not called.done(), "the call waits for the run in progress"
    runner.release.release()
    await speaking
    assert await asyncio.wrap_future(called) == runner.threads[0] != threading.get_ident()
