"""Overload is shed at once (SPEC §3, §5): past capacity a request gets 503
`service_overloaded` with a Retry-After straight away, never a place in a hidden queue.

A burst of short requests, all sent together: each must come back as audio or as a
well-formed 503, and every 503 within `--shed-within` seconds. A target whose capacity the
burst does not reach passes with that said; the burst is small (`--overload-burst`).
"""

from __future__ import annotations

import asyncio
import base64
import time
from concurrent.futures import ThreadPoolExecutor

from ..errors import ServiceError
from .runner import Check, Context, expect
from .texts import SHORT


def _one_request(http) -> tuple[float, bytes | ServiceError]:
    started = time.monotonic()
    try:
        body = http.invoke({"text": SHORT, "format": "pcm_16"}).json()
        outcome: bytes | ServiceError = base64.b64decode(body["audios"][0])
    except ServiceError as error:
        outcome = error
    return time.monotonic() - started, outcome


async def shed_at_once(context: Context) -> str:
    http = context.target.http
    expect(http is not None, "no HTTP endpoint for this target (run with --skip 'overload.*')")
    burst = context.overload_burst
    pool = ThreadPoolExecutor(burst, thread_name_prefix="overload")
    try:
        loop = asyncio.get_running_loop()
        outcomes = await asyncio.gather(*(loop.run_in_executor(pool, _one_request, http) for _ in range(burst)))
    finally:
        pool.shutdown(wait=False)
    shed = [(seconds, o) for seconds, o in outcomes if isinstance(o, ServiceError) and o.status == 503]
    other = [o for _, o in outcomes if isinstance(o, ServiceError) and o.status != 503]
    admitted = [o for _, o in outcomes if isinstance(o, bytes)]
    expect(not other, f"{len(other)} of {burst} requests failed otherwise: {other[0]}" if other else "")
    expect(all(o for o in admitted), "an admitted request returned no audio")
    malformed = [o for _, o in shed if o.code != "service_overloaded" or not o.retry_after]
    expect(not malformed, f"a 503 without code service_overloaded and retry_after: {malformed[0] if malformed else ''}")
    late = max((seconds for seconds, _ in shed), default=0.0)
    expect(late <= context.shed_within,
           f"a 503 came {late:.1f} s after its request (limit {context.shed_within:g} s): overload was queued, not shed")
    if not shed:
        return f"all {burst} requests admitted: the burst did not reach capacity"
    return f"{len(admitted)} admitted, {len(shed)} shed with 503 service_overloaded, the slowest 503 in {late:.2f} s"


CHECKS = [
    Check("overload.shed", shed_at_once, "past capacity, requests get 503 service_overloaded at once"),
]
