"""What the WebSocket transport gives a dialect, and what every dialect shares."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette import status

from ..admission import Admission
from ..runtime import ModelRuntime
from ..engine.voice_policy import NO_NAMES, VoiceNames
from ..session.engine import SessionEngine
from ..session.events import SessionEvent
from ..session.options import SessionOptions
from ..session.request import ResponseRequest
from ..settings import FamilySettings, Settings
from ..wire.errors import ProtocolError
from ..wire.sink import Sink
from .closing import Closing, Phase


SHARED_PATH = "/invocations-bidirectional-stream"


@dataclass(frozen=True)
class Opening:
    """How the client opened the socket, before its first message."""

    path: str = SHARED_PATH  # a family's own path, or the shared one every family speaks on
    params: Mapping[str, str] = field(default_factory=dict)  # the path's parameters (`{voice_id}`)
    query: Mapping[str, str] = field(default_factory=dict)  # the URL's query: behind SageMaker, its ModelQueryString
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SessionContext:
    sink: Sink
    runtime: ModelRuntime
    settings: Settings
    admission: Admission  # a session's active response counts as synthesis work
    opening: Opening = Opening()
    voices: VoiceNames = NO_NAMES  # the family's voice names
    config: FamilySettings = FamilySettings()  # the family's own settings


class Dialect:
    """A wire format adapted onto the one session engine; subclasses render its events."""

    def __init__(self, context: SessionContext):
        self.session_id = str(uuid.uuid4())
        self.closing = Closing()  # driven by SessionLoop; the client's `close` moves it here
        self._sink = context.sink
        self._runtime = context.runtime
        self._settings = context.settings
        self._opening = context.opening
        self._voices = context.voices
        self._config = context.config
        self._engine = SessionEngine(context.runtime, self._on_session_event, context.settings.ws_max_pending_responses,
                                     hold=context.admission.syntheses.take, session_id=self.session_id)

    @property
    def engine(self) -> SessionEngine:
        return self._engine

    def negotiate(self, **asked) -> SessionOptions:
        """The one voice negotiation (session/options.py), with this family's voice names."""
        return SessionOptions.negotiate(self._runtime.synthesizer, policy=self._runtime.voice_policy,
                                        names=self._voices, **asked)

    @staticmethod
    def error_event(error: ProtocolError) -> dict:
        """An error as this dialect's clients expect it (also for a refused session)."""
        raise NotImplementedError

    async def start(self, first: dict) -> bool:
        """Handle the first message; False ends the session (the dialect has closed it)."""
        raise NotImplementedError

    async def handle(self, event: dict) -> bool:
        """Handle one later message; False once the session is over."""
        raise NotImplementedError

    async def _on_session_event(self, event: SessionEvent) -> None:
        raise NotImplementedError

    async def _submit_owned(self, request: ResponseRequest, outstanding: list[str], owners: dict | None = None,
                            owner: object = None) -> None:
        """Submit `request` recorded first, as its events may arrive before submit returns: its id
        last in `outstanding` and, with `owners`, `owner` under its id; a refusal takes the record
        back and is raised."""
        outstanding.append(request.response_id)
        if owners is not None:
            owners[request.response_id] = owner
        try:
            await self._engine.submit(request)
        except ProtocolError:
            outstanding.remove(request.response_id)
            if owners is not None:
                del owners[request.response_id]
            raise

    async def report(self, error: ProtocolError) -> None:
        """Tell the client about a bad frame or request; the session goes on."""
        await self._sink.send(self.error_event(error))

    def begin_close(self) -> None:
        """The client's graceful close: what is accepted finishes, nothing new is (SPEC §3 `close`)."""
        if self.closing.is_open:
            self.closing.to(Phase.CLIENT_CLOSING)
        closing = "type: the session is closing ('close' was sent); no new responses are accepted"
        self._engine.refuse_new(ProtocolError.invalid(closing))

    async def finish_close(self) -> None:
        """Everything accepted is done: say goodbye the dialect's way and close normally."""
        await self._sink.close(status.WS_1000_NORMAL_CLOSURE)

    async def close(self, code: int, reason: str = "") -> None:
        await self._sink.close(code, reason)

    async def abort(self) -> None:
        """The client disconnected: stop everything, report nothing."""
        await self._engine.abort()
