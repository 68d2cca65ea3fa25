"""Renders one response: piece by piece, each piece's audio leaves as soon as it exists.

A piece is a sentence (the first one cut early at a clause: the fast first fragment), or, once
the stream is far enough ahead of its listener, several sentences merged (engine/pacing.py).
G2P runs in the text pool, the model through the scheduler (which orders it against every
other session's pieces), encoding in the codec pool. A first piece runs in windows of frames
(engine/windows.py): its first audio leaves after its first window, the rest as it comes.
This coroutine only awaits and forwards; cancelling it drops its queued work from the
scheduler at once.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

from tts_text.chunker import split_sentences

from ..audio.pipeline import AudioOutput
from ..engine.backend import SAMPLE_RATE
from ..engine.output import Alignment, SegmentAudio
from ..engine.tokens import Piece, later
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
        self._sentences: deque[tuple[int, int]] = deque()
        self._prepared: asyncio.Future[Piece] | None = None  # the next sentence, through G2P already
        self._tokens = 0  # tokens of the pieces handed out so far (the stream's audio per token)

    @property
    def audio_ms(self) -> int:
        return round(self._output.duration_ms)

    async def run(self) -> ResponseDone:
        request = self.request
        loop = asyncio.get_running_loop()
        self._sentences.extend(split_sentences(request.text, fast_first_fragment=self.runtime.fast_first_fragment))
        stream = self.runtime.scheduler.open_stream(request.response_id)
        produced_ms = 0
        truncated = spoken = False
        began = time.perf_counter()
        upcoming = self._piece(stream, first=True) if self._sentences else None
        segments = None
        try:
            while upcoming is not None and not truncated:
                segments, upcoming = upcoming, None
                async for segment, last in segments:
                    if last:  # the next piece goes to the scheduler now, so the model runs it while this
                        # one is encoded and sent; the scheduler decides when, by how soon this stream runs dry
                        upcoming = self._piece(stream, first=False, last_s=segment.duration_ms / 1000) \
                            if self._sentences or self._prepared else None
                    audio, alignments = segment.audio, [a.shifted(produced_ms) for a in segment.alignments]
                    if request.max_length_ms is not None and produced_ms + segment.duration_ms >= request.max_length_ms:
                        audio, alignments = _cut(audio, alignments, request.max_length_ms - produced_ms, request.max_length_ms)
                        truncated = True
                    began_ms, produced_ms = produced_ms, produced_ms + len(audio) * 1000 // SAMPLE_RATE
                    spoken = spoken or len(audio) > 0
                    if not spoken:  # nothing to say yet: not even a container's header leaves
                        continue
                    encoding = time.perf_counter()
                    encoded = await loop.run_in_executor(self.runtime.codec, self._output.push, audio)
                    encoding = time.perf_counter() - encoding
                    await self._send(encoded, alignments, began_ms, produced_ms)
                    stream.sent(len(audio) / SAMPLE_RATE)
                    if not self._first_audio_sent and len(audio):
                        self._first_audio_sent = True
                        self.runtime.first_audio_engine_seconds.append((request.response_id, segment.engine_seconds))
                        self.runtime.first_audio_phases.append((request.response_id, {
                            **segments.phases, "encoding_s": encoding, "server_s": time.perf_counter() - began}))
                    if truncated:
                        break
        finally:
            for pending in (segments, upcoming, self._prepared):
                if pending is not None:
                    pending.cancel()
            self.runtime.scheduler.finish_stream(stream)
        if not spoken and request.text.strip():
            raise no_speech(request)
        await self._send(await loop.run_in_executor(self.runtime.codec, self._output.close), [], produced_ms, produced_ms)
        status = Status.TRUNCATED if truncated else Status.COMPLETED
        return ResponseDone(request.response_id, status, len(request.text), self.audio_ms)

    def _piece(self, stream: Stream, first: bool, last_s: float = 0.0) -> _Segments:
        """The next piece, handed to the scheduler now; `last_s`: audio of the piece before it not
        yet sent (so far ahead of its listener the stream is, as of now, decides its size)."""
        segments = _Segments()
        played = time.monotonic() - stream.playback_start if stream.playback_start is not None else 0.0
        audio_s = stream.audio_s + last_s
        pace = (audio_s - played, audio_s / self._tokens if self._tokens and audio_s else None)
        segments.task = asyncio.ensure_future(self._synthesize(stream, first, pace, segments))
        return segments

    async def _synthesize(self, stream: Stream, first: bool, pace: tuple[float, float | None],
                          out: _Segments) -> None:
        """G2P in the text pool, the model through the scheduler part by part, output processing in
        the codec pool; each part's audio goes to `out` as soon as it is assembled."""
        loop, runtime = asyncio.get_running_loop(), self.runtime
        synthesizer, pacing = runtime.synthesizer, runtime.pacing
        piece = await self._next_piece(first, *pace)
        if first and pacing is not None and pacing.first_window:
            piece = synthesizer.windowed(piece, pacing.rtf, self.request.voice.name)
        elif not first:
            piece = later(piece)
        self._tokens += _tokens_of(piece)
        split = piece.jobs[0].split if piece.jobs else None
        if split is None:
            runs = _one(runtime.scheduler.run(piece.jobs, stream, first))
        else:  # each window as soon as it is decoded; the next one queues at once (scheduler.windows)
            runs = ((([inference], seconds)) async for inference, seconds in
                    runtime.scheduler.windows(piece.jobs[0], stream, first))
        index, submitted = 0, time.perf_counter()
        async for results, model_seconds in runs:
            engine_seconds = model_seconds + (piece.g2p_seconds if index == 0 else 0.0)
            returned = time.perf_counter()
            segment = await loop.run_in_executor(runtime.codec, synthesizer.assemble, piece, results, engine_seconds)
            if index == 0:
                out.phases = _phases(piece, split, returned - submitted, model_seconds, time.perf_counter() - returned)
            out.put(segment, last=split is None or index == len(split.windows) - 1)
            index += 1

    async def _next_piece(self, first: bool, ahead_s: float, per_token_s: float | None) -> Piece:
        """The next sentence through G2P; later ones merged with it while the stream is far enough
        ahead (ahead_s of audio, per_token_s of it per token) for the model to run them together
        before its listener needs them."""
        piece = await self._prepare_next()
        pacing = self.runtime.pacing
        if first or pacing is None:
            return piece
        budget = pacing.piece_tokens(ahead_s, self.runtime.scheduler.active_streams, per_token_s)
        pieces, tokens = [piece], _tokens_of(piece)
        while self._sentences:
            following = await self._prepare_next()
            if tokens + _tokens_of(following) > budget:
                self._prepared = asyncio.get_running_loop().create_future()
                self._prepared.set_result(following)  # it leads the next piece
                break
            pieces.append(following)
            tokens += _tokens_of(following)
        voice = self.request.voice
        return self.runtime.synthesizer.merge(pieces, voice.style, voice.speed) if len(pieces) > 1 else piece

    async def _prepare_next(self) -> Piece:
        if self._prepared is not None:
            prepared, self._prepared = self._prepared, None
            return await prepared
        start, end = self._sentences.popleft()
        loop, request, voice = asyncio.get_running_loop(), self.request, self.request.voice
        return await loop.run_in_executor(self.runtime.text, self.runtime.synthesizer.prepare, request.text, start,
                                          end, voice.style, voice.speed, voice.language)

    async def _send(self, audio: bytes, alignments: list[Alignment], start_ms: int, end_ms: int) -> None:
        if not audio and not alignments:
            return
        chunk = AudioChunk(self.request.response_id, self._sequence, audio,
                           alignments if self.request.with_timestamps else None, start_ms, end_ms)
        self._sequence += 1
        # Shielded: a cancel stops the response, never a frame half-way out of the socket.
        await asyncio.shield(self._emit(chunk))


class _Segments:
    """One piece's audio parts as they are assembled: iterate for them in order, the last one
    flagged; a failure of the piece's task is raised there."""

    def __init__(self):
        self.task: asyncio.Task | None = None
        self.phases: dict[str, float] = {}  # where the first part's time went
        self._queue: asyncio.Queue[tuple[SegmentAudio, bool]] = asyncio.Queue()

    def put(self, segment: SegmentAudio, last: bool) -> None:
        self._queue.put_nowait((segment, last))

    def cancel(self) -> None:
        self.task.cancel()

    async def __aiter__(self):
        while True:
            getter = asyncio.ensure_future(self._queue.get())
            await asyncio.wait([getter, self.task], return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():
                getter.cancel()
                self.task.result()  # raises the piece's failure (or its cancellation)
                raise RuntimeError("a piece ended without its last part")
            segment, last = getter.result()
            yield segment, last
            if last:
                return


async def _one(run):
    yield await run


def _tokens_of(piece: Piece) -> int:
    return sum(len(job.ids) for job in piece.jobs)


def _phases(piece: Piece, split, waited: float, model_seconds: float, assembled: float) -> dict[str, float]:
    """Where a piece's first part's time went (the benchmark's breakdown of first audio): G2P, the
    model's front part and first window (or the whole piece), waiting for the model, output processing."""
    front = split.front_seconds if split is not None else 0.0
    return {"g2p_s": piece.g2p_seconds, "front_s": front, "decode_s": model_seconds - front,
            "queued_s": max(0.0, waited - model_seconds), "output_s": assembled}


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
