#!/usr/bin/env python3
"""One LLM turn through a Pipecat pipeline: the time from the LLM's first token to the first
audio frame out of KokoroStreamingTTSService, with the session already open (as in a call).

A simulated LLM streams bench_agent.py's 5-sentence answer (tokens of a few characters at a
steady rate) into [tts, probe]; the probe notes when each frame kind first arrives. Each
turn waits for the previous one's TTSStoppedFrame; the median over --turns is reported.

  bench_pipecat_turn.py --url ws://127.0.0.1:8080/invocations-bidirectional-stream --turns 3
  bench_pipecat_turn.py --endpoint local --endpoint-url https://127.0.0.1:8443 --ca-file ca.pem

Writes the summary as JSON (default reports/bench-pipecat-turn.json).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tts_client, used from the checkout

from bench_agent import ANSWER
from pipecat.frames.frames import (
    LLMFullResponseEndFrame, LLMFullResponseStartFrame, LLMTextFrame, TTSAudioRawFrame, TTSStoppedFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.workers.runner import WorkerRunner
from tts_client.integrations.endpoint import Endpoint
from tts_client.integrations.pipecat import KokoroStreamingTTSService


class Probe(FrameProcessor):
    """Notes the first audio frame and the stop frame of the current turn."""

    def __init__(self):
        super().__init__()
        self.first_audio: float | None = None
        self.stopped = asyncio.Event()

    async def process_frame(self, frame, direction):
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame) and self.first_audio is None:
            self.first_audio = time.monotonic()
        elif isinstance(frame, TTSStoppedFrame):
            self.stopped.set()
        await self.push_frame(frame, direction)


async def one_turn(worker: PipelineWorker, probe: Probe, args) -> dict:
    probe.first_audio, first_sentence_end = None, None
    probe.stopped.clear()
    await worker.queue_frame(LLMFullResponseStartFrame())
    started = time.monotonic()
    for start in range(0, len(ANSWER), args.chars_per_token):
        token = ANSWER[start:start + args.chars_per_token]
        await worker.queue_frame(LLMTextFrame(token))
        if first_sentence_end is None and "。" in token:
            first_sentence_end = time.monotonic()
        await asyncio.sleep(1 / args.tokens_per_second)
    await worker.queue_frame(LLMFullResponseEndFrame())
    await asyncio.wait_for(probe.stopped.wait(), 120)
    return {"first_token_to_first_audio_s": probe.first_audio - started,
            "first_sentence_written_to_first_audio_s": probe.first_audio - first_sentence_end}


async def bench(args) -> dict:
    endpoint = (Endpoint.sagemaker(args.endpoint, region=args.region, endpoint_url=args.endpoint_url, ca_file=args.ca_file)
                if args.endpoint else Endpoint.websocket(args.url))
    probe = Probe()
    tts = KokoroStreamingTTSService(endpoint=endpoint, voice=args.voice)
    worker = PipelineWorker(Pipeline([tts, probe]), params=PipelineParams(audio_out_sample_rate=args.sample_rate),
                            cancel_on_idle_timeout=False)
    started = asyncio.Event()

    @worker.event_handler("on_pipeline_started")
    async def on_started(worker, frame):
        started.set()

    runner = WorkerRunner()
    await runner.add_workers(worker)
    running = asyncio.create_task(runner.run())
    turns = []
    try:
        await asyncio.wait_for(started.wait(), 60)  # frames queued before StartFrame are dropped
        await one_turn(worker, probe, args)  # warm-up: the session opens and the first synthesis pays its start-up
        for _ in range(args.turns):
            turns.append(await one_turn(worker, probe, args))
    finally:
        await worker.stop_when_done()
        await running
    return {
        "benchmark": "bench-pipecat-turn", "transport": "sagemaker" if args.endpoint else "websocket",
        "sample_rate": args.sample_rate, "tokens_per_second": args.tokens_per_second,
        "chars_per_token": args.chars_per_token, "characters": len(ANSWER), "turns": len(turns),
        **{key: round(statistics.median(t[key] for t in turns), 3) for key in turns[0]},
        "runs": turns,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="ws://127.0.0.1:8080/invocations-bidirectional-stream")
    parser.add_argument("--endpoint", help="a SageMaker endpoint name (instead of --url)")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--endpoint-url", help="e.g. the local gateway's https://127.0.0.1:8443")
    parser.add_argument("--ca-file")
    parser.add_argument("--voice")
    parser.add_argument("--sample-rate", type=int, default=16000)
    parser.add_argument("--tokens-per-second", type=float, default=20)
    parser.add_argument("--chars-per-token", type=int, default=2)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--json", type=Path, default=Path("reports/bench-pipecat-turn.json"))
    args = parser.parse_args(argv)
    summary = asyncio.run(bench(args))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=False))
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
