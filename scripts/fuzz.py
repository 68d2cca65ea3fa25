#!/usr/bin/env python3
"""Fuzzer: malformed frames at every dialect of the real server; the server and its other
sessions must be unharmed.

One open session per dialect (canonical, Bulbul-style, blog) receives --frames frames in
turn, drawn from: random bytes, invalid UTF-8, truncated JSON, deeply nested JSON, JSON that
is not an object, events with fields of the wrong type, over-long texts and ids, unknown event
types, oversized frames, empty frames. After each, a probe (`ping` -> `pong`; Bulbul: `flush`
-> `final`) must be answered: the session is alive and read the frame. Every tenth frame is
also POSTed to /invocations, which must answer 4xx (or 200/503 for a body that happens to be a
valid request), never a fault. Meanwhile a bystander session
speaks real responses, each of which must complete. At the end: no slot held, no error in
the server's log, and the server stops cleanly.

    .venv/bin/python scripts/fuzz.py --frames 10000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
import robustness_server

# first message, probe, how the probe is answered
DIALECTS = {
    "canonical": ({"type": "open", "format": "pcm_16"}, {"type": "ping"}, lambda e: e.get("type") == "pong"),
    "bulbul": ({"type": "config", "data": {"output_audio_codec": "linear16"}}, {"type": "flush"},
               lambda e: e.get("type") == "event" and e.get("data", {}).get("event_type") == "final"),
    "blog": ({"text": "はい。"}, {"type": "ping"}, lambda e: e.get("type") == "pong"),
}
EVENTS = {  # a plausible event per dialect, mutated into a wrong one
    "canonical": {"type": "response.create", "text": "はい。", "response_id": "x", "with_timestamps": False},
    "bulbul": {"type": "text", "data": {"text": "はい。"}},
    "blog": {"text": "はい。", "request_id": "x", "speed": 1.0},
}
WRONG = [None, True, 12, -1.5, [], {}, [1, "a"], {"a": {"b": []}}, ""]
UNKNOWN_TYPES = ["", "open!", "response.created", "audio", "config2", "speak", "x" * 300, "🙂", "Close", "PING"]


def wrong_types(rng: random.Random, base: dict) -> dict:
    """`base` with one field's value of the wrong type (never a text that would be spoken)."""
    event = json.loads(json.dumps(base))
    holder = event["data"] if "data" in event and rng.random() < 0.7 else event
    key = rng.choice([k for k in holder if k != "type"] or ["type"])
    holder[key] = rng.choice([w for w in WRONG if not isinstance(w, str)] if key == "text" else WRONG)
    return event


def frame(rng: random.Random, dialect: str) -> tuple[str, bytes | str]:
    base = EVENTS[dialect]
    kind = rng.choice(["random_bytes", "invalid_utf8", "truncated_json", "nested_json", "not_an_object",
                       "wrong_types", "huge_text", "huge_id", "unknown_event", "empty", "text_frame_garbage", "oversize"]
                      if rng.random() > 0.002 else ["oversize"])
    if kind == "random_bytes":
        data = rng.randbytes(rng.randint(1, 2048))
    elif kind == "invalid_utf8":
        data = b'{"type":"ping","x":"' + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]) + b'"}'
    elif kind == "truncated_json":
        whole = json.dumps(base).encode()
        data = whole[: rng.randint(1, len(whole) - 1)]
    elif kind == "nested_json":
        depth = rng.choice([33, 100, 1000, 5000, 50_000])
        opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
        data = (opener * depth + "1" + closer * depth).encode()
    elif kind == "not_an_object":
        data = json.dumps(rng.choice([[], [base], "open", 1, None, True])).encode()
    elif kind == "wrong_types":
        data = json.dumps(wrong_types(rng, base)).encode()
    elif kind == "huge_text":
        event = json.loads(json.dumps(base))
        (event["data"] if "data" in event else event)["text"] = "あ" * rng.choice([3501, 10_000, 100_000])
        data = json.dumps(event, ensure_ascii=False).encode()
    elif kind == "huge_id":
        data = json.dumps({"type": "response.cancel", "response_id": "i" * rng.choice([129, 10_000, 500_000]),
                           "request_id": "r" * 1000}).encode()
    elif kind == "unknown_event":
        data = json.dumps({"type": rng.choice(UNKNOWN_TYPES), "data": {"x": 1}}).encode()
    elif kind == "empty":
        data = rng.choice([b"", b" ", b"{}", b"null"])
    elif kind == "text_frame_garbage":
        return kind, "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(1, 200)))
    else:
        data = b'{"type":"ping","pad":"' + b"x" * (1 << 20) + b'"}'
    return kind, data


async def opened(target, dialect: str):
    connection = await websockets.connect(target.ws_url, max_size=None)
    first, probe, answered = DIALECTS[dialect]
    await connection.send(json.dumps(first).encode())
    await connection.send(json.dumps(probe).encode())
    await until(connection, answered)
    return connection


async def until(connection, answered) -> list[dict]:
    events = []
    while True:
        raw = await asyncio.wait_for(connection.recv(), 120)
        if isinstance(raw, bytes):
            continue
        event = json.loads(raw)
        events.append(event)
        if answered(event):
            return events


async def bystander(target, stop: asyncio.Event, totals: Counter, problems: list[str]) -> None:
    connection = await opened(target, "canonical")
    n = 0
    while not stop.is_set():
        n += 1
        await connection.send(json.dumps({"type": "response.create", "text": "また明日。", "response_id": f"b{n}"}).encode())
        events = await until(connection, lambda e: e.get("type") == "response.done")
        if events[-1]["status"] != "completed":
            problems.append(f"bystander response {n}: {events[-1]}")
        totals["bystander_completed"] += 1
    await connection.close()


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--url", help="a running server (default: start one on a free loopback port)")
    parser.add_argument("--pid", type=int, help="the --url server's process id, for its memory figures")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    target = robustness_server.start(args.url, args.pid, {})
    totals: Counter = Counter()
    problems: list[str] = []
    try:
        await robustness_server.load(target)
        rss_start = target.rss_mb()
        sessions = {dialect: await opened(target, dialect) for dialect in DIALECTS}
        stop = asyncio.Event()
        watcher = asyncio.create_task(bystander(target, stop, totals, problems))
        began = time.perf_counter()
        async with httpx.AsyncClient(base_url=target.url, timeout=60) as http:
            for n in range(args.frames):
                dialect = list(DIALECTS)[n % len(DIALECTS)]
                kind, data = frame(rng, dialect)
                totals[f"frames_{kind}"] += 1
                connection = sessions[dialect]
                try:
                    await connection.send(data)
                    await connection.send(json.dumps(DIALECTS[dialect][1]).encode())
                    events = await until(connection, DIALECTS[dialect][2])
                except (websockets.ConnectionClosed, TimeoutError) as error:
                    problems.append(f"{dialect} session died after a {kind} frame: {error!r}")
                    sessions[dialect] = await opened(target, dialect)
                    continue
                totals["error_events"] += sum(1 for e in events if e.get("type") == "error")
                if any(e.get("type") == "error" and "internal" in json.dumps(e) for e in events):
                    problems.append(f"{dialect}: internal error after a {kind} frame: {events}")
                if n % 10 == 0 and isinstance(data, bytes):
                    reply = await http.post("/invocations", content=data, headers={"Content-Type": "application/json"})
                    totals[f"http_{reply.status_code}"] += 1
                    # 503 is admission at work (a mutated body can be a valid request, and the
                    # bystander holds the synthesis slot); any other 5xx is a fault.
                    if reply.status_code >= 500 and reply.json()["error"]["code"] != "service_overloaded":
                        problems.append(f"HTTP {reply.status_code} for a {kind} body: {reply.text[:200]}")
                if sys.stderr.isatty() and n % 100 == 0:
                    print(f"\r{n}/{args.frames} frames", end="", file=sys.stderr)
        elapsed = time.perf_counter() - began
        stop.set()
        await watcher
        for connection in sessions.values():
            await connection.close()
        after = await robustness_server.wait_for_free_slots(target)
        if after["sessions"] or after["syntheses"]:
            problems.append(f"slots still held: {after}")
        rss_end = target.rss_mb()
        problems += [f"server logged: {line}" for line in target.logged_errors()]
    finally:
        exit_status = target.stop()
    if exit_status not in (None, 0):
        problems.append(f"the server exited with {exit_status} on SIGTERM")
    figures = {"frames": args.frames, "elapsed_s": round(elapsed, 1), "rss_mb": {"start": rss_start, "end": rss_end},
               **dict(sorted(totals.items())), "problems": len(problems)}
    title = f"Fuzz: {args.frames} malformed frames at {len(DIALECTS)} dialects in {elapsed:.0f} s"
    return robustness_server.report(title, figures, problems, "problem", args.json)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
