"""A LiveKit Agents TTS plugin for this speech endpoint (`pip install "tts-client[livekit]"`).

`stream()` reads the agent's pushed LLM text, cuts it into sentences as they complete (the
chunker the server uses) and sends each as one `response.create` with timestamps, so audio
starts while the LLM is still writing. Audio comes out as one segment per stream, with
`TimedString` word times from the server's alignments. `aclose()` is LiveKit's interruption:
the stream's outstanding responses are cancelled and its session goes back to the pool.
Sessions are pooled (`utils.ConnectionPool`) and renewed before the endpoint's maximum
session lifetime.
"""

from __future__ import annotations

import asyncio
import uuid

from livekit.agents import DEFAULT_API_CONNECT_OPTIONS, APIConnectionError, APIConnectOptions, APIError, tts, utils
from livekit.agents.types import TimedString

from tts_text.chunker import SentenceChunker
from ..events import Alignment, AudioChunk, ErrorEvent, ResponseDone, TransportClosed
from ..session import Session
from .endpoint import Endpoint, Voice, open_pcm16

# The server's SESSION_MAX_LIFETIME_S defaults to 3600 s (container/tts_server/settings.py):
# a pooled session is renewed well before, so no utterance meets the limit mid-sentence.
DEFAULT_MAX_SESSION_S = 3300.0
UNSPACED_LANGUAGES = ("ja", "zh")


class KokoroStreamingTTS(tts.TTS):
    def __init__(self, *, endpoint: Endpoint, voice: str | None = None, language: str = "ja",
                 speed: float | None = None, sample_rate: int = 24000,
                 max_session_s: float = DEFAULT_MAX_SESSION_S, close_timeout_s: float = 30):
        """max_session_s: renew a pooled session after this long; keep it under the endpoint's
        SESSION_MAX_LIFETIME_S. sample_rate: one the server speaks pcm_16 at (8000-48000)."""
        super().__init__(capabilities=tts.TTSCapabilities(streaming=True, aligned_transcript=True),
                         sample_rate=sample_rate, num_channels=1)
        self._endpoint = endpoint
        self._voice = Voice(language, voice, speed)
        self._close_timeout_s = close_timeout_s
        self._pool = utils.ConnectionPool[Session](connect_cb=self._connect, close_cb=self._close,
                                                   max_session_duration=max_session_s)
        self._sessions: set[Session] = set()

    @property
    def provider(self) -> str:
        return "kokoro-streaming-tts"

    @property
    def model(self) -> str:
        return "kokoro-82m"

    @property
    def language(self) -> str:
        return self._voice.language

    @property
    def open_sessions(self) -> list[Session]:
        """The sessions this plugin holds open (pooled or in use)."""
        return [s for s in self._sessions if s.closed is None]

    def stream(self, *, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS) -> KokoroSynthesizeStream:
        return KokoroSynthesizeStream(tts=self, conn_options=conn_options)

    def synthesize(self, text: str, *, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS) -> tts.ChunkedStream:
        return self._synthesize_with_stream(text, conn_options=conn_options)

    def prewarm(self) -> None:
        self._pool.prewarm()

    async def aclose(self) -> None:
        await self._pool.aclose()

    async def acquire(self, timeout: float) -> Session:
        """A pooled session that is still open (the server ends idle ones: SESSION_IDLE_TIMEOUT_S)."""
        while True:
            session = await self._pool.get(timeout=timeout)
            if session.closed is None:
                return session
            self._pool.remove(session)

    def release(self, session: Session) -> None:
        self._pool.put(session) if session.closed is None else self._pool.remove(session)

    async def _connect(self, timeout: float) -> Session:
        try:
            session, created = await asyncio.wait_for(open_pcm16(self._endpoint, self._voice, self.sample_rate), timeout)
        except Exception as error:
            raise APIConnectionError(f"could not open a session on {self._endpoint}: {error}") from error
        if created.sample_rate != self.sample_rate:
            await session.abort()
            raise APIError(f"sample_rate: the server speaks pcm_16 at {created.sample_rate} Hz, not {self.sample_rate}",
                           retryable=False)
        self._sessions.add(session)
        return session

    async def _close(self, session: Session) -> None:
        self._sessions.discard(session)
        try:
            await session.close(self._close_timeout_s)
        except Exception:  # noqa: BLE001 - a close that fails still ends in an abort
            await session.abort()


class KokoroSynthesizeStream(tts.SynthesizeStream):
    """One utterance: the text pushed until the first flush (or end_input), as one segment."""

    def __init__(self, *, tts: KokoroStreamingTTS, conn_options: APIConnectOptions):
        super().__init__(tts=tts, conn_options=conn_options)
        self._kokoro = tts
        self.session_id: str | None = None
        self.response_ids: list[str] = []

    async def _run(self, output_emitter: tts.AudioEmitter) -> None:
        request_id = utils.shortuuid()
        output_emitter.initialize(request_id=request_id, sample_rate=self._kokoro.sample_rate, num_channels=1,
                                  mime_type="audio/pcm", stream=True)
        output_emitter.start_segment(segment_id=request_id)
        session = await self._kokoro.acquire(self._conn_options.timeout)
        self.session_id = session.created.session_id
        utterance = _Utterance(session, output_emitter, self._kokoro, self.response_ids)
        try:
            await utterance.speak(self._read_input(utterance))
        finally:
            # Reached by aclose() too (LiveKit's interruption): what was not spoken is cancelled.
            await utterance.cancel_outstanding()
            self._kokoro.release(session)
        output_emitter.end_segment()

    async def _read_input(self, utterance: _Utterance) -> None:
        chunker = SentenceChunker()
        async for data in self._input_ch:
            if isinstance(data, self._FlushSentinel):
                break  # one segment per stream (LiveKit's own rule): a flush ends it
            for sentence in chunker.feed(data):
                await utterance.send(sentence)
                self._mark_started()
        for sentence in chunker.flush():
            await utterance.send(sentence)
            self._mark_started()


class _Utterance:
    """The responses of one stream on a shared session, and their audio as one segment."""

    def __init__(self, session: Session, emitter: tts.AudioEmitter, plugin: KokoroStreamingTTS, response_ids: list[str]):
        self._session = session
        self._emitter = emitter
        self._plugin = plugin
        self._order = response_ids
        self._done: set[str] = set()
        self._starts: dict[str, float] = {}
        self._spoken_to: dict[str, int] = {}  # response id -> characters of its text timed so far
        self._audio_s = 0.0

    async def send(self, sentence: str) -> None:
        response_id = str(uuid.uuid4())
        self._order.append(response_id)
        await self._session.create(sentence, response_id=response_id, with_timestamps=True)

    async def cancel_outstanding(self) -> None:
        for response_id in self._order:
            if response_id not in self._done and self._session.closed is None:
                try:
                    await self._session.cancel(response_id)
                except Exception:  # noqa: BLE001 - the session is gone: nothing is left to stop
                    return

    async def speak(self, reading) -> None:
        """Run the text reader while handling this stream's events, until the text is read
        and each of its responses is done."""
        reader = asyncio.create_task(reading)
        getter: asyncio.Future | None = None
        try:
            while not (reader.done() and self._done.issuperset(self._order)):
                getter = getter or asyncio.ensure_future(self._session.next_event())
                await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
                if reader.done() and reader.exception():
                    raise reader.exception()
                if getter.done():
                    event, getter = getter.result(), None
                    self._handle(event)
        finally:
            for task in (getter, reader):
                if task is not None and not task.done():
                    task.cancel()

    def _handle(self, event) -> None:
        if isinstance(event, TransportClosed):
            raise APIConnectionError(f"the session closed ({event.code} {event.reason})".strip())
        response_id = getattr(event, "response_id", None) or getattr(getattr(event, "error", None), "response_id", None)
        if response_id not in self._order:
            return  # an earlier stream's response on this pooled session
        if isinstance(event, AudioChunk):
            start = self._starts.setdefault(response_id, self._audio_s)
            self._emitter.push_timed_transcript([self._timed(response_id, a, start) for a in event.alignments or []])
            self._emitter.push(event.audio)
            self._audio_s += len(event.audio) / (2 * self._plugin.sample_rate)
        elif isinstance(event, ResponseDone):
            self._done.add(response_id)
            if event.status == "failed":
                raise APIError(f"synthesis failed: {event.error.code}: {event.error.message}", retryable=False)
        elif isinstance(event, ErrorEvent) and self._session.responses[response_id].rejected:
            raise APIError(f"{event.error.code}: {event.error.message}", retryable=False)

    def _timed(self, response_id: str, alignment: Alignment, start: float) -> TimedString:
        """The text from the previous word's end to this one's: spaces and punctuation kept,
        so the pieces join up to the spoken text."""
        text = self._session.responses[response_id].text
        begin = self._spoken_to.get(response_id, 0)
        self._spoken_to[response_id] = alignment.end_char
        piece = text[begin:alignment.end_char]
        if begin == 0 and response_id != self._order[0] and self._plugin.language not in UNSPACED_LANGUAGES:
            piece = " " + piece  # sentences were sent without the space between them
        return TimedString(piece, start_time=start + alignment.start_ms / 1000, end_time=start + alignment.end_ms / 1000)
