"""The server-wide model runtime: loads the model off the event loop, owns the scheduler and the
thread pools for text (G2P) and codecs."""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .engine.factory import timed
from .engine.model_dir import ModelDirError
from .engine.pacing import Pacing
from .engine.synthesizer import Synthesizer
from .engine.voice_policy import VoicePolicy
from .scheduler import Scheduler, batch_pays
from .settings import Settings

log = logging.getLogger(__name__)
# Also each voice's reference for its statistics (learn_norms): the Japanese one is the sentence
# those were measured with (docs/performance.md, "What the windows cost the listener, found").
WARMUP_TEXTS = {"ja": "お問い合わせいただき、誠にありがとうございます。", "zh": "你好，语音已经准备好了。", "hi": "नमस्ते, आवाज़ तैयार है।"}
WARMUP_TEXT_LATIN = "Hello, the voice is ready."


class ModelRuntime:
    """Ready once the synthesizer is loaded and warmed up; /ping reports exactly that.

    Model runs belong to the scheduler (its own thread); G2P and codecs have their own pools so
    that text and encoding work for one response never waits behind the model for another.
    Reads its slice of `settings` (PREEMPTION, FIRST_WINDOW, PIECE_GROWTH, FAST_FIRST_FRAGMENT_CHARS,
    VOICE_FALLBACK, VOICE_ALIASES, TTS_LOAD_GATE); None: their defaults. `load` builds the engine.
    """

    def __init__(self, load: Callable[[], Synthesizer], settings: Settings | None = None, codec_workers: int = 2,
                 text_workers: int = 2):
        settings = settings or Settings()
        self._load = load
        self._load_gate = settings.tts_load_gate  # tests only: loading waits until this file exists
        self.scheduler = Scheduler(settings.preemption == "on")
        self.text = ThreadPoolExecutor(text_workers, thread_name_prefix="text")
        self.codec = ThreadPoolExecutor(codec_workers, thread_name_prefix="codec")
        self.fast_first_fragment = settings.fast_first_fragment
        self._pacing_options = {"first_window": settings.first_window == "on", "growth": settings.piece_growth == "on"}
        # Whose reference statistics a first piece's windows get (engine/span_norm.py): none without windows.
        self._voice_statistics = settings.voice_statistics if settings.first_window == "on" else "none"
        # Sizes of first windows and later pieces, from the warm-up's speed (None until measured).
        self.pacing: Pacing | None = None
        self.first_part_s: float | None = None  # model seconds to a first piece's first audio, measured
        # A voice the engine lacks: engine/voice_policy.py. The operator's aliases stand over every
        # family; each family's own are scoped to it (Family.voices).
        self.voice_policy = VoicePolicy(settings.voice_aliases, strict=settings.voice_fallback == "strict")
        self.synthesizer: Synthesizer | None = None
        self.load_error: str | None = None  # one line: what is wrong (the file, for weights)
        # Engine seconds per second of audio at each batch size, measured at warm-up;
        # admission control predicts capacity and first-audio delay from it.
        self.profile: dict[int, float] = {}
        # Start-up phase -> seconds, in order, from the process's start to ready (/ping, the log).
        self.startup: dict[str, float] = {}
        self._ready = threading.Event()
        # (response_id, engine seconds behind its first audio chunk): lets the benchmark
        # tell the server's own overhead from the engine's time.
        self.first_audio_engine_seconds: deque[tuple[str, float]] = deque(maxlen=1000)
        # (response_id, where its first audio's time went: G2P, front part, first window, ...).
        self.first_audio_phases: deque[tuple[str, dict[str, float]]] = deque(maxlen=1000)

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def runs_on(self) -> dict:
        """What serves, for a client to check against what the deploy asked for (the canonical
        `session.created` carries it as `server`): the engine, its device and precision, the
        batch limits (`max_batch`: pieces per model run allowed, MAX_BATCH or the engine's
        default; `batch_limit`: the largest the warm-up showed pays) and the uid it runs as."""
        synthesizer = self.synthesizer
        if synthesizer is None:
            return {}
        backend = synthesizer.backend
        return {"engine": backend.name, "device": backend.device, "precision": backend.precision,
                "max_batch": synthesizer.runner.max_batch, "batch_limit": self.scheduler.max_batch,
                "uid": os.getuid()}

    def describe(self) -> dict:
        """/ping's account of what serves: `runs_on()`, the languages and the start-up phases."""
        if self.synthesizer is None:
            return {}
        return {**self.runs_on(), "languages": self.synthesizer.languages,
                "startup_s": {phase: round(seconds, 3) for phase, seconds in self.startup.items()}}

    @property
    def realtime_factor(self) -> float | None:
        """Engine seconds per second of audio for one piece alone."""
        return self.profile.get(1)

    def start(self) -> None:
        """Call from the event loop: the scheduler's loop starts now, the model loads in a thread."""
        self.scheduler.start()
        threading.Thread(target=self._load_and_warm_up, name="model-loader", daemon=True).start()

    def _load_and_warm_up(self) -> None:
        phases = self.startup
        if (since_start := seconds_since_process_start()) is not None:
            phases["interpreter and server imports"] = since_start
        # "Still loading" is then a state a test controls instead of a race it hopes to win.
        while self._load_gate and not os.path.exists(self._load_gate):
            time.sleep(0.05)
        began = time.perf_counter()
        try:
            with timed(phases, "engine"):
                synthesizer = self._load()
            backend_phases = getattr(synthesizer.backend, "load_phases", {})  # engine imports, weights
            rest = phases.pop("engine") - sum(backend_phases.values())
            phases |= backend_phases | {"voice books": rest}
            profile = self._warm_up(synthesizer, phases, self._voice_statistics != "none")
        except ModelDirError as error:  # broken weights: one line naming the file, /ping stays 503
            log.error("model failed to load: %s", error)  # logged before /ping can report it
            self.load_error = str(error)
            return
        except BaseException as error:  # reported by /ping staying 503 and in the log
            log.exception("model failed to load")
            self.load_error = f"{type(error).__name__}: {error}"
            return
        self.synthesizer = synthesizer
        self.profile = profile
        self.pacing = Pacing(profile[1], synthesizer.backend.max_tokens, **self._pacing_options)
        if learns_every_voice(self._voice_statistics, synthesizer.backend.device):
            with timed(phases, "voice statistics"):
                learn_norms(synthesizer)
        self.first_part_s = self._warm_up_first_pieces(synthesizer, phases)
        self.scheduler.runner = synthesizer.runner
        self.scheduler.measured(profile)
        self._ready.set()
        backend = synthesizer.backend
        speeds = ", ".join(f"batch {size}: {factor:.2f}" for size, factor in profile.items())
        log.info("start-up phases (s): %s", ", ".join(f"{name} {seconds:.2f}" for name, seconds in phases.items()))
        log.info("model ready in %.1f s: engine %s on %s, languages %s; real-time factor %s; batches of up to %d "
                 "(%d with a first piece)", time.perf_counter() - began, backend.name, backend.device,
                 ", ".join(synthesizer.languages), speeds, self.scheduler.max_batch,
                 self.scheduler.first_piece_batch or 1)

    @staticmethod
    def _warm_up(synthesizer: Synthesizer, phases: dict[str, float], record: bool = False) -> dict[int, float]:
        """Synthesize once in the default language (the model works), run every language's G2P
        once (first use loads dictionaries: all are loaded before /ping 200, so that no first
        request pays seconds for its language), then time the model at each batch size up to
        the runner's: batch size -> engine seconds per second of audio. The first synthesis is
        also the profile's first run at batch 1 and, with `record`, the default voice's reference
        statistics (synthesizer.learn_norms: the same decode). Each step's seconds go to `phases`."""
        language = synthesizer.language(None)
        text = WARMUP_TEXTS.get(language, WARMUP_TEXT_LATIN)
        with timed(phases, f"G2P {language}"):
            synthesizer.tokenize(text, 0, len(text), language)
        style = synthesizer.voice_book(language).resolve("default")
        piece = synthesizer.prepare(text, 0, len(text), style, 1.0, language)
        with timed(phases, "first synthesis"):  # lazy initialisation inside the runtimes, if any
            if record:
                voice = synthesizer.voice_book(language).voice_of("default")
                first_run, results = _timed(synthesizer.learn_norms, voice, piece)
            else:
                first_run, results = _timed(synthesizer.runner.run, piece.jobs)
            audio_s = max(synthesizer.assemble(piece, results, 0.0).duration_ms / 1000, 0.001)
        for other in (code for code in synthesizer.languages if code != language):
            sample = WARMUP_TEXTS.get(other.split("-")[0], WARMUP_TEXT_LATIN)
            with timed(phases, f"G2P {other}"):
                synthesizer.tokenize(sample, 0, len(sample), other)
        return ModelRuntime._profile(synthesizer, piece.jobs[0], audio_s, phases, first_run)

    def _warm_up_first_pieces(self, synthesizer: Synthesizer, phases: dict[str, float]) -> float:
        """The warm-up sentence once more, as a response's first piece runs, up to its first join
        (in windows: their own first-run set-up, and the first join teaches the first window's
        make-up gain, for voices without reference statistics: no voice's are given here; later
        windows would teach nothing): the model seconds of its first part, admission's unit of
        first-audio work."""
        language = synthesizer.language(None)
        text = WARMUP_TEXTS.get(language, WARMUP_TEXT_LATIN)
        style = synthesizer.voice_book(language).resolve("default")
        piece = synthesizer.prepare(text, 0, len(text), style, 1.0, language)
        if self.pacing.first_window:
            piece = synthesizer.windowed(piece, self.pacing.rtf)
        first_part_s = None
        with timed(phases, "first piece in windows"):
            for jobs in itertools.islice(piece.parts(), 2):  # an unfinished piece's state is weakly held
                began = time.perf_counter()
                results = synthesizer.runner.run(jobs)
                first_part_s = first_part_s or time.perf_counter() - began
                synthesizer.assemble(piece, results, 0.0)
        return first_part_s

    @staticmethod
    def _profile(synthesizer: Synthesizer, job, audio_s: float, phases: dict[str, float],
                 first_run: float) -> dict[int, float]:
        """Engine seconds per second of audio at batch sizes 1, 2, 4, ... of `job` (audio_s long),
        batch 1's first run being `first_run` seconds (the first synthesis).

        Where batches are possible the scheduler chooses sizes from these figures: best of two
        runs each (a size's first run on a GPU also picks its kernels, and the model's first run
        pays its lazy initialisation). Sizes double until one does not pay (a CPU: batch 2
        already costs each piece as much as running alone); a second run, which can only lower
        the figure, is skipped where the first one shows no gain at all. A runner of one piece
        a run (the CPU engines) is timed by the first synthesis alone: on a CPU the model's first
        run takes what its second does (docs/benchmarks.md, "Image and cold start"), and a
        second would cost every cold start as much again.
        """
        if synthesizer.runner.max_batch == 1:
            return {1: first_run / audio_s}
        profile, size, alone = {}, 1, None
        while size <= synthesizer.runner.max_batch:
            with timed(phases, f"speed profile, batch {size}"):
                runs = [first_run] if size == 1 else [_timed(synthesizer.runner.run, [job] * size)[0]]
                if alone is None or runs[0] / size < alone:
                    runs.append(_timed(synthesizer.runner.run, [job] * size)[0])
            alone = alone or min(runs)  # seconds of one piece alone
            profile[size] = min(runs) / (size * audio_s)
            if size > 1 and not batch_pays(profile[size], profile[1]):
                break
            size *= 2
        return profile

    async def shutdown(self) -> None:
        await self.scheduler.stop()
        self.text.shutdown(wait=False, cancel_futures=True)
        self.codec.shutdown(wait=False, cancel_futures=True)


def learns_every_voice(voice_statistics: str, device: str) -> bool:
    """Whether the warm-up records every voice's reference statistics (VOICE_STATISTICS): `auto`
    does where a whole decode a voice is cheap (CUDA); on a CPU it costs about the first
    synthesis's time a voice (docs/benchmarks.md, "Cold start")."""
    return voice_statistics == "all" or (voice_statistics == "auto" and device == "cuda")


def learn_norms(synthesizer: Synthesizer) -> None:
    """The reference statistics of each language's own voices not recorded yet, from its warm-up
    sentence: a first piece's windows are given their voice's (synthesizer.learn_norms). One whole
    decode a voice."""
    for language in synthesizer.languages:
        text = WARMUP_TEXTS.get(language.split("-")[0], WARMUP_TEXT_LATIN)
        book = synthesizer.voice_book(language)
        for voice in book.own_voices:
            if voice not in synthesizer.references:
                synthesizer.learn_norms(voice, synthesizer.prepare(text, 0, len(text), book.resolve(voice), 1.0,
                                                                   language))


def seconds_since_process_start() -> float | None:
    """Wall seconds since this process was created (Linux /proc), None where that is unknown."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            started_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
            return float(uptime.read().split()[0]) - started_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _timed(function, *args):
    """(seconds, result) of one call."""
    began = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - began, result
