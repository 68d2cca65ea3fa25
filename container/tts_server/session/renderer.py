"""Renders one response: sentence by sentence, each sentence's audio leaves as soon as it exists.

Everything CPU-bound runs in the runtime's thread pools; this coroutine only awaits and
forwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from tts_client.chunker import split_sentences

from ..audio.pipeline import AudioOutput
from ..engine.backend import SAMPLE_RATE
from ..engine.synthesizer import Alignment, SegmentAudio
from ..runtime import EngineRuntime
from .events import AudioChunk, EngineEvent, ResponseDone, Status
from .request import ResponseRequest


class ResponseRenderer:
    def __init__(self, runtime: EngineRuntime, request: ResponseRequest, emit: Callable[[EngineEvent], Awaitable[None]]):
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
        produced_ms = 0
        truncated = False
        for span in spans:
            # One sentence at a time, each sent before the next one's inference starts: on a
            # CPU engine, inference running beside the encoder and the send would delay both.
            segment = await self._synthesize(loop, span)
            audio, alignments = segment.audio, [a.shifted(produced_ms) for a in segment.alignments]
            if request.max_length_ms is not None and produced_ms + segment.duration_ms >= request.max_length_ms:
                audio, alignments = _cut(audio, alignments, request.max_length_ms - produced_ms, request.max_length_ms)
                truncated = True
            produced_ms += len(audio) * 1000 // SAMPLE_RATE
            await self._send(await loop.run_in_executor(self.runtime.codec, self._output.push, audio), alignments)
            if not self._first_audio_sent:
                self._first_audio_sent = True
                self.runtime.first_audio_engine_seconds.append((request.response_id, segment.engine_seconds))
            if truncated:
                break
        await self._send(await loop.run_in_executor(self.runtime.codec, self._output.close), [])
        status = Status.TRUNCATED if truncated else Status.COMPLETED
        return ResponseDone(request.response_id, status, len(request.text), self.audio_ms)

    def _synthesize(self, loop: asyncio.AbstractEventLoop, span: tuple[int, int]) -> asyncio.Future[SegmentAudio]:
        request, voice = self.request, self.request.voice
        synthesize = self.runtime.synthesizer.synthesize
        return loop.run_in_executor(
            self.runtime.inference, synthesize, request.text, span[0], span[1], voice.style, voice.speed, voice.language
        )

    async def _send(self, audio: bytes, alignments: list[Alignment]) -> None:
        if not audio and not alignments:
            return
        chunk = AudioChunk(
            self.request.response_id, self._sequence, audio, alignments if self.request.with_timestamps else None
        )
        self._sequence += 1
        # Shielded: a cancel stops the response, never a frame half-way out of the socket.
        await asyncio.shield(self._emit(chunk))


def _cut(audio, alignments: list[Alignment], keep_ms: int, limit_ms: int):
    """Audio and timestamps up to max_length; a word cut in half keeps its clipped end."""
    keep = max(0, keep_ms) * SAMPLE_RATE // 1000
    kept = [a for a in alignments if a.start_ms < limit_ms]
    clipped = [Alignment(a.text, a.start_char, a.end_char, a.start_ms, min(a.end_ms, limit_ms)) for a in kept]
    return audio[:keep], clipped
