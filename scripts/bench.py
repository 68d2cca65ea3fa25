#!/usr/bin/env python3
"""Benchmark of the embedded engine behind the real server, on this machine.

Reports time to first audio (p50/p95) for a short and a five-sentence Japanese text, the
real-time factor, throughput at several concurrencies, and the server's own overhead:
first audio over the socket minus the engine's time for that first piece (G2P + inference),
which the runtime records per response. The server runs in this process (its own thread and
event loop) so that record can be read; the client talks to it over loopback.

Where first audio's time goes, per response (medians): G2P, the model's front part, its first
window (the decoder over the first frames), waiting for the model, output processing,
encoding, and the rest (framing, the socket, the client: "transport"). Against it, the engine
floor: the same server's synthesis of the text's whole first piece (G2P + the model over all
of it, no windows), timed between the responses of the same run, on the server's model thread.

    .venv/bin/python scripts/bench.py --runs 10 --json reports/bench.json

Writes the figures as JSON (default reports/bench.json) and a plot next to it (bench.png).
Progress goes to stderr, one bar per phase; the tables to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import websockets
from plots import save_plot
from tqdm import tqdm

REPO = Path(__file__).resolve().parent.parent
# the server package, the client's chunker, and tests/ for serving_in_thread
sys.path[:0] = [str(REPO / "container"), str(REPO), str(REPO / "tests")]
from in_process_server import serving_in_thread  # noqa: E402
from tts_server.app import create_app  # noqa: E402
from tts_server.settings import Settings  # noqa: E402
from tts_server.transport.state import app_state  # noqa: E402
from tts_text.chunker import split_sentences  # noqa: E402

SHORT = "こんにちは。"
FIVE_SENTENCES = (
    "本日はご来店いただき、誠にありがとうございます。"
    "ただいま春の新商品を多数取り揃えております。"
    "気になる商品がございましたら、お気軽にスタッフまでお声がけください。"
    "本日限りの特別割引もございます。"
    "どうぞごゆっくりお買い物をお楽しみください。"
)
TEN_SENTENCES = FIVE_SENTENCES + (
    "お支払いは現金のほか、各種クレジットカードもご利用いただけます。"
    "ポイントカードをお持ちのお客様は、レジにてご提示ください。"
    "駐車場は店舗の裏手にございますので、どうぞご利用ください。"
    "お困りのことがございましたら、近くのスタッフにお尋ねください。"
    "またのご来店を心よりお待ちしております。"
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


@contextlib.contextmanager
def serving(engine: str = "onnx", model_dir: str | None = None, threads: int | None = None,
            **settings: object) -> Iterator[tuple[object, int]]:
    """The server with the real model on a thread of this process, its runtime at hand (the floor
    is timed on its model thread); yields the runtime and the port."""
    settings = Settings(host="127.0.0.1", engine=engine, model_dir=model_dir, device="cpu", languages=("ja",),
                        inference_threads=threads, **settings)
    app = create_app(settings)
    with serving_in_thread(app, log_level="warning") as port:
        yield app_state(app).runtime, port


async def one_response(url: str, text: str, rid: str) -> dict:
    """Time to first audio byte and total time for one response on a fresh session."""
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "open", "format": "pcm_16", "audio_frames": "binary"}).encode())
        await ws.recv()
        began = time.perf_counter()
        await ws.send(json.dumps({"type": "response.create", "text": text, "response_id": rid}).encode())
        first = None
        while True:
            frame = await ws.recv()
            if isinstance(frame, bytes):
                first = first or time.perf_counter() - began
                continue
            event = json.loads(frame)
            if event["type"] == "response.done":
                return {"ttfa": first, "total": time.perf_counter() - began, "audio_s": event["usage"]["audio_ms"] / 1000}


PHASES = ("g2p_s", "front_s", "decode_s", "queued_s", "output_s", "encoding_s", "transport_s")


def engine_floor(runtime, text: str) -> float:
    """Seconds for the server's engine to synthesize the text's first piece whole (G2P + model),
    on the server's model thread: on another thread torch would start a second OpenMP team, and
    two teams on these cores slow every later run of both, the server's too (docs/performance.md)."""
    synthesizer = runtime.synthesizer
    start, end = split_sentences(text, fast_first_fragment=runtime.fast_first_fragment)[0]
    language = synthesizer.language(None)
    style = synthesizer.voice_book(language).resolve("default")

    def timed() -> float:
        began = time.perf_counter()
        synthesizer.synthesize(text, start, end, style, 1.0, language)
        return time.perf_counter() - began

    return runtime.scheduler.on_model_thread(timed).result()


async def ttfa_series(url: str, runtime, text: str, runs: int, label: str) -> dict:
    results, floors = [], []
    for i in tqdm(range(runs), desc=f"TTFA, {label}", unit="response", leave=True):
        rid = f"{label}-{i}"
        result = await one_response(url, text, rid)
        engine = dict(runtime.first_audio_engine_seconds)[rid]
        phases = dict(runtime.first_audio_phases)[rid]
        phases["transport_s"] = result["ttfa"] - phases["server_s"]
        results.append(result | {"overhead": result["ttfa"] - engine, "engine_first": engine, "phases": phases})
        floors.append(engine_floor(runtime, text))  # between responses: the same machine, the same minute
    ttfa = [r["ttfa"] for r in results]
    overhead = [r["overhead"] for r in results]
    audio = sum(r["audio_s"] for r in results)
    floor = statistics.median(floors)
    return {
        "floor_p50_ms": 1000 * floor,
        "ttfa_over_floor": statistics.median(ttfa) / floor,
        "first_audio_ms": {name[:-2]: 1000 * statistics.median(r["phases"][name] for r in results)
                           for name in PHASES},
        "floor_ms": [round(1000 * f, 1) for f in floors],
        "text": label,
        "characters": len(text),
        "runs": runs,
        "ttfa_p50_ms": 1000 * statistics.median(ttfa),
        "ttfa_p95_ms": 1000 * percentile(ttfa, 0.95),
        "overhead_p50_ms": 1000 * statistics.median(overhead),
        "overhead_p95_ms": 1000 * percentile(overhead, 0.95),
        "rtf": sum(r["total"] for r in results) / audio,
        "audio_s_per_response": audio / runs,
        "ttfa_ms": [round(1000 * t, 1) for t in ttfa],
    }


async def throughput(url: str, concurrency: int, text: str) -> dict:
    began = time.perf_counter()
    results = await asyncio.gather(*(one_response(url, text, f"c{concurrency}-{i}") for i in range(concurrency)))
    wall = time.perf_counter() - began
    audio = sum(r["audio_s"] for r in results)
    return {
        "concurrency": concurrency,
        "audio_seconds_per_second": audio / wall,
        "ttfa_p50_ms": 1000 * statistics.median(r["ttfa"] for r in results),
        "ttfa_max_ms": 1000 * max(r["ttfa"] for r in results),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="responses per text (default 10)")
    parser.add_argument("--concurrency", default="1,2,4", help="comma-separated session counts for throughput")
    parser.add_argument("--engine", choices=("onnx", "torch"), default="onnx",
                        help="onnx: the embedded int8 export; torch: PyTorch from --model-dir (make model-dir)")
    parser.add_argument("--model-dir", default=str(REPO / ".cache" / "model-dir"))
    parser.add_argument("--json", type=Path, default=Path("reports/bench.json"),
                        help="write the figures as JSON here, and a PNG beside it (default reports/bench.json)")
    args = parser.parse_args()

    load_before = os.getloadavg()
    print("starting the server and loading the model…", file=sys.stderr, flush=True)
    with serving(args.engine, args.model_dir if args.engine == "torch" else None) as (runtime, port):
        url = f"ws://127.0.0.1:{port}/invocations-bidirectional-stream"
        await one_response(url, SHORT, "warmup")
        series = [
            await ttfa_series(url, runtime, SHORT, args.runs, "short"),
            await ttfa_series(url, runtime, FIVE_SENTENCES, args.runs, "five-sentences"),
        ]
        scaling = []
        for c in tqdm(args.concurrency.split(","), desc="throughput", unit="step"):
            scaling.append(await throughput(url, int(c), FIVE_SENTENCES))

    print(f"Engine {runtime.synthesizer.backend.name} on {os.cpu_count()} CPU cores, pcm_16 24 kHz, binary frames\n")
    load = {"before": load_before, "after": os.getloadavg()}
    print(f"load average (1, 5, 15 min): {load['before']} before, {load['after']} after")
    print("| text | runs | TTFA p50 | TTFA p95 | engine floor p50 | TTFA / floor | server overhead p50 | p95 | RTF |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in series:
        print(f"| {s['text']} ({s['characters']} chars) | {s['runs']} | {s['ttfa_p50_ms']:.0f} ms | {s['ttfa_p95_ms']:.0f} ms "
              f"| {s['floor_p50_ms']:.0f} ms | {s['ttfa_over_floor']:.2f} "
              f"| {s['overhead_p50_ms']:.1f} ms | {s['overhead_p95_ms']:.1f} ms | {s['rtf']:.2f} |")
    print("\n| text | " + " | ".join(name[:-2] for name in PHASES) + " |")
    print("|---|" + "---|" * len(PHASES))
    for s in series:
        print(f"| {s['text']} | " + " | ".join(f"{ms:.0f} ms" for ms in s["first_audio_ms"].values()) + " |")
    print("\n| concurrent sessions | audio seconds per second | TTFA p50 | TTFA max |")
    print("|---|---|---|---|")
    for t in scaling:
        print(f"| {t['concurrency']} | {t['audio_seconds_per_second']:.2f} | {t['ttfa_p50_ms']:.0f} ms | {t['ttfa_max_ms']:.0f} ms |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    figures = {"benchmark": "bench", "engine": runtime.synthesizer.backend.name, "cpu_cores": os.cpu_count(),
               "load_average": load, "series": series, "throughput": scaling}
    args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nwrote {args.json} and {save_plot(args.json, figures)}")


if __name__ == "__main__":
    asyncio.run(main())
