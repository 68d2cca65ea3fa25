"""A Pipecat TTS service for this speech endpoint (`pip install "tts-client[pipecat]"`).

Follows Pipecat's own Deepgram-on-SageMaker service: one session for the service, text out
from `run_tts`, audio in on a receive task through `append_to_audio_context`. Pipecat calls
`run_tts` once per aggregated sentence with one context id for the whole LLM turn; each
sentence becomes one `response.create` (with_timestamps), so the server synthesizes them in
order while the LLM still writes. `flush_audio` ends the turn: its context closes once every
response it sent has its `response.done`. Barge-in (`on_audio_context_interrupted`) cancels
the turn's responses, and no audio of that turn is played after it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

import numpy as np
import soxr
from loguru import logger
from pipecat.frames.frames import CancelFrame, EndFrame, ErrorFrame, Frame, StartFrame, TTSAudioRawFrame, TTSStoppedFrame
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TTSService
from pipecat.utils.tracing.service_decorators import traced_tts

from ..events import AudioChunk, ErrorEvent, ResponseDone, TransportClosed
from ..session import Session
from .endpoint import SESSION_ENDING_CODES, Endpoint, Voice, open_pcm16

# Languages whose words are not separated by spaces: word frames carry their own spacing.
UNSPACED_LANGUAGES = ("ja", "zh")


@dataclass
class _Turn:
    """One Pipecat audio context: its responses still without response.done, and its audio so far."""

    pending: list[str] = field(default_factory=list)
    flushed: bool = False
    audio_s: float = 0.0
    starts: dict[str, float] = field(default_factory=dict)  # response id -> where its audio starts in the turn


class KokoroStreamingTTSService(TTSService):
    """Speaks through the endpoint's bidirectional session, over SageMaker or a WebSocket.

    Event handler `on_response_done(service, done: ResponseDone)`: each response's outcome
    and usage (`status`, `audio_ms`), e.g. for billing or to see a cancel take effect.
    """

    Settings = TTSSettings

    def __init__(self, *, endpoint: Endpoint, voice: str | None = None, language: str = "ja",
                 speed: float | None = None, sample_rate: int | None = None, close_timeout_s: float = 60, **kwargs):
        """voice: a speaker id of the session's language (None: the server's default);
        sample_rate: None takes the pipeline's output rate."""
        # Pipecat ends an audio context that stays quiet for stop_frame_timeout_s (3 s by
        # default) and drops whatever comes later. This service ends each context itself, at
        # its last response.done, and a sentence on a busy CPU server can take longer than
        # that: the timeout is only the backstop for a server that went silent.
        kwargs.setdefault("stop_frame_timeout_s", 30.0)
        super().__init__(sample_rate=sample_rate, push_start_frame=True, push_text_frames=False,
                         settings=TTSSettings(model=None, voice=voice, language=language), **kwargs)
        self._endpoint = endpoint
        self._language = language
        self._speed = speed
        self._close_timeout_s = close_timeout_s
        self._session: Session | None = None
        self.closed: TransportClosed | None = None  # how the last session ended, after a graceful stop
        self._server_rate = 0
        self._receiver = None
        self._ending: set[Session] = set()  # sessions the server said it ends (idle, lifetime, shutdown)
        self._retiring: Session | None = None  # the session this service closes itself
        self._turns: dict[str, _Turn] = {}
        self._turn_of: dict[str, str] = {}  # response id -> context id, until its response.done
        # One resampler per response, flushed at its response.done: a stream resampler holds
        # the last few ms back until more audio comes, and the turn's last audio would wait forever.
        self._resamplers: dict[str, soxr.ResampleStream] = {}
        self._register_event_handler("on_response_done")

    def can_generate_metrics(self) -> bool:
        return True

    @property
    def supports_processing_metrics(self) -> bool:
        return False  # run_tts only hands the text over; TTFB covers the synthesis

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self, frame: StartFrame):
        await super().start(frame)  # sets self.sample_rate from the pipeline
        await self._connect()

    async def stop(self, frame: EndFrame):
        await super().stop(frame)  # returns once every audio context has played
        await self._close(graceful=True)

    async def cancel(self, frame: CancelFrame):
        await super().cancel(frame)
        await self._close(graceful=False)

    async def cleanup(self):
        await super().cleanup()
        await self._close(graceful=False)

    async def _connect(self) -> Session | None:
        voice = Voice(self._language, self._settings.voice or None, self._speed)
        try:
            session, created = await open_pcm16(self._endpoint, voice, self.sample_rate)
        except Exception as error:  # noqa: BLE001 - reported to the pipeline (push_error, on_connection_error)
            await self.push_error(error_msg=f"could not open a session on {self._endpoint}: {error}", exception=error)
            await self._call_event_handler("on_connection_error", str(error))
            return None
        self._session, self._server_rate = session, created.sample_rate
        if self._server_rate != self.sample_rate:
            logger.info(f"{self}: the server has no {self.sample_rate} Hz; resampling its {self._server_rate} Hz")
        self._receiver = self.create_task(self._receive(session))
        await self._call_event_handler("on_connected")
        return session

    async def _open_session(self) -> Session | None:
        """The open session, else a new one (None when it cannot be opened: the pipeline is told)."""
        if self._session and not self._session.closed:
            return self._session
        return await self._connect()

    async def _close(self, graceful: bool) -> None:
        session, self._session = self._session, None
        if session is None:
            return
        self._retiring = session
        self._ending.discard(session)  # its loss is ignored (_receive), so nothing else would
        try:
            if graceful:
                # close -> session.closed -> only then the input ends (SageMaker drops a
                # stream's unsent audio as soon as its input ends).
                self.closed = await session.close(self._close_timeout_s)
            else:
                await session.abort()
        except Exception as error:  # noqa: BLE001 - logged; the abort below ends it anyway
            logger.warning(f"{self}: session did not close cleanly: {error}")
            await session.abort()
        if self._receiver:
            await self.cancel_task(self._receiver)
            self._receiver = None
        await self._call_event_handler("on_disconnected")

    # -- text out ---------------------------------------------------------------------------

    @traced_tts
    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame | None, None]:
        session = await self._open_session()
        if session is None:
            yield ErrorFrame(error=f"{self}: no session to speak with")
            return
        response_id = str(uuid.uuid4())
        turn = self._turns.setdefault(context_id, _Turn())
        turn.pending.append(response_id)
        self._turn_of[response_id] = context_id
        try:
            await self._create(session, response_id, text.strip())
        except Exception as error:  # noqa: BLE001 - the pipeline gets it as an ErrorFrame
            if session in self._ending or session.closed is not None:
                # It crossed the end of the session: the session's loss sends it again or settles it.
                yield None
                return
            if response_id in turn.pending:
                turn.pending.remove(response_id)
            self._turn_of.pop(response_id, None)
            yield ErrorFrame(error=f"{self}: could not send the text: {error}")
            return
        await self.start_tts_usage_metrics(text)
        yield None  # the audio arrives on the receive task

    async def flush_audio(self, context_id: str | None = None):
        context_id = context_id or self.get_active_audio_context_id()
        if context_id in self._turns:
            self._turns[context_id].flushed = True
            await self._finish_if_done(context_id)

    async def on_audio_context_interrupted(self, context_id: str):
        turn = self._turns.pop(context_id, None)
        if turn and self._session:
            for response_id in turn.pending:  # queued ones never start, the active one stops at once
                try:
                    await self._session.cancel(response_id)
                except Exception as error:  # noqa: BLE001 - logged; the interruption goes on
                    logger.warning(f"{self}: could not cancel {response_id}: {error}")
        await super().on_audio_context_interrupted(context_id)

    async def _update_settings(self, delta: TTSSettings):
        changed = await super()._update_settings(delta)
        self._warn_unhandled_updated_settings({name for name in changed if name != "voice"})
        return changed

    # -- audio in ---------------------------------------------------------------------------

    async def _receive(self, session: Session) -> None:
        async for event in session.events():
            if isinstance(event, AudioChunk):
                await self._on_audio(event)
            elif isinstance(event, ResponseDone):
                await self._on_done(event)
            elif isinstance(event, ErrorEvent):
                await self._on_error(session, event)
            elif isinstance(event, TransportClosed) and session is not self._retiring:
                await self._on_lost(session, event)

    async def _on_audio(self, chunk: AudioChunk) -> None:
        context_id = self._turn_of.get(chunk.response_id)
        turn = self._turns.get(context_id)
        if turn is None:
            return  # its turn was interrupted: none of its audio plays
        start = turn.starts.setdefault(chunk.response_id, turn.audio_s)
        if chunk.alignments:
            # Seconds from the start of the turn's audio; punctuation joins the word before it.
            words = [(a.text, start + a.start_ms / 1000) for a in chunk.alignments]
            await self.add_word_timestamps(words, context_id, pre_merge_tokens=True,
                                           includes_inter_frame_spaces=self._language in UNSPACED_LANGUAGES or None)
        turn.audio_s += len(chunk.audio) / (2 * self._server_rate)
        await self._play(context_id, chunk.response_id, np.frombuffer(chunk.audio, np.int16), last=False)

    async def _play(self, context_id: str, response_id: str, samples: np.ndarray, last: bool) -> None:
        if self._server_rate != self.sample_rate:
            if response_id not in self._resamplers:
                self._resamplers[response_id] = soxr.ResampleStream(self._server_rate, self.sample_rate, 1, dtype="int16")
            samples = self._resamplers[response_id].resample_chunk(samples, last=last)
        if samples.size:
            frame = TTSAudioRawFrame(samples.tobytes(), self.sample_rate, 1, context_id=context_id)
            await self.append_to_audio_context(context_id, frame)

    async def _on_done(self, done: ResponseDone) -> None:
        context_id = self._turn_of.pop(done.response_id, None)
        if done.response_id in self._resamplers and context_id in self._turns:
            await self._play(context_id, done.response_id, np.zeros(0, np.int16), last=True)
        self._resamplers.pop(done.response_id, None)
        await self._call_event_handler("on_response_done", done)
        if done.status == "failed" and done.error:
            await self.push_error(error_msg=f"{self}: synthesis failed: {done.error.code}: {done.error.message}")
        await self._settle(context_id, done.response_id)

    async def _on_error(self, session: Session, event: ErrorEvent) -> None:
        error = event.error
        if error.code in SESSION_ENDING_CODES:
            logger.info(f"{self}: the server ends the session ({error.code}); the next sentence opens a new one")
            self._ending.add(session)
            return
        response = session.responses.get(error.response_id or "")
        if response is not None and response.rejected is not None:  # that response.create will never be done
            await self._settle(self._turn_of.pop(response.response_id, None), response.response_id)
        elif error.code == "response_not_found":
            return  # a cancel that crossed its response.done: nothing is left to stop
        await self.push_error(error_msg=f"{self}: {error.code}: {error.message}")

    async def _on_lost(self, session: Session, closed: TransportClosed) -> None:
        """The session ended: what it still owed never comes. A sentence sent as the server was
        ending the session (idle, lifetime, shutdown) that it never took up goes to a new session."""
        if session is self._session:
            self._session = None
        ended = session in self._ending
        self._ending.discard(session)
        owed, resend = [], []
        for response_id, response in session.responses.items():
            context_id = self._turn_of.get(response_id)
            turn = self._turns.get(context_id)
            if turn is None or response_id not in turn.pending:
                continue
            untouched = not (response.queued or response.created or response.chunks or response.rejected)
            (resend if ended and untouched else owed).append((context_id, response))
        for context_id, response in resend:
            if not await self._send_again(response.response_id, response.text):
                owed.append((context_id, response))
        for context_id, response in owed:
            self._turn_of.pop(response.response_id, None)
            await self._settle(context_id, response.response_id)
        if owed or closed.code not in (1000, None):
            await self.push_error(error_msg=f"{self}: session closed ({closed.code} {closed.reason})".strip())

    async def _create(self, session: Session, response_id: str, text: str) -> None:
        # The voice goes with each response, so a settings update applies from the next sentence.
        await session.create(text, response_id=response_id, with_timestamps=True, speaker_id=self._settings.voice or None)

    async def _send_again(self, response_id: str, text: str) -> bool:
        session = await self._open_session()
        if session is None:
            return False
        try:
            await self._create(session, response_id, text)
        except Exception as error:  # noqa: BLE001 - the sentence is then lost, which the pipeline is told
            logger.warning(f"{self}: could not send {response_id} again: {error}")
            return False
        return True

    async def _settle(self, context_id: str | None, response_id: str) -> None:
        turn = self._turns.get(context_id)
        if turn is not None and response_id in turn.pending:
            turn.pending.remove(response_id)
            await self._finish_if_done(context_id)

    async def _finish_if_done(self, context_id: str) -> None:
        turn = self._turns.get(context_id)
        if turn is None or not turn.flushed or turn.pending:
            return
        del self._turns[context_id]
        await self.append_to_audio_context(context_id, TTSStoppedFrame(context_id=context_id))
        await self.remove_audio_context(context_id)
