#!/usr/bin/env python3
"""Soak: many sessions of pipelined responses with cancels and abrupt disconnects, against the
real server; checks that nothing is lost or duplicated and that everything held comes back.

Each session (canonical protocol, binary pcm_16 frames) pipelines --responses short responses.
A share of the responses (--cancel-rate) is cancelled at a random moment, a share of the
sessions (--disconnect-rate) drops its TCP connection at a random moment without a close;
the others end with `close`. `--concurrency` sessions run at a time (default: the server's
session capacity from /ping); a session refused with 1013 retries after its retry_after.
Checks, each a failure when violated:
- every accepted response.create of a session that stayed got exactly one response.done, and
  audio only between its response.created and its done, in sequence order;
- a cancelled response ends `cancelled` (or had already completed), nothing else `failed`;
- once all sessions have ended, /ping shows no session and no synthesis slot held;
- the server logged no error, and is still up.
Reports RSS at the start, after the first tenth of the sessions (warm) and at the end.

    .venv/bin/python scripts/soak.py --sessions 200 --responses 10
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

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
import robustness_server

TEXTS = ["はい。", "ええ、そうです。", "ありがとう。", "また明日。", "Hello there.", "お元気ですか。"]


class Violation(Exception):
    pass


async def session(target, index: int, args, rng: random.Random, totals: Counter) -> None:
    plan_disconnect = rng.random() < args.disconnect_rate
    while True:
        connection = await websockets.connect(target.ws_url, max_size=None)
        await connection.send(json.dumps({"type": "open", "format": "pcm_16", "audio_frames": "binary"}).encode())
        first = json.loads(await connection.recv())
        if first["type"] == "session.created":
            break
        await connection.close()
        if first.get("error", {}).get("code") != "service_overloaded":
            raise Violation(f"session {index}: open answered {first}")
        totals["refused_retried"] += 1
        await asyncio.sleep(first["error"].get("retry_after", 1) * rng.uniform(0.2, 1.0))
    ids = [f"s{index}-r{n}" for n in range(args.responses)]
    cancel = {rid for rid in ids if rng.random() < args.cancel_rate}
    cut_after = rng.randint(1, 4 * args.responses) if plan_disconnect else None
    for rid in ids:
        await connection.send(json.dumps({"type": "response.create", "text": rng.choice(TEXTS), "response_id": rid}).encode())
    totals["created"] += len(ids)
    early = [rid for rid in cancel if rng.random() < 0.5]  # cancelled at once (queued), the rest once speaking
    for rid in early:
        await connection.send(json.dumps({"type": "response.cancel", "response_id": rid}).encode())
    totals["cancels_sent"] += len(cancel)
    done: dict[str, dict] = {}
    active, sequence, events = None, 0, 0
    closing = False
    try:
        while True:
            frame = await connection.recv()
            events += 1
            if cut_after is not None and events >= cut_after:
                connection.transport.abort()  # gone, mid-whatever, without a close
                totals["disconnected"] += 1
                return
            if isinstance(frame, bytes):
                if active is None:
                    raise Violation(f"session {index}: audio outside a response")
                totals["audio_bytes"] += len(frame)
                continue
            event = json.loads(frame)
            kind = event["type"]
            if kind == "response.created":
                active, sequence = event["response_id"], 0
                if active in cancel and active not in early:
                    await connection.send(json.dumps({"type": "response.cancel", "response_id": active}).encode())
            elif kind == "audio.chunk":
                if event["response_id"] != active or event["sequence"] != sequence:
                    raise Violation(f"session {index}: chunk {event} out of order (active {active}, next {sequence})")
                sequence += 1
            elif kind == "response.done":
                rid = event["response_id"]
                if rid in done:
                    raise Violation(f"session {index}: a second response.done for {rid}")
                done[rid] = event
                if rid == active:
                    active = None
                status = event["status"]
                totals[f"done_{status}"] += 1
                if status == "failed" or (status == "cancelled" and rid not in cancel):
                    raise Violation(f"session {index}: {rid} ended {status}: {event}")
                if len(done) == len(ids) and not closing:
                    closing = True
                    await connection.send(json.dumps({"type": "close"}).encode())
            elif kind == "error":
                code = event["error"]["code"]
                if code != "response_not_found":  # a cancel that crossed its response's done
                    raise Violation(f"session {index}: error {event}")
                totals["cancel_too_late"] += 1
            elif kind == "session.closed":
                break
    except websockets.ConnectionClosed as closed:
        raise Violation(f"session {index}: closed early ({closed})") from None
    await connection.wait_closed()
    if connection.close_code != 1000:
        raise Violation(f"session {index}: close code {connection.close_code}")
    missing = set(ids) - set(done)
    if missing:
        raise Violation(f"session {index}: no response.done for {sorted(missing)}")
    totals["sessions_closed"] += 1


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--responses", type=int, default=10, help="pipelined responses per session")
    parser.add_argument("--cancel-rate", type=float, default=0.2)
    parser.add_argument("--disconnect-rate", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, help="sessions at a time (default: 4 per synthesis slot, within the session cap)")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--url", help="a running server (default: start one on a free loopback port)")
    parser.add_argument("--pid", type=int, help="the --url server's process id, for its memory figures")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="settings for the server started")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    target = robustness_server.start(args.url, args.pid, dict(item.split("=", 1) for item in args.env))
    totals: Counter = Counter()
    violations: list[str] = []
    try:
        capacity = await robustness_server.load(target)
        concurrency = args.concurrency or min(capacity["max_sessions"], 4 * capacity["max_syntheses"])
        rss = {"start": target.rss_mb()}
        gate = asyncio.Semaphore(concurrency)
        finished = 0
        began = time.perf_counter()

        async def one(index: int) -> None:
            nonlocal finished
            async with gate:
                try:
                    await session(target, index, args, random.Random(rng.random()), totals)
                except Violation as violation:
                    violations.append(str(violation))
                finished += 1
                if finished == max(1, args.sessions // 10):
                    rss["warm"] = target.rss_mb()
                if sys.stderr.isatty():
                    print(f"\r{finished}/{args.sessions} sessions", end="", file=sys.stderr)

        await asyncio.gather(*(one(i) for i in range(args.sessions)))
        elapsed = time.perf_counter() - began
        after = await robustness_server.wait_for_free_slots(target)
        rss["end"] = target.rss_mb()
        if after["sessions"] or after["syntheses"]:
            violations.append(f"slots still held after every session ended: {after}")
        violations += [f"server logged: {line}" for line in target.logged_errors()]
    finally:
        exit_status = target.stop()
    if exit_status not in (None, 0):
        violations.append(f"the server exited with {exit_status} on SIGTERM")
    figures = {"sessions": args.sessions, "responses_per_session": args.responses, "concurrency": concurrency,
               "elapsed_s": round(elapsed, 1), "rss_mb": rss, "slots_after": after, **totals,
               "violations": len(violations)}
    title = (f"Soak: {args.sessions} sessions x {args.responses} pipelined responses, {concurrency} at a time, "
             f"{args.cancel_rate:.0%} cancels, {args.disconnect_rate:.0%} disconnects, {elapsed:.0f} s")
    return robustness_server.report(title, figures, violations, "violation", args.json)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
