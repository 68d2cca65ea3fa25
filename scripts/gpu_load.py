"""Load through the server's own scheduler for scripts/gpu_check.py: throughput per batch size, and
time to first audio with many sessions speaking at once."""

from __future__ import annotations

import asyncio
import random
import statistics
import time

from tts_server.engine.runner import ModelRunner
from tts_server.engine.tokens import Job
from tts_server.scheduler import Scheduler

SAMPLE_RATE = 24000


def _job(item: dict) -> Job:
    return Job(tuple(item["ids"]), item["style"], 1.0)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


class _TimedRunner(ModelRunner):
    """The runner, remembering each run's seconds, batch size and padding."""

    def __init__(self, backend, max_batch: int):
        super().__init__(backend, max_batch)
        self.runs: list[tuple[float, int, float]] = []

    def run(self, jobs, control=None):
        began = time.perf_counter()
        results = super().run(jobs, control)
        lengths = [len(r.audio) for r in results]
        self.runs.append((time.perf_counter() - began, len(jobs), 1 - sum(lengths) / (max(lengths) * len(lengths))))
        return results


def _scheduler(backend, max_batch: int, profile: dict[int, float] | None) -> tuple[Scheduler, _TimedRunner]:
    scheduler = Scheduler(preemption=True)
    runner = _TimedRunner(backend, max_batch)
    scheduler.runner = runner
    if profile:
        scheduler.measured(profile)  # the batch sizes that pay, as the server's warm-up finds them
    else:
        scheduler.batch_limit = scheduler.first_piece_batch = max_batch
    scheduler.start()
    return scheduler, runner


def throughput(backend, items: list[dict], batches: list[int], rounds: int = 4) -> list[dict]:
    """Per batch size: pieces for `rounds` full batches, from as many streams, all queued at once."""
    async def one(size: int) -> dict:
        scheduler, runner = _scheduler(backend, size, None)
        jobs = [_job(items[k % len(items)]) for k in range(rounds * size)]
        streams = [scheduler.open_stream(f"s{k}") for k in range(len(jobs))]
        began = time.perf_counter()
        results = await asyncio.gather(*(scheduler.run([job], stream, False) for job, stream in zip(jobs, streams, strict=True)))
        wall = time.perf_counter() - began
        await scheduler.stop()
        audio_s = sum(len(inference.audio) for inferences, _ in results for inference in inferences) / SAMPLE_RATE
        seconds = [s for s, _, _ in runner.runs]
        return {"batch": size, "audio_s_per_s": round(audio_s / wall, 2),
                "engine_s_per_audio_s": round(wall / audio_s, 5),
                "run_p50_ms": round(statistics.median(seconds) * 1000, 1),
                "run_p95_ms": round(_percentile(seconds, 0.95) * 1000, 1),
                "mean_batch": round(statistics.mean(n for _, n, _ in runner.runs), 2),
                "padding_share": round(statistics.mean(p for _, _, p in runner.runs), 3)}

    backend.infer_batch([(items[0]["ids"], items[0]["style"], 1.0)])  # first run: allocations, kernels
    return [asyncio.run(one(size)) for size in batches]


def sessions_ttfa(backend, items: list[dict], sessions: int, profile: dict[int, float], seconds: float) -> dict:
    """`sessions` agents, starting spread over the first second, each for `seconds`: a response of
    a short first piece and two more, then listening to it (the audio's length) before the next."""
    short = sorted(items, key=lambda i: len(i["ids"]))[: max(1, len(items) // 3)]

    async def session(scheduler: Scheduler, name: str, rng: random.Random, ttfa: list, audio: list) -> None:
        await asyncio.sleep(rng.random())
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            stream = scheduler.open_stream(name)
            began = time.perf_counter()
            pieces = [rng.choice(short), rng.choice(items), rng.choice(items)]
            spoken = 0.0
            for k, item in enumerate(pieces):
                (inference,), _ = await scheduler.run([_job(item)], stream, first=k == 0)
                if k == 0:
                    ttfa.append(time.perf_counter() - began)
                stream.sent(len(inference.audio) / SAMPLE_RATE)
                spoken += len(inference.audio) / SAMPLE_RATE
            scheduler.finish_stream(stream)
            audio.append(spoken)
            await asyncio.sleep(max(0.0, began + spoken - time.perf_counter()))  # the listener hears it out

    async def run() -> dict:
        scheduler, _ = _scheduler(backend, max(profile), profile)
        ttfa, audio = [], []
        began = time.perf_counter()
        await asyncio.gather(*(session(scheduler, f"agent{k}", random.Random(k), ttfa, audio) for k in range(sessions)))
        wall = time.perf_counter() - began
        await scheduler.stop()
        return {"sessions": sessions, "responses": len(ttfa), "ttfa_p50_ms": round(statistics.median(ttfa) * 1000, 1),
                "ttfa_p95_ms": round(_percentile(ttfa, 0.95) * 1000, 1), "audio_s_per_s": round(sum(audio) / wall, 2),
                "batch_limit": scheduler.max_batch}

    return asyncio.run(run())
