#!/usr/bin/env python3
"""Load stage: concurrent bidirectional sessions against a deployed endpoint, held to a budget.

Runs after staging's contract validation, never against prod (the pipeline and the GitHub
workflow run it on staging only). For each level of --levels sessions (1, 10, 50 by default),
that many sessions speak turn after turn for --seconds through the SageMaker SDK, and the
level reports TTFA p50/p95/p99, audio seconds per second, sheds and errors
(tts_client/validation/load.py says how each is counted). A level misses its budget on any
error, a TTFA p95 or p99 above --ttfa-p95-ms / --ttfa-p99-ms, a shed at a level of at most
--shed-free-sessions sessions, or no answered turn; the budget of a deploy comes from its
configuration (stacks/load_budget.py: `python -m stacks.expectations load`).

  load_stage.py --endpoint NAME --region R [--role-arn ARN] $(python -m stacks.expectations load) \\
      --junit reports/load.xml --json reports/load.json --plot reports/load.png
  load_stage.py --endpoint NAME --endpoint-url https://127.0.0.1:8443 --ca-file CA ...   (the local gateway)
  load_stage.py --url ws://127.0.0.1:8080/invocations-bidirectional-stream ...           (a local server)

Exit codes: 0 every level within budget; 1 a level missed it; 2 usage error, or the target
could not be reached at all.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts")]  # tts_client from the checkout; plots.py beside this

from tts_client.validation.load import Budget, Plan, run_level  # noqa: E402
from tts_client.validation.load_report import document, table, write_json, write_junit  # noqa: E402
from tts_client.validation.target import (  # noqa: E402
    EXIT_UNREACHABLE, add_target_arguments, check_target_arguments, reach, run_against_target,
)
from tts_client.validation.texts import TWO_SENTENCES  # noqa: E402

EXIT_PASSED, EXIT_MISSED = 0, 1


def levels(value: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected session counts such as 1,10,50, got {value!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected session counts of at least 1, got {value!r}")
    return counts


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target_arguments(parser)
    parser.add_argument("--levels", type=levels, default=(1, 10, 50), help="concurrent sessions per level")
    parser.add_argument("--seconds", type=float, default=60.0, help="speaking time of each level")
    parser.add_argument("--ttfa-p95-ms", type=float, required=True, help="budget: TTFA p95 of every level, at most")
    parser.add_argument("--ttfa-p99-ms", type=float, required=True, help="budget: TTFA p99 of every level, at most")
    parser.add_argument("--shed-free-sessions", type=int, required=True,
                        help="budget: levels of at most this many sessions shed none")
    parser.add_argument("--think", type=float, default=1.0, help="mean pause between a turn's end and the next")
    parser.add_argument("--text", default=TWO_SENTENCES, help="what each turn says (default: two Japanese sentences, "
                                                              "which every engine speaks)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one open, turn or close may take")
    parser.add_argument("--junit", type=Path, help="write a JUnit XML report here (a test case per level)")
    parser.add_argument("--json", type=Path, help="write a JSON report here")
    parser.add_argument("--plot", type=Path, help="write a PNG of the levels here (matplotlib)")
    args = parser.parse_args(argv)
    check_target_arguments(parser, args)
    return args


def write_reports(args: argparse.Namespace, report: dict) -> None:
    print(table(report))
    if args.json:
        write_json(args.json, report)
    if args.junit:
        write_junit(args.junit, report)
    if args.plot and report["levels"]:
        from plots import save_plot  # matplotlib only when a plot is asked for

        try:
            save_plot(args.json or args.plot.with_suffix(".json"), report, png=args.plot)
        except Exception as error:  # noqa: BLE001 - the verdict stands; the reports above hold every figure
            print(f"the plot could not be drawn: {type(error).__name__}: {error}", file=sys.stderr)


async def load(args: argparse.Namespace) -> int:
    budget = Budget(args.ttfa_p95_ms, args.ttfa_p99_ms, args.shed_free_sessions)
    plan = Plan(seconds=args.seconds, text=args.text, think_s=args.think, timeout=args.timeout)
    plan_report = {"levels": list(args.levels), "seconds": args.seconds, "think_s": args.think,
                   "text_chars": len(args.text)}
    target, problem = await reach(args, "load-stage", args.timeout)
    described = target.description if target else args.url or f"SageMaker endpoint {args.endpoint} ({args.region})"
    if target:
        print(f"Load stage against {described}: levels {', '.join(map(str, args.levels))} sessions, "
              f"{args.seconds:g} s each", flush=True)
    if problem:
        print(f"cannot reach the target: {problem}", file=sys.stderr)
        await asyncio.to_thread(write_reports, args,
                                document(described, budget, plan_report, [], EXIT_UNREACHABLE, unreachable=problem))
        return EXIT_UNREACHABLE
    results = []
    for sessions in args.levels:
        began = time.monotonic()
        result = await run_level(target, sessions, plan)
        results.append(result.summary(budget))
        print(f"  {sessions} sessions: {result.responses} turns in {time.monotonic() - began:.0f} s, "
              f"{'within budget' if not results[-1]['misses'] else 'MISS'}", flush=True)
    exit_code = EXIT_MISSED if any(level["misses"] for level in results) else EXIT_PASSED
    # Off the loop, which never blocks: drawing the plot held it over a second on a busy 2-core VM.
    await asyncio.to_thread(write_reports, args, document(described, budget, plan_report, results, exit_code))
    return exit_code


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_against_target(load(args))


if __name__ == "__main__":
    sys.exit(main())
