"""The renderer on synthesizer doubles behind the real scheduler. Later pieces grow
(engine/pacing.py): once the stream is ahead of its listener the next sentences go to the model
together, as many as the engine's speed allows, and never so many that the listener would wait
for them. A first piece in windows speaks each as it comes, and a cancel stops it between them,
frees the scheduler's state and ends the response once."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from server.session.test_session_engine import make_engine, request
from tts_server.engine.output import Alignment, SegmentAudio
from tts_server.engine.pacing import Pacing
from tts_server.engine.tokens import Job, Piece, windowed
from tts_server.engine.windows import Window
from tts_server.session.events import AudioChunk, ResponseDone
from waiting import GENEROUS_S, until

TEXT = "一。二。三。四。五。六。"  # six sentences of two tokens each; 100 ms of audio a token


class MergingSynthesizer:
    """Each character one token and 100 ms of tone; merged pieces are one model call."""

    max_batch = 1

    def __init__(self):
        self.runs = []  # the text of each model call
        self.later = []  # whether each call's job was marked a later piece (decoded over its speech only)
        self.runner = self

    def prepare(self, text, start, end, style, speed, language):
        return Piece(text, start, end, [], [], [Job(tuple(range(end - start)), style, speed)], 0.0)

    def merge(self, pieces, style, speed):
        tokens = sum(len(p.jobs[0].ids) for p in pieces)
        first, last = pieces[0], pieces[-1]
        breaks = tuple(p.end for p in pieces[:-1])
        return Piece(first.text, first.start, last.end, [], [], [Job(tuple(range(tokens)), style, speed)], 0.0, breaks)

    def run(self, jobs, control=None):
        self.later += [job.later for job in jobs]
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
    assert synthesizer.later == [False] + [True] * (len(runs) - 1), "the first piece decoded whole, the later ones not"
    done = next(e for e in events if isinstance(e, ResponseDone))
    assert done.status == "completed" and done.audio_ms == 100 * len(TEXT)
    chunks = [e for e in events if isinstance(e, AudioChunk)]
    starts = [a.start_ms for chunk in chunks for a in chunk.alignments]
    assert starts == [100 * TEXT.index(run) for run in runs], "each piece's timestamps follow the audio before it"


# --- a first piece in windows: a cancel stops it between them -----------------------------------

class WindowedSynthesizer:
    """A first piece decoded in three windows of 100 ms each (the runner plans them on its first
    run, as the real one does); every model run waits for a permit, G2P for `g2p`."""

    max_batch = 1

    def __init__(self):
        self.runner = self
        self.permits = threading.Semaphore(0)
        self.g2p = threading.Event()
        self.g2p.set()
        self.in_g2p = self.g2p_done = False
        self.waiting = 0  # runs held for a permit now
        self.ran = []  # per model run: the window it decoded (None: a piece decoded whole)

    def prepare(self, text, start, end, style, speed, language):
        self.in_g2p = True
        self.g2p.wait(GENEROUS_S)
        self.g2p_done = True
        return Piece(text, start, end, [], [], [Job(tuple(range(end - start)), style, speed)], 0.0)

    @staticmethod
    def windowed(piece, rtf, voice=None):
        return windowed(piece, rtf)

    def run(self, jobs, control=None):
        self.waiting += 1
        self.permits.acquire(timeout=GENEROUS_S)
        self.waiting -= 1
        for job in jobs:
            if job.split is not None and job.split.windows is None:
                job.split.windows = [Window(0, 12, 0), Window(4, 24, 12), Window(16, 36, 28)]
            self.ran.append(job.window if job.split is not None else None)
        return [job.window for job in jobs]

    def assemble(self, piece, results, engine_seconds):
        return SegmentAudio(np.full(2400, 0.1, np.float32), [], engine_seconds)


def windowed_engine():
    engine, _, events = make_engine()
    synthesizer = WindowedSynthesizer()
    runtime = engine.runtime
    runtime.synthesizer = runtime.scheduler.runner = synthesizer
    runtime.pacing = Pacing(0.3, max_tokens=510, first_window=True, growth=False)
    return engine, synthesizer, events


def outcome(events, rid="r"):
    dones = [(e.response_id, e.status) for e in events if isinstance(e, ResponseDone)]
    chunks = [e for e in events if isinstance(e, AudioChunk) and e.response_id == rid and e.audio]
    return dones, len(chunks)


async def test_a_first_piece_in_windows_speaks_each_window_as_it_comes():
    engine, synthesizer, events = windowed_engine()
    await engine.submit(request("一二三四五。", rid="r"))
    for _ in range(3):
        synthesizer.permits.release()
    await engine.drain()
    assert synthesizer.ran == [0, 1, 2]
    assert outcome(events) == ([("r", "completed")], 3)


async def test_a_cancel_between_windows_runs_no_more_of_them_and_ends_the_response_once():
    engine, synthesizer, events = windowed_engine()
    scheduler = engine.runtime.scheduler
    await engine.submit(request("一二三四五。", rid="r"))
    await until(lambda: synthesizer.waiting, "the first window on the model")
    other = scheduler.open_stream("other")
    blocker = asyncio.ensure_future(scheduler.run([Job((1, 2), np.zeros(256, np.float32), 1.0)], other, first=True))
    await until(lambda: scheduler.queued_first_pieces == 1, "another response's first piece in line")
    synthesizer.permits.release()  # the first window is done: the second queues behind that first piece
    await until(lambda: outcome(events)[1] == 1, "the first window's audio")
    await until(lambda: synthesizer.waiting, "the other first piece on the model")
    await engine.cancel("r")  # between windows: the second is in line, not running
    await until(lambda: outcome(events)[0], "the cancelled response.done")
    assert [w for w in scheduler._pending if w.stream.name == "r"] == [], "its next window left the queue"
    synthesizer.permits.release()
    await blocker
    scheduler.finish_stream(other)
    await engine.drain()
    await asyncio.sleep(0.05)  # time for a wrongly kept window to reach the model
    assert synthesizer.ran == [0, None], "no window of the cancelled piece ran after the cancel"
    assert outcome(events) == ([("r", "cancelled")], 1), "exactly one terminal event, no audio after it"
    assert scheduler.active_streams == 0 and not scheduler._pending


async def test_a_cancel_while_the_first_piece_is_in_g2p_never_reaches_the_model():
    engine, synthesizer, events = windowed_engine()
    scheduler = engine.runtime.scheduler
    synthesizer.g2p.clear()
    await engine.submit(request("一二三四五。", rid="r"))
    await until(lambda: synthesizer.in_g2p, "the first piece in G2P")
    await engine.cancel("r")
    await until(lambda: outcome(events)[0], "the cancelled response.done")
    synthesizer.g2p.set()
    await until(lambda: synthesizer.g2p_done, "G2P to return")
    await asyncio.sleep(0.05)  # time for a wrongly kept piece to reach the scheduler
    assert not scheduler._pending and synthesizer.waiting == 0 and synthesizer.ran == []
    assert scheduler.active_streams == 0
    assert outcome(events) == ([("r", "cancelled")], 0)
