"""What the endpoint runs on, against what the deploy asked for (SPEC §2).

The canonical `session.created` carries `server`: engine, device, precision, batch limits and
the uid the container runs as (the server's `runs_on()`). SageMaker passes only /invocations
and the bidirectional stream, so this is how a client of a deployed endpoint learns it. With
`--expect-device cuda` a GPU deploy that serves from the CPU fails here, whatever else works.
"""

from __future__ import annotations

from .runner import Check, Context, expect

FIELDS = ("engine", "device", "precision", "max_batch", "batch_limit", "uid")


async def runs_on(context: Context) -> str:
    session = await context.target.session(binary=True)
    try:
        created = await session.open()
    finally:
        await session.abort()
    server = created.raw.get("server")
    expect(isinstance(server, dict), f"session.created has no `server` object (engine, device, ...): {created.raw}")
    missing = [name for name in FIELDS if name not in server]
    expect(not missing, f"session.created's server lacks {', '.join(missing)}: {server}")
    said = (f"{server['engine']} on {server['device']} ({server['precision']}), batches of up to "
            f"{server['batch_limit']} (MAX_BATCH {server['max_batch']}), uid {server['uid']}")
    if context.expect_device is not None:
        expect(server["device"] == context.expect_device,
               f"the endpoint runs on {server['device']!r}, the deploy asked for {context.expect_device!r}: {said}")
    if context.expect_uid is not None:
        expect(server["uid"] == context.expect_uid,
               f"the container runs as uid {server['uid']}, the deploy asked for {context.expect_uid}: {said}")
    return said


CHECKS = [
    Check("server.runs_on", runs_on, "session.created says engine, device, precision, batch limits and uid, "
                                     "as the deploy asked"),
]
