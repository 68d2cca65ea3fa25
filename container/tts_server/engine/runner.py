"""The model runner: jobs in, the backend's audio and durations out, one batch at a time.

Only the scheduler calls it, from its one model thread. A backend that can batch
(`infer_batch`) gets pieces of different sessions together; others run them one by one.
A run given a RunControl raises Interrupted as soon as the scheduler interrupts it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .backend import AcousticBackend, Inference, RunControl
from .tokens import Job


class ModelRunner:
    interruptible = True  # both backends honour a RunControl (the scheduler's preemption)

    def __init__(self, backend: AcousticBackend, max_batch: int | None = None):
        self.backend = backend
        batched = getattr(backend, "infer_batch", None) is not None
        self.max_batch = max(1, max_batch or getattr(backend, "default_max_batch", 1)) if batched else 1

    def run(self, jobs: Sequence[Job], control: RunControl | None = None) -> list[Inference]:
        """Results in order; more jobs than a batch holds run as several batches."""
        if len(jobs) == 1 or self.max_batch == 1:
            return [self.backend.infer(job.ids, job.style, job.speed, control) for job in jobs]
        results = []
        for first in range(0, len(jobs), self.max_batch):
            batch = jobs[first : first + self.max_batch]
            results += self.backend.infer_batch([(job.ids, job.style, job.speed) for job in batch], control)
        return results
