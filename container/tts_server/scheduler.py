"""The scheduler: the one owner of synthesis work across all sessions and HTTP requests (SPEC §7).

Renderers hand it a piece's jobs (a sentence, already through G2P) and await the results;
it alone decides the order and the batches, and runs them on its one model thread:
- a response's first piece before anything else (time to first audio), in arrival order;
- then the piece whose stream runs dry soonest: playback start + audio already handed out;
- a batch takes the most urgent job and, up to the runner's batch size, the next most urgent
  ones of a similar length (padding is wasted work).
A cancelled or departed response's queued jobs are dropped at once; a running job's result is
dropped when it comes back, and the stream stays counted as load until then.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .engine.backend import Inference
from .engine.runner import ModelRunner
from .engine.tokens import Job

log = logging.getLogger(__name__)
PADDING_RATIO = 2.0  # a batch-mate may be at most this much longer or shorter than the head job


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


@dataclass(eq=False)
class _Work:
    job: Job
    stream: Stream
    first: bool
    seq: int
    future: asyncio.Future

    def order(self) -> tuple:
        return (0, self.seq) if self.first else (1, self.stream.runs_dry_at(), self.seq)


class Scheduler:
    def __init__(self):
        self.runner: ModelRunner | None = None  # attached once the model is loaded
        self._pending: list[_Work] = []
        self._streams: set[Stream] = set()
        self._seq = itertools.count()
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="model")
        self.batch_sizes: Counter[int] = Counter()  # how often each batch size ran
        self.batch_started: float | None = None  # when the running batch began (prediction)

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._wake = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="scheduler")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._thread.shutdown(wait=False, cancel_futures=True)

    # what renderers call ----------------------------------------------------------------------
    def open_stream(self, name: str) -> Stream:
        stream = Stream(name)
        self._streams.add(stream)
        return stream

    def close_stream(self, stream: Stream) -> None:
        stream.closed = True
        self._drop(stream)
        if not stream.running:
            self._streams.discard(stream)

    async def run(self, jobs: Sequence[Job], stream: Stream, first: bool) -> tuple[list[Inference], float]:
        """The jobs' results in order, and the model seconds behind them; cancellable at any point."""
        loop = asyncio.get_running_loop()
        works = [_Work(job, stream, first and i == 0, next(self._seq), loop.create_future())
                 for i, job in enumerate(jobs)]
        self._pending += works
        self._wake.set()
        try:
            results = [await work.future for work in works]
        finally:
            for work in works:
                work.future.cancel()  # no-op for those done; the rest leave the queue now
            self._pending = [w for w in self._pending if not w.future.done()]
        return [inference for inference, _ in results], sum(seconds for _, seconds in results)

    # what admission asks ------------------------------------------------------------------------
    @property
    def active_streams(self) -> int:
        """Responses speaking now, and cancelled ones whose job is still on the model."""
        return len(self._streams)

    @property
    def queued_first_pieces(self) -> int:
        return sum(1 for w in self._pending if w.first and not w.future.done())

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
        head, size = live[0], len(live[0].job.ids)
        batch = [head]
        for work in live[1:]:
            if len(batch) >= self.runner.max_batch:
                break
            if size / PADDING_RATIO <= len(work.job.ids) <= size * PADDING_RATIO:
                batch.append(work)
        chosen = set(map(id, batch))
        self._pending = [w for w in live if id(w) not in chosen]
        return batch

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            batch = self._next_batch()
            if not batch:
                self._wake.clear()
                continue
            for work in batch:
                work.stream.running += 1
            self.batch_sizes[len(batch)] += 1
            self.batch_started = began = time.perf_counter()
            try:
                results = await loop.run_in_executor(self._thread, self.runner.run, [w.job for w in batch])
            except Exception as error:  # noqa: BLE001 - each waiting renderer reports it as a failed response
                log.error("model run failed for a batch of %d", len(batch), exc_info=error)
                results = [error] * len(batch)
            finally:
                self.batch_started = None
                for work in batch:
                    work.stream.running -= 1
                    if work.stream.closed and not work.stream.running:
                        self._streams.discard(work.stream)
            seconds = time.perf_counter() - began
            for work, result in zip(batch, results, strict=True):
                if work.future.done():
                    continue  # cancelled while it ran: its result goes nowhere
                if isinstance(result, Exception):
                    work.future.set_exception(result)
                else:
                    work.future.set_result((result, seconds))
