"""Renders one response: sentence by sentence, each sentence's audio leaves as soon as it exists.

Each sentence is a piece: G2P in the text pool, the model through the scheduler (which orders
it against every other session's pieces), encoding in the codec pool. This coroutine only
awaits and forwards; cancelling it drops its queued piece from the scheduler at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from tts_text.chunker import split_sentences

from ..audio.pipeline import AudioOutput
from ..engine.backend import SAMPLE_RATE
from ..engine.output import Alignment, SegmentAudio
from ..runtime import ModelRuntime
from ..scheduler import Stream
from ..wire.errors import ProtocolError
from .events import AudioChunk, ResponseDone, SessionEvent, Status
from .request import ResponseRequest


class ResponseRenderer:
    def __init__(self, runtime: ModelRuntime, request: ResponseRequest, emit: Callable[[SessionEvent], Awaitable[None]]):
        self.runtime = runtime
        self.request = request
        self._emit = emit
        self._sequence = 0
        self._output = AudioOutput(request.output, source_rate=SAMPLE_RATE)
        self._first_audio_sent = False

    @property
    def audio_ms(self) -> int:
        return round(self._output.duration_ms)

    async def run(self) -> ResponseDone:
        request = self.request
        loop = asyncio.get_running_loop()
        spans = split_sentences(request.text, fast_first_fragment=self.runtime.fast_first_fragment)
        stream = self.runtime.scheduler.open_stream(request.response_id)
        produced_ms = 0
        truncated = spoken = False
        upcoming = self._piece(spans[0], stream, first=True) if spans else None
        try:
            for index in range(len(spans)):
                segment = await upcoming
                # The next piece goes to the scheduler now, so the model can run it while this one
                # is encoded and sent; the scheduler decides when, by how soon this stream runs dry.
                upcoming = self._piece(spans[index + 1], stream, first=False) if index + 1 < len(spans) else None
                audio, alignments = segment.audio, [a.shifted(produced_ms) for a in segment.alignments]
                if request.max_length_ms is not None and produced_ms + segment.duration_ms >= request.max_length_ms:
                    audio, alignments = _cut(audio, alignments, request.max_length_ms - produced_ms, request.max_length_ms)
                    truncated = True
                began_ms, produced_ms = produced_ms, produced_ms + len(audio) * 1000 // SAMPLE_RATE
                spoken = spoken or len(audio) > 0
                if not spoken:  # nothing to say yet: not even a container's header leaves
                    continue
                encoded = await loop.run_in_executor(self.runtime.codec, self._output.push, audio)
                await self._send(encoded, alignments, began_ms, produced_ms)
                stream.sent(len(audio) / SAMPLE_RATE)
                if not self._first_audio_sent:
                    self._first_audio_sent = True
                    self.runtime.first_audio_engine_seconds.append((request.response_id, segment.engine_seconds))
                if truncated:
                    break
        finally:
            if upcoming is not None:
                upcoming.cancel()
            self.runtime.scheduler.finish_stream(stream)
        if not spoken and request.text.strip():
            raise no_speech(request)
        await self._send(await loop.run_in_executor(self.runtime.codec, self._output.close), [], produced_ms, produced_ms)
        status = Status.TRUNCATED if truncated else Status.COMPLETED
        return ResponseDone(request.response_id, status, len(request.text), self.audio_ms)

    def _piece(self, span: tuple[int, int], stream: Stream, first: bool) -> asyncio.Task[SegmentAudio]:
        return asyncio.ensure_future(self._synthesize(span, stream, first))

    async def _synthesize(self, span: tuple[int, int], stream: Stream, first: bool) -> SegmentAudio:
        """G2P in the text pool, the model through the scheduler, output processing in the codec pool."""
        loop, runtime, request, voice = asyncio.get_running_loop(), self.runtime, self.request, self.request.voice
        synthesizer = runtime.synthesizer
        piece = await loop.run_in_executor(runtime.text, synthesizer.prepare, request.text, span[0], span[1],
                                           voice.style, voice.speed, voice.language)
        results, model_seconds = await runtime.scheduler.run(piece.jobs, stream, first)
        return await loop.run_in_executor(runtime.codec, synthesizer.assemble, piece, results,
                                          piece.g2p_seconds + model_seconds)

    async def _send(self, audio: bytes, alignments: list[Alignment], start_ms: int, end_ms: int) -> None:
        if not audio and not alignments:
            return
        chunk = AudioChunk(self.request.response_id, self._sequence, audio,
                           alignments if self.request.with_timestamps else None, start_ms, end_ms)
        self._sequence += 1
        # Shielded: a cancel stops the response, never a frame half-way out of the socket.
        await asyncio.shield(self._emit(chunk))


def no_speech(request: ResponseRequest) -> ProtocolError:
    """A text that yields no speech is the client's mistake (SPEC: never a success with no audio)."""
    names = request.field_names
    return ProtocolError.invalid(f"{names.get('text', 'text')}: yields no speech in {request.voice.language!r}; if it "
                                 f"is written in another language, set {names.get('language', 'language')} to it",
                                 response_id=request.response_id)


def _cut(audio, alignments: list[Alignment], keep_ms: int, limit_ms: int):
    """Audio and timestamps up to max_length; a word cut in half keeps its clipped end."""
    keep = max(0, keep_ms) * SAMPLE_RATE // 1000
    kept = [a for a in alignments if a.start_ms < limit_ms]
    clipped = [Alignment(a.text, a.start_char, a.end_char, a.start_ms, min(a.end_ms, limit_ms)) for a in kept]
    return audio[:keep], clipped
