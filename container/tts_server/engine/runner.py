"""The model runner: jobs in, the backend's audio and durations out, one batch at a time.

Only the scheduler calls it, from its one model thread. A backend that can batch
(`infer_batch`) gets pieces of different sessions together; others run them one by one.
A windowed job runs its front part with its first window (windows.py) and one window a run
after that, each given its voice's reference statistics where the job has them (span_norm.py).
A runner of one piece a run (the CPU engines) decodes a response's later pieces over their
speech only, not the model's silence around them (speech_span.py); one that batches (the GPU's)
decodes every piece whole, so that a piece sounds the same alone as in a batch. A run given a
RunControl raises Interrupted as soon as the scheduler interrupts it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from . import speech_span, windows
from .backend import AcousticBackend, Inference, RunControl
from .tokens import Job


class ModelRunner:
    interruptible = True  # both backends honour a RunControl (the scheduler's preemption)

    def __init__(self, backend: AcousticBackend, max_batch: int | None = None):
        self.backend = backend
        batched = getattr(backend, "infer_batch", None) is not None
        self.max_batch = max(1, max_batch or getattr(backend, "default_max_batch", 1)) if batched else 1
        self.speech_only = self.max_batch == 1  # later pieces over their speech only (speech_span.py)

    def run(self, jobs: Sequence[Job], control: RunControl | None = None) -> list[Inference]:
        """Results in order; more jobs than a batch holds run as several batches."""
        if any(job.split is not None for job in jobs):
            return [self._window(job, control) for job in jobs]
        if self.speech_only and all(job.later for job in jobs):
            return [self._speech(job, control) for job in jobs]
        if len(jobs) == 1 or self.max_batch == 1:
            return [self.backend.infer(job.ids, job.style, job.speed, control) for job in jobs]
        results = []
        for first in range(0, len(jobs), self.max_batch):
            batch = jobs[first : first + self.max_batch]
            results += self.backend.infer_batch([(job.ids, job.style, job.speed) for job in batch], control)
        return results

    def _speech(self, job: Job, control: RunControl | None) -> Inference:
        front = self.backend.front(job.ids, job.style, job.speed, control)
        return Inference(audio=speech_span.decode(self.backend, front, control), durations=front.durations)

    def _window(self, job: Job, control: RunControl | None) -> Inference:
        split = job.split
        if split.front is None:  # kept when the window is interrupted: a rerun decodes only
            began = time.perf_counter()
            front = self.backend.front(job.ids, job.style, job.speed, control)
            split.front_seconds = time.perf_counter() - began
            split.windows = windows.plan(front.durations, split.rtf, front.energy, self.backend.first_window_lead)
            split.front = front
            if split.reference is not None and not split.reference.fits(front.frames, len(split.windows)):
                split.reference = None  # its windows keep their own statistics (and the assembler's make-up)
        window = split.windows[job.window]
        norms = split.reference.statistics if split.reference is not None else None
        audio = self.backend.decode(split.front, window.start, window.end, control, norms)
        return Inference(audio=audio, durations=split.front.durations, window=window)
