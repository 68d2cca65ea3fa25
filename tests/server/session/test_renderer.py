"""Later pieces grow (engine/pacing.py), on a synthesizer double behind the real scheduler: once
the stream is ahead of its listener the next sentences go to the model together, as many as the
engine's speed allows, and never so many that the listener would wait for them."""

from __future__ import annotations

import numpy as np
import pytest

from server.session.test_session_engine import make_engine, request
from tts_server.engine.output import Alignment, SegmentAudio
from tts_server.engine.pacing import Pacing
from tts_server.engine.tokens import Job, Piece
from tts_server.session.events import AudioChunk, ResponseDone

TEXT = "一。二。三。四。五。六。"  # six sentences of two tokens each; 100 ms of audio a token


class MergingSynthesizer:
    """Each character one token and 100 ms of tone; merged pieces are one model call."""

    max_batch = 1

    def __init__(self):
        self.runs = []  # the text of each model call
        self.runner = self

    def prepare(self, text, start, end, style, speed, language):
        return Piece(text, start, end, [], [], [Job(tuple(range(end - start)), style, speed)], 0.0)

    def merge(self, pieces, style, speed):
        tokens = sum(len(p.jobs[0].ids) for p in pieces)
        first, last = pieces[0], pieces[-1]
        breaks = tuple(p.end for p in pieces[:-1])
        return Piece(first.text, first.start, last.end, [], [], [Job(tuple(range(tokens)), style, speed)], 0.0, breaks)

    def run(self, jobs, control=None):
        return [len(job.ids) for job in jobs]

    def assemble(self, piece, results, engine_seconds):
        text = piece.text[piece.start : piece.end]
        self.runs.append(text)
        alignments = [Alignment(text, piece.start, piece.end, 0, 100 * len(text))]
        return SegmentAudio(np.full(2400 * results[0], 0.1, np.float32), alignments, engine_seconds)


def render(rtf: float, growth: bool = True):
    engine, _, events = make_engine()
    synthesizer = MergingSynthesizer()
    runtime = engine.runtime
    runtime.synthesizer = runtime.scheduler.runner = synthesizer
    runtime.pacing = Pacing(rtf, max_tokens=510, first_window=False, growth=growth)
    return engine, synthesizer, events


@pytest.mark.parametrize("rtf, growth, runs", [
    (0.05, True, ["一。", "二。三。四。五。六。"]),  # fast: the rest fits in the time the first piece plays
    (0.3, True, ["一。", "二。三。", "四。五。六。"]),  # growing as the stream gets further ahead
    (2.0, True, ["一。", "二。", "三。", "四。", "五。", "六。"]),  # slower than real time: never bigger
    (0.05, False, ["一。", "二。", "三。", "四。", "五。", "六。"]),  # PIECE_GROWTH=off
])
async def test_later_pieces_merge_as_many_sentences_as_the_stream_is_ahead(rtf, growth, runs):
    engine, synthesizer, events = render(rtf, growth)
    await engine.submit(request(TEXT, rid="r", with_timestamps=True))
    await engine.drain()
    assert synthesizer.runs == runs
    done = next(e for e in events if isinstance(e, ResponseDone))
    assert done.status == "completed" and done.audio_ms == 100 * len(TEXT)
    chunks = [e for e in events if isinstance(e, AudioChunk)]
    starts = [a.start_ms for chunk in chunks for a in chunk.alignments]
    assert starts == [100 * TEXT.index(run) for run in runs], "each piece's timestamps follow the audio before it"
