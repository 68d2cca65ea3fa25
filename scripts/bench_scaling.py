#!/usr/bin/env python3
"""Scaling curve: N concurrent streaming sessions in a closed loop, N = 1, 2, 4, ... (make bench-scaling).

Each session speaks a multi-sentence text over and over (a new response as soon as the last is
done, or after a random pause of mean `--think` seconds) for `--seconds` per level. Reported per
N: audio seconds delivered per second, time to first audio p50/p95 (all responses, and steady:
without each session's opening one), the share of responses whose stream ever ran dry (a
chunk arrived later than the listener, who started playing at the first chunk, needed it),
the batch sizes the scheduler ran, and the server's peak memory. The server runs as a subprocess through
container/serve with admission opened wide (this measures the engine, not the shedding).

    .venv/bin/python scripts/bench_scaling.py --engine onnx --levels 1,2,4,8 --json reports/scaling-onnx.json
    .venv/bin/python scripts/bench_scaling.py --engine torch --model-dir .cache/model-dir --json reports/scaling-torch.json
    .venv/bin/python scripts/bench_scaling.py --engine onnx --levels 1,2,4 --think 1 --json reports/scaling-onnx-think.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import urllib.request
from pathlib import Path

import websockets

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "scripts")]
from bench import FIVE_SENTENCES, percentile  # noqa: E402
from plots import save_plot  # noqa: E402
from running_server import start_server, stop_server  # noqa: E402

BYTES_PER_SECOND = 24000 * 2  # pcm_16 at 24 kHz


async def session(url: str, text: str, until: float, think_s: float, rng: random.Random, results: list[dict]) -> None:
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "open", "format": "pcm_16", "audio_frames": "binary"}).encode())
        json.loads(await ws.recv())
        number = 0
        while time.perf_counter() < until:
            number += 1
            if think_s:  # the other party's turn: uniform around the mean, so sessions drift apart
                await asyncio.sleep(rng.uniform(0, 2 * think_s))
            began = time.perf_counter()
            await ws.send(json.dumps({"type": "response.create", "text": text, "response_id": f"r{number}"}).encode())
            first, audio_s, dry = None, 0.0, False
            while True:
                frame = await ws.recv()
                now = time.perf_counter()
                if isinstance(frame, bytes):
                    if first is None:
                        first = now
                    elif now > first + audio_s:  # the listener had played everything before this chunk
                        dry = True
                    audio_s += len(frame) / BYTES_PER_SECOND
                    continue
                event = json.loads(frame)
                if event["type"] == "response.done":
                    break
            results.append({"ttfa": first - began, "audio_s": audio_s, "dry": dry, "done_at": now, "opening": number == 1})


def ping(server) -> dict:
    with urllib.request.urlopen(server.http_url + "/ping", timeout=10) as reply:
        return json.loads(reply.read())


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _grown(before: dict, after: dict) -> dict:
    """Counters that grew during a level, by how much."""
    return {key: count - before.get(key, 0) for key, count in after.items() if count - before.get(key, 0)}


async def level(server, sessions: int, seconds: float, text: str, think_s: float) -> dict:
    before = ping(server)["load"]
    results: list[dict] = []
    began = time.perf_counter()
    until = began + seconds
    rng = random.Random(sessions)
    await asyncio.gather(*(session(server.ws_url, text, until, think_s, rng, results) for _ in range(sessions)))
    wall = time.perf_counter() - began
    after = ping(server)["load"]
    batches, interruptions = (_grown(before.get(key, {}), after.get(key, {})) for key in ("batches", "interruptions"))
    ttfa = [r["ttfa"] for r in results]
    # Steady state: without each session's opening response (without think time, all N send it
    # at the same instant).
    steady = [r["ttfa"] for r in results if not r["opening"]] or ttfa
    return {
        "sessions": sessions,
        "responses": len(results),
        "audio_s_per_s": sum(r["audio_s"] for r in results) / wall,
        "ttfa_p50_ms": 1000 * percentile(ttfa, 0.5),
        "ttfa_p95_ms": 1000 * percentile(ttfa, 0.95),
        "steady_ttfa_p50_ms": 1000 * percentile(steady, 0.5),
        "steady_ttfa_p95_ms": 1000 * percentile(steady, 0.95),
        "ran_dry_share": sum(r["dry"] for r in results) / len(results),
        "batch_sizes": batches,
        "interruptions": interruptions,
        "peak_rss_mb": peak_rss_mb(server.process.pid),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("onnx", "torch"), default="onnx")
    parser.add_argument("--model-dir", default=str(REPO / ".cache" / "model-dir"))
    parser.add_argument("--levels", default="1,2,4,8", help="comma-separated session counts")
    parser.add_argument("--seconds", type=float, default=30.0, help="closed-loop time per level")
    parser.add_argument("--max-batch", type=int, default=0, help="MAX_BATCH for the server (0: its default)")
    parser.add_argument("--text", default=FIVE_SENTENCES)
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean seconds between a done and the next create (uniform 0..2x; 0: a strict closed loop)")
    parser.add_argument("--no-preemption", action="store_true", help="PREEMPTION=off: first pieces never stop a run")
    parser.add_argument("--json", type=Path, default=None, help="report path; a PNG is written beside it")
    args = parser.parse_args()

    env = {"ENGINE": args.engine, "LANGUAGES": "ja", "MAX_CONCURRENT_SYNTHESES": "100000",
           "TARGET_FIRST_AUDIO_MS": "3600000", "MAX_SESSIONS": "100000"}
    if args.engine == "torch":
        env["MODEL_DIR"] = args.model_dir
    if args.max_batch:
        env["MAX_BATCH"] = str(args.max_batch)
    if args.no_preemption:
        env["PREEMPTION"] = "off"
    server = start_server(env, timeout=600)
    try:
        described = ping(server)
        report = {"benchmark": "bench-scaling", "engine": described["engine"], "device": described["device"],
                  "max_batch": described["load"].get("max_batch", 1), "text_chars": len(args.text),
                  "think_s": args.think, "preemption": not args.no_preemption, "levels": []}
        print(f"{report['engine']} on {report['device']}, batch up to {report['max_batch']}, "
              f"{args.seconds:.0f} s per level", flush=True)
        print(f"{'sessions':>8} {'audio-s/s':>9} {'TTFA p50':>9} {'TTFA p95':>9} {'steady p50':>10} {'steady p95':>10} "
              f"{'ran dry':>8} {'RSS MB':>7}  batches, interruptions")
        for sessions in (int(n) for n in args.levels.split(",")):
            entry = await level(server, sessions, args.seconds, args.text, args.think)
            report["levels"].append(entry)
            print(f"{sessions:>8} {entry['audio_s_per_s']:>9.2f} {entry['ttfa_p50_ms']:>7.0f}ms {entry['ttfa_p95_ms']:>7.0f}ms "
                  f"{entry['steady_ttfa_p50_ms']:>8.0f}ms {entry['steady_ttfa_p95_ms']:>8.0f}ms {entry['ran_dry_share']:>8.0%} {entry['peak_rss_mb']:>7.0f}  {entry['batch_sizes']} {entry['interruptions']}", flush=True)
    finally:
        stop_server(server)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.json} and {save_plot(args.json, report)}")


if __name__ == "__main__":
    asyncio.run(main())
