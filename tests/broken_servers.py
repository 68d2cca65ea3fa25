"""Deliberately broken servers, one rule broken each: what proves each validator check can fail.

Each is the real server behind a relay (`relay_app`, an ASGI app on its own port) that
is correct apart from one `Breakage`: a small object that may rewrite the client's frames
on their way in, the server's frames on their way out, or the HTTP exchange. The relay
itself (`Breakage` unchanged) passes every check, so a failure is the breakage's doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Callable

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from waiting import until

Frame = str | bytes
FORWARDED_HEADERS = ("content-type", "retry-after")


class Refuse(Exception):
    """Raised by a breakage to close the client's connection with this code."""

    def __init__(self, code: int, reason: str):
        self.code, self.reason = code, reason


def edit(frame: Frame, change: Callable[[dict], dict | list[dict] | None]) -> list[Frame]:
    """The frame after change(event): an event, a list of events, or None to drop it. Frames
    that are not JSON objects (audio) pass unchanged; an edited frame keeps its frame type."""
    try:
        event = json.loads(frame)
    except (ValueError, UnicodeDecodeError):
        return [frame]
    if not isinstance(event, dict):
        return [frame]
    changed = change(event)
    events = [] if changed is None else changed if isinstance(changed, list) else [changed]
    text = [json.dumps(e, ensure_ascii=False) for e in events]
    return text if isinstance(frame, str) else [t.encode() for t in text]


def queued_instead(frame: Frame, code: str) -> list[Frame]:
    """The frame, with an error of this code answered as if its response had been queued."""
    def accept(event):
        error = event.get("error") or {}
        if event.get("type") == "error" and error.get("code") == code:
            return {"type": "response.queued", "response_id": error["response_id"]}
        return event
    return edit(frame, accept)


class Breakage:
    """A correct relay; each subclass breaks one rule. One instance per connection."""

    name = "correct"
    fails: tuple[str, ...] = ()  # the validator checks that must fail against it
    rule = ""  # the rule it breaks, for the docs table

    hang_up = False  # set by to_client: close the connection (1000) once its frames are sent

    def to_server(self, frame: Frame) -> list[Frame]:
        return [frame]

    def to_client(self, frame: Frame) -> list[Frame]:
        return [frame]

    def hold_s(self, frame: Frame) -> float:
        """Seconds to wait before this server frame goes on (and everything after it)."""
        return 0.0

    def request_body(self, body: dict) -> dict:
        return body

    async def http(self, request: Request, forward) -> Response:
        return await forward(request)


class ClosesAfterFirstResponse(Breakage):
    """The blog's warning: a handler that treats the socket like one HTTP request/response."""

    name = "closes_after_first_response"
    fails = ("session.several_messages", "session.pipelining_fifo", "cancel.active", "cancel.queued", "close.drains",
             "close.input_ended")
    rule = "closes the session (1000) after the first response.done"

    def to_client(self, frame):
        def hang_up(event):
            self.hang_up = self.hang_up or event.get("type") == "response.done"
            return event
        return edit(frame, hang_up)


class ServerInfoMissing(Breakage):
    name, fails, rule = "server_info_missing", ("server.runs_on",), \
        "session.created does not say what serves (no `server`: engine, device, ...)"

    def to_client(self, frame):
        return edit(frame, lambda e: {k: v for k, v in e.items() if k != "server"} if e.get("type") == "session.created" else e)


class OpenNotRequired(Breakage):
    name, fails, rule = "open_not_required", ("open.required_first",), "a session without open gets default settings"

    def __init__(self):
        self.first, self.injected = True, False

    def to_server(self, frame):
        def open_for_it(event):
            first, self.first = self.first, False
            self.injected = first and event.get("type") != "open"
            return [{"type": "open"}, event] if self.injected else event
        return edit(frame, open_for_it)

    def to_client(self, frame):  # the client never asked for a session.created
        return edit(frame, lambda e: None if e.get("type") == "session.created" and self.injected else e)


class DuplicateIdsAccepted(Breakage):
    name, fails, rule = "duplicate_ids_accepted", ("errors.duplicate_response_id",), \
        "a response_id that is still outstanding is queued again"

    def to_client(self, frame):
        return queued_instead(frame, "duplicate_response_id")


class WrongFormatBytes(Breakage):
    name, fails, rule = "wrong_format_bytes", ("format.flac@16000",), "announces flac, sends WAV bytes"

    def to_server(self, frame):
        return edit(frame, lambda e: e | {"format": "wav"} if e.get("type") == "open" and e.get("format") == "flac" else e)

    def to_client(self, frame):
        return edit(frame, lambda e: e | {"format": "flac"} if e.get("type") == "session.created" and e.get("format") == "wav" else e)


class SampleRateIgnored(Breakage):
    name = "sample_rate_ignored"
    fails = ("format.pcm_16@16000", "format.wav@8000", "format.flac@16000", "http.invocations", "http.stream")
    rule = "echoes the sample_rate asked for, sends 24 kHz audio (WebSocket and HTTP)"

    def __init__(self):
        self.asked = None

    def to_server(self, frame):
        def drop_rate(event):
            if event.get("type") == "open":
                self.asked = event.pop("sample_rate", None)
            return event
        return edit(frame, drop_rate)

    def to_client(self, frame):
        return edit(frame, lambda e: e | {"sample_rate": self.asked} if e.get("type") == "session.created" and self.asked else e)

    def request_body(self, body):
        return {k: v for k, v in body.items() if k not in ("sample_rate", "speech_sample_rate")}


class QueuedCancelIgnored(Breakage):
    name, fails, rule = "queued_cancel_ignored", ("cancel.queued",), "a cancel of a queued response is dropped"

    def __init__(self):
        self.queued: set[str] = set()

    def to_client(self, frame):
        def track(event):
            if event.get("type") == "response.queued":
                self.queued.add(event["response_id"])
            elif event.get("type") in ("response.created", "response.done"):
                self.queued.discard(event.get("response_id"))
            return event
        return edit(frame, track)

    def to_server(self, frame):
        return edit(frame, lambda e: None if e.get("type") == "response.cancel" and e.get("response_id") in self.queued else e)


class NoQueueBound(Breakage):
    name, fails, rule = "no_queue_bound", ("queue.bound",), "queues past WS_MAX_PENDING_RESPONSES"

    def to_client(self, frame):
        return queued_instead(frame, "too_many_queued_responses")


class DuplicateDone(Breakage):
    name, fails, rule = "duplicate_done", ("session.pipelining_fifo",), "sends every response.done twice"

    def to_client(self, frame):
        return edit(frame, lambda e: [e, e] if e.get("type") == "response.done" else e)


class MissingDone(Breakage):
    name, fails, rule = "missing_done", ("close.drains",), "a response that waited in the queue never gets its response.done"

    def __init__(self):
        self.queued: set[str] = set()

    def to_client(self, frame):
        def drop(event):
            if event.get("type") == "response.queued":
                self.queued.add(event["response_id"])
            elif event.get("type") == "response.done" and event.get("response_id") in self.queued:
                return None
            return event
        return edit(frame, drop)


def _alignments(change: Callable[[list[dict]], list[dict]]):
    def apply(event):
        if event.get("type") == "audio.chunk" and event.get("alignments"):
            event["alignments"] = change(event["alignments"])
        return event
    return apply


class TimestampsOutOfOrder(Breakage):
    name, fails, rule = "timestamps_out_of_order", ("timestamps.consistent",), "swaps the first two alignment records of a chunk"

    def to_client(self, frame):
        return edit(frame, _alignments(lambda records: [*records[1::-1], *records[2:]]))


class TimestampsPastAudio(Breakage):
    name, fails, rule = "timestamps_past_audio", ("timestamps.consistent",), "stretches alignment times by 1.5 (in order, past the audio)"

    def to_client(self, frame):
        return edit(frame, _alignments(lambda records: [
            r | {"start_ms": r["start_ms"] * 3 // 2, "end_ms": r["end_ms"] * 3 // 2} for r in records]))


class MaxLengthIgnored(Breakage):
    name, fails, rule = "max_length_ignored", ("max_length.truncates",), "drops max_length, still reports status truncated"

    def __init__(self):
        self.capped: set[str] = set()

    def to_server(self, frame):
        def drop(event):
            if event.get("type") == "response.create" and event.pop("max_length", None) is not None:
                self.capped.add(event.get("response_id") or "")
            return event
        return edit(frame, drop)

    def to_client(self, frame):
        def claim(event):
            if event.get("type") == "response.done" and self.capped:
                return event | {"status": "truncated"}
            return event
        return edit(frame, claim)


class BinaryFramesRefused(Breakage):
    name, fails, rule = "binary_frames_refused", ("open.binary_frame",), "closes 1003 on a binary client frame (SageMaker sends binary)"

    def to_server(self, frame):
        if isinstance(frame, bytes):
            raise Refuse(1003, "binary frames are not supported")
        return [frame]


class NoInvocationsRoute(Breakage):
    name = "no_invocations_route"
    fails = ("http.invocations", "http.stream", "http.sse", "http.error")
    rule = "POST /invocations is 404"

    async def http(self, request, forward):
        return PlainTextResponse("Not Found", status_code=404)


class ErrorsWithoutEnvelope(Breakage):
    name, fails, rule = "errors_without_envelope", ("http.error", "errors.bad_frames"), \
        "errors as bare text (HTTP) and as {type, message} events (WebSocket)"

    async def http(self, request, forward):
        reply = await forward(request)
        if reply.status_code < 400:
            return reply
        body = b"".join([chunk async for chunk in reply.body_iterator])
        return PlainTextResponse(json.loads(body)["error"]["message"], status_code=reply.status_code)

    def to_client(self, frame):
        return edit(frame, lambda e: {"type": "error", "message": e["error"]["message"]} if e.get("type") == "error" else e)


class OverloadAnsweredLate(Breakage):
    """One request at a time; the others wait HOLD_S before their (well-formed) 503."""

    name, fails, rule = "overload_answered_late", ("overload.shed",), "holds requests past capacity, then a late 503"
    HOLD_S = 8.0  # the test runs the validator with --shed-within 4

    async def http(self, request, forward):
        lock = request.app.state.lock
        if lock.locked():
            await asyncio.sleep(self.HOLD_S)  # the bug itself: waiting where it should refuse
            return JSONResponse({"error": {"message": "server at capacity, retry later", "code": "service_overloaded",
                                           "retry_after": 1}}, status_code=503, headers={"Retry-After": "1"})
        async with lock:
            reply = await forward(request)
            body = b"".join([chunk async for chunk in reply.body_iterator])
        return Response(body, status_code=reply.status_code, headers=dict(reply.headers))


def is_event(frame: Frame, kind: str) -> bool:
    try:
        event = json.loads(frame)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(event, dict) and event.get("type") == kind


# The load stage's breakages (tests/scripts/test_load_stage.py): correct replies, but slow or cut.
class SlowFirstAudio(Breakage):
    name, rule = "slow_first_audio", "holds each response's first audio chunk for HOLD_S"
    HOLD_S = 4.0  # past the CPU budget's TTFA p95 (stacks/load_budget.py: 3000 ms)

    def __init__(self):
        self.started: set[str] = set()

    def hold_s(self, frame):
        if not is_event(frame, "audio.chunk"):
            return 0.0
        response_id = json.loads(frame)["response_id"]
        first = response_id not in self.started
        self.started.add(response_id)
        return self.HOLD_S if first else 0.0


class DropsSessions(Breakage):
    name, rule = "drops_sessions", "ends the session (1000) at a response's first audio chunk"

    def to_client(self, frame):
        self.hang_up = self.hang_up or is_event(frame, "audio.chunk")
        return [frame]


FAMILY: list[type[Breakage]] = [
    ClosesAfterFirstResponse, ServerInfoMissing, OpenNotRequired, DuplicateIdsAccepted, WrongFormatBytes, SampleRateIgnored, QueuedCancelIgnored, NoQueueBound, DuplicateDone, MissingDone,
    TimestampsOutOfOrder, TimestampsPastAudio, MaxLengthIgnored, BinaryFramesRefused, NoInvocationsRoute,
    ErrorsWithoutEnvelope, OverloadAnsweredLate,
]


def relay_app(upstream_http: str, breakage: type[Breakage]) -> Starlette:
    upstream_ws = upstream_http.replace("http://", "ws://") + "/invocations-bidirectional-stream"
    client = httpx.AsyncClient(base_url=upstream_http, timeout=120)

    async def forward(request: Request) -> StreamingResponse:
        body = await request.body()
        with contextlib.suppress(ValueError):
            body = json.dumps(breakage().request_body(json.loads(body))).encode()
        headers = {k: v for k, v in request.headers.items() if k in ("content-type", "accept")}
        reply = await client.send(client.build_request(request.method, request.url.path, content=body, headers=headers),
                                  stream=True)
        kept = {k: v for k, v in reply.headers.items() if k in FORWARDED_HEADERS}
        return StreamingResponse(reply.aiter_raw(), status_code=reply.status_code, headers=kept,
                                 background=BackgroundTask(reply.aclose))

    async def invocations(request: Request) -> Response:
        return await breakage().http(request, forward)

    async def ping(request: Request) -> Response:
        return await forward(request)

    async def stream(websocket: WebSocket) -> None:
        broken = breakage()
        await websocket.accept()
        async with connect(upstream_ws, max_size=None) as upstream:
            async def to_upstream():
                while (message := await websocket.receive())["type"] != "websocket.disconnect":
                    frame = message["text"] if message.get("text") is not None else message["bytes"]
                    for out in broken.to_server(frame):
                        await upstream.send(out)

            async def to_client():
                with contextlib.suppress(ConnectionClosed):
                    async for frame in upstream:
                        if hold := broken.hold_s(frame):
                            await asyncio.sleep(hold)
                        for out in broken.to_client(frame):
                            await (websocket.send_text(out) if isinstance(out, str) else websocket.send_bytes(out))
                        if broken.hang_up:
                            raise Refuse(1000, "")
                raise Refuse(upstream.close_code or 1000, upstream.close_reason or "")

            tasks = [asyncio.create_task(to_upstream()), asyncio.create_task(to_client())]
            done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            refusal = next((t.exception() for t in done if isinstance(t.exception(), Refuse)), None)
        if refusal:
            with contextlib.suppress(RuntimeError):  # the client may be gone already
                await websocket.close(refusal.code, refusal.reason)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        await client.aclose()

    app = Starlette(routes=[
        Route("/ping", ping, methods=["GET"]),
        Route("/invocations", invocations, methods=["POST"]),
        WebSocketRoute("/invocations-bidirectional-stream", stream),
    ], lifespan=lifespan)
    app.state.lock = asyncio.Lock()
    return app


@contextlib.asynccontextmanager
async def broken_server(upstream_http: str, breakage: type[Breakage]):
    """Serves the relay on a free loopback port in this event loop; yields its WebSocket URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(relay_app(upstream_http, breakage), log_level="warning", lifespan="on",
                            ws="websockets-sansio", ws_max_size=16 << 20)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await until(lambda: server.started or task.done(), "the broken server to start")
        assert not task.done(), "the broken server did not start"
        yield f"ws://127.0.0.1:{port}/invocations-bidirectional-stream"
    finally:
        server.should_exit = True
        await task
        sock.close()
