"""The server-wide engine runtime: loads the model off the event loop, owns the worker pools."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .engine.model_dir import ModelDirError
from .engine.synthesizer import Synthesizer

log = logging.getLogger(__name__)
WARMUP_TEXTS = {"ja": "こんにちは、音声合成の準備ができました。", "zh": "你好，语音已经准备好了。", "hi": "नमस्ते, आवाज़ तैयार है।"}
WARMUP_TEXT_LATIN = "Hello, the voice is ready."


class EngineRuntime:
    """Ready once the synthesizer is loaded and warmed up; /ping reports exactly that.

    Inference runs on its own pool (sized to the engine's parallelism) so that codec work
    for one response never waits behind inference for another.
    """

    def __init__(self, load: Callable[[], Synthesizer], inference_workers: int = 1, codec_workers: int = 2,
                 fast_first_fragment: int | None = 10):
        self._load = load
        self.inference = ThreadPoolExecutor(inference_workers, thread_name_prefix="inference")
        self.codec = ThreadPoolExecutor(codec_workers, thread_name_prefix="codec")
        self.fast_first_fragment = fast_first_fragment
        self.synthesizer: Synthesizer | None = None
        self.load_error: str | None = None  # one line: what is wrong (the file, for weights)
        self.inference_workers = inference_workers
        # Engine seconds per second of audio, measured on the warm-up text (worst language);
        # admission control derives its default capacity from it.
        self.realtime_factor: float | None = None
        self._ready = threading.Event()
        # (response_id, engine seconds behind its first audio chunk): lets the benchmark
        # tell the server's own overhead from the engine's time.
        self.first_audio_engine_seconds: deque[tuple[str, float]] = deque(maxlen=1000)

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def describe(self) -> dict:
        """What serves: the engine, its device and languages (/ping, the startup log)."""
        synthesizer = self.synthesizer
        if synthesizer is None:
            return {}
        backend = synthesizer.backend
        return {"engine": backend.name, "device": backend.device, "languages": synthesizer.languages}

    def start(self) -> None:
        threading.Thread(target=self._load_and_warm_up, name="model-loader", daemon=True).start()

    def _load_and_warm_up(self) -> None:
        began = time.perf_counter()
        try:
            synthesizer = self._load()
            factor = self._warm_up(synthesizer)
        except ModelDirError as error:  # broken weights: one line naming the file, /ping stays 503
            self.load_error = str(error)
            log.error("model failed to load: %s", error)
            return
        except BaseException as error:  # reported by /ping staying 503 and in the log
            self.load_error = f"{type(error).__name__}: {error}"
            log.exception("model failed to load")
            return
        self.synthesizer = synthesizer
        self.realtime_factor = factor
        self._ready.set()
        backend = synthesizer.backend
        log.info("model ready in %.1f s: engine %s on %s, languages %s, real-time factor %.2f",
                 time.perf_counter() - began, backend.name, backend.device, ", ".join(synthesizer.languages),
                 self.realtime_factor or 0.0)

    @staticmethod
    def _warm_up(synthesizer: Synthesizer) -> float:
        """Run every language's G2P once (first use loads dictionaries), and measure the engine's
        real-time factor on the default language's text."""
        for language in synthesizer.languages:
            text = WARMUP_TEXTS.get(language.split("-")[0], WARMUP_TEXT_LATIN)
            synthesizer.tokenize(text, 0, len(text), language)
        language = synthesizer.language(None)
        text = WARMUP_TEXTS.get(language, WARMUP_TEXT_LATIN)
        segment = synthesizer.synthesize(text, 0, len(text), synthesizer.voice_book(language).resolve("default"), 1.0,
                                         language)
        return segment.engine_seconds / max(segment.duration_ms / 1000, 0.001)
