#!/usr/bin/env python3
"""Bidi vs batch (the blog's Step 5): a simulated LLM streams a 5-sentence answer; the same
token stream is spoken through run_bidi (sentences go out while it generates) and run_batch
(the whole answer first). Reports time to first audio (TTFA) of each and their ratio.

  bench_agent.py --url ws://127.0.0.1:8080/invocations-bidirectional-stream --tokens-per-second 20

Writes the summary as JSON (default reports/bench-agent.json) and a plot next to it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tts_client, used from the checkout

from plots import save_plot
from tqdm import tqdm
from tts_client.agent import AgentFinished, AudioOut, run_batch, run_bidi
from tts_client.session import Session

ANSWER = (
    "東京の明日の天気は晴れです。最高気温は二十五度の予想です。午後は南の風がやや強く吹くでしょう。"
    "夜になると少し雲が広がります。お出かけの際は日焼け止めをお忘れなく。"
)


async def simulated_llm(text: str, tokens_per_second: float, chars_per_token: int):
    """The answer in tokens of a few characters, at a steady generation rate."""
    for start in range(0, len(text), chars_per_token):
        await asyncio.sleep(1 / tokens_per_second)
        yield text[start:start + chars_per_token]


async def one_run(mode, args) -> dict:
    session = await Session.websocket(args.url) if not args.endpoint else await Session.sagemaker(
        args.endpoint, region=args.region, endpoint_url=args.endpoint_url, ca_file=args.ca_file)
    try:
        await session.open(format="pcm_16")  # session setup is outside the timed part for both modes
        first_audio = last_audio = None
        async for event in mode(simulated_llm(ANSWER, args.tokens_per_second, args.chars_per_token), session):
            if isinstance(event, AudioOut):
                first_audio = event.at if first_audio is None else first_audio
                last_audio = event.at
            elif isinstance(event, AgentFinished):
                finished = event.at
        await session.close()
    finally:
        await session.abort()
    return {"ttfa_s": first_audio, "last_audio_s": last_audio, "finished_s": finished}


async def bench(args) -> dict:
    runs = {"bidi": [], "batch": []}
    modes = {"bidi": run_bidi, "batch": run_batch}
    with tqdm(total=2 * args.repeats, desc="bidi and batch runs", unit="run") as progress:
        for repeat in range(args.repeats):
            order = ["bidi", "batch"] if repeat % 2 == 0 else ["batch", "bidi"]  # neither always goes first
            for name in order:
                progress.set_postfix_str(f"{name}, repeat {repeat + 1}")
                runs[name].append(await one_run(modes[name], args))
                progress.update()
    tokens = -(-len(ANSWER) // args.chars_per_token)
    summary = {
        "benchmark": "bench-agent",
        "tokens_per_second": args.tokens_per_second, "tokens": tokens, "generation_s": round(tokens / args.tokens_per_second, 2),
        "characters": len(ANSWER), "sentences": 5, "repeats": args.repeats,
    }
    for name, results in runs.items():
        summary[name] = {key: round(statistics.median(r[key] for r in results), 3) for key in results[0]}
    summary["ttfa_ratio_batch_over_bidi"] = round(summary["batch"]["ttfa_s"] / summary["bidi"]["ttfa_s"], 2)
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="ws://127.0.0.1:8080/invocations-bidirectional-stream")
    parser.add_argument("--endpoint", help="SageMaker endpoint name (instead of --url)")
    parser.add_argument("--region")
    parser.add_argument("--endpoint-url")
    parser.add_argument("--ca-file")
    parser.add_argument("--tokens-per-second", type=float, default=20)
    parser.add_argument("--chars-per-token", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=Path("reports/bench-agent.json"),
                        help="write the summary here, and a PNG beside it (default reports/bench-agent.json)")
    args = parser.parse_args(argv)
    summary = asyncio.run(bench(args))
    print(f"simulated LLM: {summary['tokens']} tokens at {args.tokens_per_second:g} tokens/s "
          f"({summary['generation_s']} s to generate {summary['characters']} characters, 5 sentences); "
          f"median of {args.repeats}")
    print(f"{'mode':<6} {'TTFA':>8} {'last audio':>11} {'done':>8}")
    for name in ("bidi", "batch"):
        row = summary[name]
        print(f"{name:<6} {row['ttfa_s']:>7.2f}s {row['last_audio_s']:>10.2f}s {row['finished_s']:>7.2f}s")
    print(f"TTFA batch / bidi = {summary['ttfa_ratio_batch_over_bidi']:.2f}x")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {args.json} and {save_plot(args.json, summary)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
