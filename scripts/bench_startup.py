#!/usr/bin/env python3
"""Cold start: process start -> /ping 200, each phase timed, then the first requests.

Starts `container/serve` as SageMaker would (a fresh process), polls /ping every 50 ms and
reads the phases the server reports in /ping's body (`startup_s`); then times a first
request in the default language and one in another where the server speaks it (a language
loaded on first use would pay its G2P there). Engines and variants run interleaved, so a noisy
machine spreads its noise over all of them; the figures are medians.

    python scripts/bench_startup.py [--engines onnx torch] [--model-dir .cache/model-dir]
        [--repeats 3] [--variant NAME:KEY=VALUE,KEY=VALUE ...] [--json docs/benchmarks/bench-startup.json]

A variant's CHECKOUT=DIR starts DIR/container/serve instead of this checkout's (an older
commit unpacked with `git archive`, to measure a change against what it changes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVE = REPO / "container" / "serve"
FIRST_REQUESTS = {"ja": "こんにちは、今日はいい天気ですね。", "en-US": "Hello, this is the first request."}


def ping(url: str) -> tuple[int | None, dict]:
    try:
        with urllib.request.urlopen(url + "/ping", timeout=5) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, {}
    except OSError:
        return None, {}


def served(languages: list[str]) -> list[str]:
    """The languages of FIRST_REQUESTS that a server with these LANGUAGES (/ping's) can speak."""
    return [language for language in FIRST_REQUESTS if language in languages]


def first_request_ms(url: str, language: str) -> float:
    body = json.dumps({"text": FIRST_REQUESTS[language], "language": language, "format": "wav"}).encode()
    request = urllib.request.Request(url + "/invocations", data=body, headers={"Content-Type": "application/json"})
    began = time.perf_counter()
    with urllib.request.urlopen(request, timeout=300) as reply:
        reply.read()
    return (time.perf_counter() - began) * 1000


def cold_start(engine: str, model_dir: Path | None, port: int, extra_env: dict[str, str], timeout: float) -> dict:
    """One fresh server: when it listened, when /ping turned 200, its phases, the first requests."""
    environment = {k: v for k, v in os.environ.items() if k not in ("MODEL_DIR", "ENGINE", "DEVICE")}
    extra_env = dict(extra_env)
    serve = Path(extra_env.pop("CHECKOUT")) / "container" / "serve" if "CHECKOUT" in extra_env else SERVE
    environment |= {"HOST": "127.0.0.1", "PORT": str(port), "ENGINE": engine, **extra_env}
    if engine == "torch":
        environment |= {"MODEL_DIR": str(model_dir), "DEVICE": "cpu"}
    url = f"http://127.0.0.1:{port}"
    log = tempfile.TemporaryFile()
    began = time.perf_counter()
    process = subprocess.Popen([sys.executable, str(serve)], env=environment, stdout=log, stderr=subprocess.STDOUT)
    listening = None
    try:
        while True:
            if process.poll() is not None or time.perf_counter() - began > timeout:
                log.seek(0)
                raise RuntimeError(f"{engine}: no /ping 200 in {timeout} s: {log.read()[-2000:].decode(errors='replace')}")
            status, body = ping(url)
            if status is not None and listening is None:
                listening = time.perf_counter() - began
            if status == 200:
                ready = time.perf_counter() - began
                break
            time.sleep(0.05)
        firsts = {language: round(first_request_ms(url, language))
                  for language in served(body.get("languages", list(FIRST_REQUESTS)))}
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
    return {"listening_s": round(listening, 2), "ping_200_s": round(ready, 2), "phases_s": body.get("startup_s", {}),
            "first_request_ms": firsts}


def summary(runs: list[dict]) -> dict:
    phases = {name: round(statistics.median(r["phases_s"].get(name, 0.0) for r in runs), 3)
              for name in runs[0]["phases_s"]}
    return {
        "repeats": len(runs),
        "runs": runs,
        "ping_200_s": round(statistics.median(r["ping_200_s"] for r in runs), 2),
        "listening_s": round(statistics.median(r["listening_s"] for r in runs), 2),
        "phases_s": phases,
        "first_request_ms": {language: round(statistics.median(r["first_request_ms"][language] for r in runs))
                             for language in runs[0]["first_request_ms"]},
    }


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    name, _, assignments = text.partition(":")
    pairs = [a.split("=", 1) for a in assignments.split(",") if a]
    if not name or any(len(p) != 2 for p in pairs):
        raise SystemExit(f"--variant: NAME:KEY=VALUE[,KEY=VALUE...] expected, got {text!r}")
    return name, dict(pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="+", default=["onnx", "torch"], choices=["onnx", "torch"])
    parser.add_argument("--model-dir", type=Path, default=REPO / ".cache" / "model-dir")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                        help="server settings to compare (default: one variant, the defaults)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "18310")))
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    variants = dict(map(parse_variant, args.variant)) or {"default": {}}
    runs: dict[tuple[str, str], list[dict]] = {}
    for repeat in range(args.repeats):
        for engine in args.engines:
            for name, extra in variants.items():
                result = cold_start(engine, args.model_dir, args.port, extra, args.timeout)
                runs.setdefault((engine, name), []).append(result)
                phases = ", ".join(f"{k} {v:.2f}" for k, v in result["phases_s"].items())
                print(f"run {repeat + 1}/{args.repeats} {engine:<5} {name:<12} listening {result['listening_s']:5.2f} s, "
                      f"/ping 200 {result['ping_200_s']:6.2f} s, first requests {result['first_request_ms']} ms; "
                      f"{phases}", flush=True)
                report = {"benchmark": "bench-startup", "cpus": os.cpu_count(), "repeats": repeat + 1,
                          "series": [{"engine": e, "variant": n, "settings": variants[n], **summary(rs)}
                                     for (e, n), rs in runs.items()]}
                if args.json:  # after every run: a long benchmark stopped half-way keeps what it measured
                    args.json.parent.mkdir(parents=True, exist_ok=True)
                    args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    for series in report["series"]:
        phases = ", ".join(f"{k} {v:.2f}" for k, v in series["phases_s"].items())
        print(f"{series['engine']} {series['variant']}: /ping 200 in {series['ping_200_s']} s (median); {phases}")
    if args.json:
        sys.path.insert(0, str(REPO / "scripts"))
        from plots import save_plot

        print(f"{args.json} -> {save_plot(args.json, report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
