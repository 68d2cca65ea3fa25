#!/usr/bin/env python3
"""Overload benchmark: the server's capacity, and what happens at 1x and at 2x of it.

Starts the real server (container/serve, default settings: capacity derived from the engine's
measured speed) on a free loopback port, or uses --url. Reads the capacity C from /ping, then
drives POST /invocations (whole JSON replies, one sentence of Japanese) with closed-loop clients:
    1x: C clients, each sending its next request as soon as the last one is answered;
    2x: 2C such clients; a client that gets a 503 waits its Retry-After, as a well-behaved one does.
Reports the shed rate (503s among all replies), p50/p95 latency of the admitted requests, the
latency of the 503s (shed at once?), throughput, and /ping's latency under the load.

    .venv/bin/python scripts/bench_overload.py --seconds 20 --json reports/bench-overload.json

Writes the figures as JSON (default reports/bench-overload.json) and a plot next to it;
progress (one bar per phase, with the replies so far) goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from plots import save_plot
from tqdm import tqdm

REPO = Path(__file__).resolve().parent.parent
TEXT = "本日はご来店いただき、誠にありがとうございます。"


def percentile(values: list[float], q: float) -> float | None:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))] if ordered else None


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else 1000 * seconds


def shown(milliseconds: float | None, digits: int = 0) -> str:
    return "–" if milliseconds is None else f"{milliseconds:.{digits}f} ms"


def start_server(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    environment = os.environ | {"HOST": "127.0.0.1", "PORT": str(port)} | env
    process = subprocess.Popen([sys.executable, str(REPO / "container" / "serve")], env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return process, f"http://127.0.0.1:{port}"


async def wait_ready(http: httpx.AsyncClient, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            reply = await http.get("/ping")
            if reply.status_code == 200:
                return reply.json()["load"]
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)
    raise TimeoutError("the server did not become ready")


async def client(http: httpx.AsyncClient, until: float, results: list[dict]) -> None:
    while time.monotonic() < until:
        began = time.perf_counter()
        reply = await http.post("/invocations", json={"text": TEXT, "format": "pcm_16"})
        result = {"status": reply.status_code, "seconds": time.perf_counter() - began}
        if reply.status_code == 200:
            result["audio_s"] = len(reply.json()["audios"][0]) * 3 / 4 / 2 / 24000
        results.append(result)
        if reply.status_code == 503:
            await asyncio.sleep(float(reply.headers.get("retry-after", "1")))
        elif reply.status_code != 200:
            raise RuntimeError(f"unexpected reply {reply.status_code}: {reply.text[:300]}")


async def pings(http: httpx.AsyncClient, until: float) -> list[float]:
    latencies = []
    while time.monotonic() < until:
        began = time.perf_counter()
        await http.get("/ping")
        latencies.append(time.perf_counter() - began)
        await asyncio.sleep(0.1)
    return latencies


async def show_progress(description: str, seconds: float, results: list[dict]) -> None:
    """A bar over the phase's duration, with the replies so far; it ends when cancelled."""
    began = time.monotonic()
    with tqdm(total=round(seconds), desc=description, unit="s", bar_format="{l_bar}{bar}| {n:.0f}/{total} s{postfix}") as bar:
        try:
            while True:
                await asyncio.sleep(0.5)
                elapsed = time.monotonic() - began
                bar.n = min(seconds, elapsed)
                admitted = sum(r["status"] == 200 for r in results)
                waiting = ", waiting for the replies in flight" if elapsed >= seconds else ""
                bar.set_postfix_str(f"admitted {admitted}, shed {len(results) - admitted}{waiting}")
        except asyncio.CancelledError:
            bar.n = bar.total
            bar.refresh()


async def phase(url: str, clients: int, seconds: float, label: str) -> dict:
    limits = httpx.Limits(max_connections=clients + 2)
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as http:
        results: list[dict] = []
        until = time.monotonic() + seconds
        began = time.perf_counter()
        ticker = asyncio.create_task(show_progress(f"{label} load, {clients} clients", seconds, results))
        try:
            ping_latencies, *_ = await asyncio.gather(pings(http, until), *(client(http, until, results) for _ in range(clients)))
        finally:
            ticker.cancel()
        wall = time.perf_counter() - began
    admitted = [r["seconds"] for r in results if r["status"] == 200]
    shed = [r["seconds"] for r in results if r["status"] == 503]
    return {
        "load": label,
        "clients": clients,
        "requests": len(results),
        "admitted": len(admitted),
        "shed": len(shed),
        "shed_rate": len(shed) / len(results) if results else 0.0,
        "admitted_p50_ms": ms(statistics.median(admitted) if admitted else None),
        "admitted_p95_ms": ms(percentile(admitted, 0.95)),
        "shed_p95_ms": ms(percentile(shed, 0.95)),
        "admitted_per_s": len(admitted) / wall,
        "audio_s_per_s": sum(r.get("audio_s", 0) for r in results) / wall,
        "ping_p95_ms": ms(percentile(ping_latencies, 0.95)),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server (default: start one on a free loopback port)")
    parser.add_argument("--seconds", type=float, default=20, help="length of each phase (default 20)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="settings for the server this script starts, e.g. MAX_CONCURRENT_SYNTHESES=2")
    parser.add_argument("--json", type=Path, default=Path("reports/bench-overload.json"),
                        help="write the figures as JSON here, and a PNG beside it (default reports/bench-overload.json)")
    args = parser.parse_args()

    process = None
    url = args.url
    if url is None:
        process, url = start_server(dict(item.split("=", 1) for item in args.env))
    try:
        print("waiting for the server's model to load (/ping)…", file=sys.stderr, flush=True)
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            capacity = await wait_ready(http)
            await http.post("/invocations", json={"text": TEXT})  # warm the path once
        c = capacity["max_syntheses"]
        phases = [await phase(url, c, args.seconds, "1x"), await phase(url, 2 * c, args.seconds, "2x")]
    finally:
        if process:
            process.terminate()
            process.wait(10)

    print(f"Capacity: {c} concurrent syntheses, {capacity['max_sessions']} sessions "
          f"({os.cpu_count()} CPU cores; text of {len(TEXT)} characters, whole JSON replies)\n")
    print("| load | clients | requests | admitted | shed | shed rate | admitted p50 | admitted p95 | 503 p95 "
          "| admitted/s | audio s/s | /ping p95 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in phases:
        print(f"| {p['load']} | {p['clients']} | {p['requests']} | {p['admitted']} | {p['shed']} | {p['shed_rate']:.0%} "
              f"| {shown(p['admitted_p50_ms'])} | {shown(p['admitted_p95_ms'])} | {shown(p['shed_p95_ms'], 1)} "
              f"| {p['admitted_per_s']:.2f} | {p['audio_s_per_s']:.2f} | {shown(p['ping_p95_ms'], 1)} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    figures = {"benchmark": "bench-overload", "cpu_cores": os.cpu_count(), "seconds_per_phase": args.seconds,
               "capacity": capacity, "phases": phases}
    args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nwrote {args.json} and {save_plot(args.json, figures)}")


if __name__ == "__main__":
    asyncio.run(main())
