"""The scheduler: the one owner of synthesis work across all sessions and HTTP requests (SPEC §7).

Renderers hand it a piece's jobs (a sentence, already through G2P) and await the results;
it alone decides the order and the batches, and runs them on its one model thread:
- a response's first piece before anything else (time to first audio), in arrival order;
- then the piece whose stream runs dry soonest: playback start + audio already handed out;
- a batch takes the most urgent job and, up to the batch size that pays (below), the next most
  urgent ones of a similar length (padding is wasted work); a first piece takes only as many
  batch-mates as delay it little.
Which batch sizes pay comes from the warm-up's timings: a size is used only where it costs each
piece clearly less than running alone (on a GPU; on a CPU a batch of b costs b runs or more, so
pieces run one by one there).
A cancelled or departed response ends its stream with `finish_stream`, the one place a stream's
state is freed: its queued jobs are dropped at once, its running job is stopped at once if no one
else's job shares the run (else its result is dropped when it comes back), and the stream counts
as load until the model is free of it. Each model run ends in one `RunOutcome`.

Preemption (RunControl: both backends stop a run within a layer): a run is one whole sentence,
up to seconds on a CPU, so a first piece that arrives behind it stops it while the run has
done less than half its predicted work; the stopped jobs go back to the queue in their place
and are never stopped again, so each costs at most one half-done restart.

A first piece decoded in windows (engine/windows.py) is a first piece only for its first window:
that run (the front part and the first window) goes first and may preempt; each later window
joins the queue the moment the one before it is done (before the next run is chosen), as a job
like any other, ordered by how soon the stream runs dry, each its own run, so a cancel or
barge-in stops the piece between windows (or within one). A run's predicted time is model
seconds per frame of decoder work (`Job.work`), learned from finished runs.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TypeVar

from .engine.backend import Inference, Interrupted, RunControl
from .engine.runner import ModelRunner
from .engine.tokens import Job

log = logging.getLogger(__name__)
T = TypeVar("T")
PADDING_RATIO = 2.0  # a batch-mate may be at most this much longer or shorter than the head job
BATCH_GAIN = 0.8  # a batch size is used only if each piece costs at most this share of running alone
FIRST_PIECE_DELAY = 1.25  # a first piece's batch may take at most this much longer than it alone
COST_SMOOTHING = 0.2  # weight of the latest run in the model-seconds-per-frame estimate
clock = time.perf_counter  # model-run timing (a module name so tests can drive it)


@dataclass(eq=False)
class Stream:
    """One response's audio as its listener hears it."""

    name: str
    created: float = field(default_factory=time.monotonic)
    playback_start: float | None = None  # when its first audio left
    audio_s: float = 0.0  # audio handed out so far
    closed: bool = False
    running: int = 0  # its jobs on the model right now

    def sent(self, seconds: float) -> None:
        if self.playback_start is None:
            self.playback_start = time.monotonic()
        self.audio_s += seconds

    def runs_dry_at(self) -> float:
        return (self.playback_start or self.created) + self.audio_s


class Outcome(StrEnum):
    COMPLETED = "completed"  # every job has its inference
    INTERRUPTED = "interrupted"  # stopped (preemption or nobody waiting): the jobs go back in line
    FAILED = "failed"  # the run raised: every waiting renderer reports a failed response


@dataclass(frozen=True)
class RunOutcome:
    outcome: Outcome
    seconds: float
    inferences: list[Inference] = field(default_factory=list)
    error: Exception | None = None


@dataclass(frozen=True)
class Load:
    """What admission control and /ping read of the scheduler, at one moment."""

    queued_first_pieces: int  # first pieces waiting for the model
    running: bool  # a batch is on the model now
    active_streams: int
    max_batch: int
    batch_sizes: dict[int, int]
    interruptions: dict[str, int]

    @property
    def work_ahead(self) -> int:
        """First pieces a new response's first piece would wait behind, the running batch included."""
        return self.queued_first_pieces + (1 if self.running else 0)


@dataclass(eq=False)
class _Work:
    job: Job
    stream: Stream
    first: bool
    seq: int
    future: asyncio.Future
    preempted: bool = False  # stopped once for a first piece: never again
    follower: _Work | None = None  # a windowed job's next window, queued once this one is done

    def order(self) -> tuple:
        return (0, self.seq) if self.first else (1, self.stream.runs_dry_at(), self.seq)


class Scheduler:
    def __init__(self, preemption: bool):
        self.preemption = preemption  # first pieces may stop later ones (cancels stop runs regardless)
        self.runner: ModelRunner | None = None  # attached once the model is loaded
        self._pending: list[_Work] = []
        self._streams: set[Stream] = set()
        self._seq = itertools.count()
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="model")
        self.batch_sizes: Counter[int] = Counter()  # how often each batch size ran
        self.model_seconds = 0.0  # the model thread's busy time, every run (stopped and failed ones too)
        self._batch_started: float | None = None  # when the running batch began (preemption's clock)
        self.interruptions: Counter[str] = Counter()  # runs stopped: "first piece" or "cancelled"
        self._running: list[_Work] = []
        self._control: RunControl | None = None  # the running batch's
        self._seconds_per_frame: float | None = None  # model time per frame of a batch's largest job
        self.batch_limit: int | None = None  # the largest batch that pays (None: the runner's)
        self.first_piece_batch: int | None = None  # the same when a first piece leads

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="scheduler")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._thread.shutdown(wait=False, cancel_futures=True)

    def on_model_thread(self, call: Callable[[], T]) -> Future[T]:
        """`call()` on the model thread, after the run in progress, outside the scheduler's order:
        for a measurement of the engine as it serves (scripts/bench.py's engine floor). The thread
        matters to torch on a CPU: each thread that runs it gets its own OpenMP team, and with more
        team threads than cores libgomp stops letting waiting threads spin, so every operation of
        every run pays a wake-up (docs/performance.md)."""
        return self._thread.submit(call)

    def measured(self, profile: dict[int, float]) -> None:
        """The warm-up's engine seconds per audio second at each batch size -> the batch limits."""
        if 1 not in profile:
            return
        alone = profile[1]
        self.batch_limit = max(size for size, rtf in profile.items() if size == 1 or batch_pays(rtf, alone))
        self.first_piece_batch = max(size for size, rtf in profile.items() if size <= self.batch_limit
                                     and (size == 1 or size * rtf <= FIRST_PIECE_DELAY * alone))

    @property
    def max_batch(self) -> int:
        """Pieces per model run at most, as used."""
        runner_limit = self.runner.max_batch if self.runner else 1
        return min(runner_limit, self.batch_limit or runner_limit)

    # what renderers call ----------------------------------------------------------------------
    def open_stream(self, name: str) -> Stream:
        stream = Stream(name)
        self._streams.add(stream)
        return stream

    def finish_stream(self, stream: Stream) -> None:
        """The stream is over (done, cancelled or its client gone): free its state everywhere here."""
        stream.closed = True
        self._drop(stream)
        if not stream.running:
            self._streams.discard(stream)
        self._consider_interrupt()

    async def run(self, jobs: Sequence[Job], stream: Stream, first: bool) -> tuple[list[Inference], float]:
        """The jobs' results in order, and the model seconds behind them; cancellable at any point."""
        loop = asyncio.get_running_loop()
        works = [_Work(job, stream, first and i == 0, next(self._seq), loop.create_future())
                 for i, job in enumerate(jobs)]
        self._pending += works
        self._wake.set()
        self._consider_interrupt()
        try:
            results = [await work.future for work in works]
        finally:
            for work in works:
                work.future.cancel()  # no-op for those done; the rest leave the queue now
            self._pending = [w for w in self._pending if not w.future.done()]
        return [inference for inference, _ in results], sum(seconds for _, seconds in results)

    async def windows(self, job: Job, stream: Stream, first: bool) -> AsyncIterator[tuple[Inference, float]]:
        """A windowed job's windows in order, each (inference, model seconds) as soon as it is decoded;
        only the first is a first piece. Stopping the iteration drops the windows still to come."""
        work = _Work(job, stream, first, next(self._seq), asyncio.get_running_loop().create_future())
        self._pending.append(work)
        self._wake.set()
        self._consider_interrupt()
        try:
            while work is not None:
                yield await work.future
                work = work.follower
        finally:
            if work is not None:
                work.future.cancel()
                self._pending = [w for w in self._pending if not w.future.done()]

    # what admission asks ------------------------------------------------------------------------
    def load(self) -> Load:
        return Load(self.queued_first_pieces, self._batch_started is not None, self.active_streams, self.max_batch,
                    dict(sorted(self.batch_sizes.items())), dict(self.interruptions))

    @property
    def active_streams(self) -> int:
        """Responses speaking now, and cancelled ones whose job is still on the model."""
        return len(self._streams)

    @property
    def queued_first_pieces(self) -> int:
        return sum(1 for w in self._pending if w.first and not w.future.done())

    # preemption ---------------------------------------------------------------------------------
    def _consider_interrupt(self) -> None:
        control, running = self._control, self._running
        if control is None or control.interrupted or not getattr(self.runner, "interruptible", False):
            return
        if all(work.stream.closed for work in running):
            reason = "cancelled"  # nobody waits for this run: free the model now
        elif self._worth_preempting(running):
            reason = "first piece"
        else:
            return
        self.interruptions[reason] += 1
        control.interrupt()

    def _worth_preempting(self, running: list[_Work]) -> bool:
        """A first piece waits, the run holds none and was never stopped, and finishing it would
        cost the first piece more than restarting it costs the batch (less than half done)."""
        if not self.preemption or not self.queued_first_pieces:
            return False
        if any(work.first or work.preempted for work in running):
            return False
        return self._done_share(running) < 0.5

    def _done_share(self, running: list[_Work]) -> float:
        """How much of the running batch's predicted model time has passed (0 when never measured)."""
        if self._seconds_per_frame is None or self._batch_started is None:
            return 0.0
        predicted = self._seconds_per_frame * _largest(running)
        return (clock() - self._batch_started) / max(predicted, 1e-6)

    def _learn_cost(self, batch: list[_Work], seconds: float) -> None:
        observed = seconds / max(1, _largest(batch))
        previous = self._seconds_per_frame
        self._seconds_per_frame = observed if previous is None else previous + COST_SMOOTHING * (observed - previous)

    # the model loop ---------------------------------------------------------------------------
    def _drop(self, stream: Stream) -> None:
        for work in self._pending:
            if work.stream is stream:
                work.future.cancel()
        self._pending = [w for w in self._pending if not w.future.done()]

    def _next_batch(self) -> list[_Work]:
        live = sorted((w for w in self._pending if not w.future.done()), key=_Work.order)
        if not live:
            self._pending = []
            return []
        head, size = live[0], live[0].job.work
        limit = 1 if head.job.split is not None else self.max_batch  # a window runs alone
        if head.first and self.first_piece_batch:
            limit = min(limit, self.first_piece_batch)
        batch = [head]
        for work in live[1:]:
            if len(batch) >= limit:
                break
            if work.job.split is None and size / PADDING_RATIO <= work.job.work <= size * PADDING_RATIO:
                batch.append(work)
        chosen = set(map(id, batch))
        self._pending = [w for w in live if id(w) not in chosen]
        return batch

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            batch = self._next_batch()
            if not batch:
                self._wake.clear()
                continue
            outcome = await self._execute(batch)
            if outcome.outcome is Outcome.INTERRUPTED:  # whoever still waits goes back in line, in its place
                for work in batch:
                    if work.stream.closed:
                        work.future.cancel()
                    elif not work.future.done():
                        work.preempted = True
                        self._pending.append(work)
                continue
            if outcome.outcome is Outcome.COMPLETED:
                self._learn_cost(batch, outcome.seconds)
            for i, work in enumerate(batch):
                if work.future.done():
                    continue  # cancelled while it ran: its result goes nowhere
                if outcome.outcome is Outcome.FAILED:
                    work.future.set_exception(outcome.error)
                else:
                    self._queue_next_window(work)
                    work.future.set_result((outcome.inferences[i], outcome.seconds))

    def _queue_next_window(self, work: _Work) -> None:
        """The window after this one queues now, so that the next run chosen can be it."""
        split, job = work.job.split, work.job
        if split is None or job.window + 1 >= len(split.windows) or work.stream.closed:
            return
        work.follower = _Work(replace(job, window=job.window + 1), work.stream, False, next(self._seq),
                              asyncio.get_running_loop().create_future())
        self._pending.append(work.follower)

    async def _execute(self, batch: list[_Work]) -> RunOutcome:
        """One model run on the model thread, its jobs' streams counted as running meanwhile."""
        for work in batch:
            work.stream.running += 1
        self.batch_sizes[len(batch)] += 1
        self._running, self._control = batch, RunControl()
        self._batch_started = began = clock()
        try:
            inferences = await asyncio.get_running_loop().run_in_executor(
                self._thread, self.runner.run, [w.job for w in batch], self._control)
            return RunOutcome(Outcome.COMPLETED, clock() - began, inferences)
        except Interrupted:
            return RunOutcome(Outcome.INTERRUPTED, clock() - began)
        except Exception as error:  # logged; each waiting renderer reports it as a failed response
            log.error("model run failed for a batch of %d", len(batch), exc_info=error)
            return RunOutcome(Outcome.FAILED, clock() - began, error=error)
        finally:
            self.model_seconds += clock() - began
            self._batch_started, self._running, self._control = None, [], None
            for work in batch:
                work.stream.running -= 1
                if work.stream.closed and not work.stream.running:
                    self._streams.discard(work.stream)


def batch_pays(rtf: float, alone: float) -> bool:
    """A batch size is worth using: each piece costs at most BATCH_GAIN of running alone (the
    warm-up stops profiling at the first size that does not: larger ones pay even less)."""
    return rtf <= BATCH_GAIN * alone


def _largest(works: list[_Work]) -> int:
    """Decoder frames of a batch's largest job: what its model time scales with."""
    return max(work.job.work for work in works)
