"""The scheduler's order, batching and cancellation, on a model double whose runs a test releases."""

import asyncio
import threading

import numpy as np
import pytest

from tts_server.engine.tokens import Job
from tts_server.scheduler import Scheduler
from waiting import until as until_condition


class GatedRunner:
    """Records each batch (as the job lengths it got) and holds it until the test releases it."""

    def __init__(self, max_batch=1):
        self.max_batch = max_batch
        self.batches = []
        self.release = threading.Semaphore(0)

    def run(self, jobs):
        self.batches.append([len(job.ids) for job in jobs])
        self.release.acquire(timeout=10)
        return [len(job.ids) for job in jobs]


def job(length):
    return Job(tuple(range(length)), np.zeros(256, np.float32), 1.0)


async def started(max_batch=1):
    scheduler = Scheduler()
    scheduler.runner = GatedRunner(max_batch)
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
    scheduler.close_stream(gone)
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
        def run(self, jobs):
            raise RuntimeError("model exploded")

    scheduler = Scheduler()
    scheduler.runner = Failing()
    scheduler.start()
    with pytest.raises(RuntimeError, match="model exploded"):
        await scheduler.run([job(3)], scheduler.open_stream("s"), first=True)
    await scheduler.stop()
