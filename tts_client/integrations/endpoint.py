"""What both framework integrations share: where the endpoint is, and a session speaking
PCM16 at the rate the framework wants (SPEC §3). Framework-free, so either integration
imports it without the other framework.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..events import SessionCreated
from ..session import Session, SessionError

MODEL_RATE = 24000  # the model's own rate: every server speaks it
# The server ends a session with one of these (idle, lifetime, shutdown; SPEC §10), then
# closes it: not a failure of any response, the next one simply needs a new session.
SESSION_ENDING_CODES = frozenset({"session_idle_timeout", "session_lifetime_exceeded", "server_shutting_down"})


@dataclass(frozen=True)
class Endpoint:
    """A speech endpoint: a WebSocket URL (a local server), or a SageMaker endpoint reached
    through the HTTP/2 SDK (`endpoint_url` and `ca_file` point it at a local gateway)."""

    websocket_url: str | None = None
    sagemaker_endpoint: str | None = None
    region: str | None = None
    endpoint_url: str | None = None
    ca_file: str | None = None

    def __post_init__(self):
        if (self.websocket_url is None) == (self.sagemaker_endpoint is None):
            raise ValueError("Endpoint: give exactly one of websocket_url (ws://...) or sagemaker_endpoint (a name)")

    @classmethod
    def websocket(cls, url: str) -> Endpoint:
        return cls(websocket_url=url)

    @classmethod
    def sagemaker(cls, endpoint_name: str, *, region: str | None = None, endpoint_url: str | None = None,
                  ca_file: str | None = None) -> Endpoint:
        return cls(sagemaker_endpoint=endpoint_name, region=region, endpoint_url=endpoint_url, ca_file=ca_file)

    async def connect(self) -> Session:
        if self.websocket_url:
            return await Session.websocket(self.websocket_url)
        return await Session.sagemaker(self.sagemaker_endpoint, region=self.region, endpoint_url=self.endpoint_url,
                                       ca_file=self.ca_file)


@dataclass(frozen=True)
class Voice:
    """The `open` fields a framework user picks; None leaves the server's default."""

    language: str | None = None
    speaker_id: str | None = None
    speed: float | None = None


async def open_pcm16(endpoint: Endpoint, voice: Voice, sample_rate: int, timeout: float = 30) -> tuple[Session, SessionCreated]:
    """An open session sending pcm_16 at `sample_rate`, or at the model's rate when the server
    refuses that one (then the caller resamples: `created.sample_rate` says which)."""
    try:
        return await _open(endpoint, voice, sample_rate, timeout)
    except SessionError as error:
        refused_rate = error.error is not None and "sample_rate" in error.error.message
        if not refused_rate or sample_rate == MODEL_RATE:
            raise
    # An invalid open ends the session (close 1008), so the retry needs a connection of its own.
    return await _open(endpoint, voice, MODEL_RATE, timeout)


async def _open(endpoint: Endpoint, voice: Voice, sample_rate: int, timeout: float) -> tuple[Session, SessionCreated]:
    session = await endpoint.connect()
    try:
        created = await session.open(timeout, format="pcm_16", sample_rate=sample_rate, language=voice.language,
                                     speaker_id=voice.speaker_id, speed=voice.speed)
    except BaseException:
        await session.abort()
        raise
    return session, created
