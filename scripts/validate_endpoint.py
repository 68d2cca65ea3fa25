#!/usr/bin/env python3
"""Post-deploy validation: runs the speech endpoint's contract end to end and gates on it.

  validate_endpoint.py --url ws://127.0.0.1:8080/invocations-bidirectional-stream
  validate_endpoint.py --endpoint NAME --region R               (deployed, SageMaker HTTP/2 SDK)
  validate_endpoint.py --endpoint NAME --region R --endpoint-url https://127.0.0.1:8443 --ca-file CA
                                                                 (the local SageMaker gateway)
  validate_endpoint.py --endpoint NAME --region R --role-arn ARN --expect-device cuda --expect-uid 10001
                                     (a pipeline's gate: assumes the stage's role, checks what the deploy asked for)

Prints a pass/fail table; --junit and --json write reports. Every check runs unless --skip
names it (then the report says it was skipped and why); a missing route is a failure.
Progress goes to stderr when it is a terminal (--no-progress turns it off). Exit codes:
  0  every check that ran passed           1  at least one check failed
  2  usage error, or the target could not be reached at all
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tts_client, used from the checkout

from tts_client.validation import (
    audio_checks, error_checks, http_checks, input_end_checks, overload_checks, server_checks, session_checks)
from tts_client.validation.report import table, write_json, write_junit
from tts_client.validation.runner import (
    FAIL, Check, CheckResult, Context, run_checks, select, skip_reasons)
from tts_client.validation.target import (
    EXIT_UNREACHABLE, add_target_arguments, check_target_arguments, reach, run_against_target)

# overload.shed last: its burst must not share the server with another check's work.
# server.runs_on first: on the wrong device nothing else is worth waiting for.
ALL_CHECKS = [*server_checks.CHECKS, *session_checks.CHECKS, *input_end_checks.CHECKS, *error_checks.CHECKS, *audio_checks.CHECKS,
              *http_checks.CHECKS, *overload_checks.CHECKS]
EXIT_PASSED, EXIT_FAILED = 0, 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target_arguments(parser)
    parser.add_argument("--http-url", help="with --url: base URL for POST /invocations (default: from --url)")
    parser.add_argument("--checks", help="comma-separated glob patterns of checks to run (default: all)")
    parser.add_argument("--skip", help="comma-separated glob patterns of checks to skip, e.g. 'http.*,overload.*' "
                                       "for a target without POST /invocations; reported as skipped")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    parser.add_argument("--max-pending", type=int, default=15, help="the server's WS_MAX_PENDING_RESPONSES")
    parser.add_argument("--expect-device", choices=("cuda", "cpu"),
                        help="server.runs_on fails unless the endpoint serves on this device (a GPU deploy: cuda)")
    parser.add_argument("--expect-uid", type=int, help="server.runs_on fails unless the container runs as this uid")
    parser.add_argument("--timeout", type=float, default=90, help="seconds one check may take")
    parser.add_argument("--overload-burst", type=int, default=16, help="requests overload.shed sends at once")
    parser.add_argument("--shed-within", type=float, default=2.0, help="seconds a 503 may take under overload")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--junit", type=Path, help="write a JUnit XML report here")
    parser.add_argument("--json", type=Path, help="write a JSON report here")
    args = parser.parse_args(argv)
    if not args.list:
        check_target_arguments(parser, args)
    return args


def progress(args: argparse.Namespace, total: int):
    """(on_start, on_result) callbacks: a tqdm bar on stderr when it is a terminal, plain lines anyway."""
    bar = None
    if not args.no_progress and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=total, file=sys.stderr, unit="check", leave=False, dynamic_ncols=True)

    def on_start(check: Check) -> None:
        if bar is not None:
            bar.set_description(check.name)

    def on_result(result: CheckResult) -> None:
        line = f"  {result.status:<4}  {result.name}"
        if bar is None:
            print(line, flush=True)
            return
        bar.write(line, file=sys.stdout)
        bar.update()
        if bar.n == total:
            bar.close()

    return on_start, on_result


async def validate(args: argparse.Namespace) -> int:
    checks = select(ALL_CHECKS, args.checks.split(",") if args.checks else None)
    skip = skip_reasons(checks, args.skip.split(",") if args.skip else None)
    started = time.monotonic()
    target, problem = await reach(args, "validate-endpoint", args.timeout)
    if target:
        print(f"Validating {target.description}: {len(checks)} checks", flush=True)
    if problem:
        results = [CheckResult("connect", FAIL, time.monotonic() - started, f"cannot reach the target: {problem}")]
        exit_code = EXIT_UNREACHABLE
    else:
        context = Context(target, max_pending=args.max_pending, timeout=args.timeout,
                          overload_burst=args.overload_burst, shed_within=args.shed_within,
                          expect_device=args.expect_device, expect_uid=args.expect_uid)
        on_start, on_result = progress(args, len(checks))
        results = await run_checks(checks, context, on_result=on_result, skip=skip, on_start=on_start)
        exit_code = EXIT_FAILED if any(r.status == FAIL for r in results) else EXIT_PASSED
    seconds = time.monotonic() - started
    print(table(results, seconds))
    described = target.description if target else f"SageMaker endpoint {args.endpoint} ({args.region})"
    if args.json:
        write_json(args.json, described, results, seconds, exit_code)
    if args.junit:
        write_junit(args.junit, described, results, seconds)
    return exit_code


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for check in ALL_CHECKS:
            print(f"{check.name:<30} {check.description}")
        return EXIT_PASSED
    return run_against_target(validate(args))


if __name__ == "__main__":
    sys.exit(main())
