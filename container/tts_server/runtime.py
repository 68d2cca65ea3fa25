"""The server-wide engine runtime: loads the model off the event loop, owns the worker pools."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .engine.synthesizer import Synthesizer

log = logging.getLogger(__name__)
WARMUP_TEXT = "こんにちは、音声合成の準備ができました。"


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
        self.load_error: BaseException | None = None
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

    def start(self) -> None:
        threading.Thread(target=self._load_and_warm_up, name="model-loader", daemon=True).start()

    def _load_and_warm_up(self) -> None:
        began = time.perf_counter()
        try:
            synthesizer = self._load()
            factors = []
            for language in synthesizer.languages:
                book = synthesizer.voice_book(language)
                text = WARMUP_TEXT if language == "ja" else "Hello."
                segment = synthesizer.synthesize(text, 0, len(text), book.resolve("default"), 1.0, language)
                factors.append(segment.engine_seconds / max(segment.duration_ms / 1000, 0.001))
        except BaseException as error:  # reported by /ping staying 503 and in the log
            self.load_error = error
            log.exception("model failed to load")
            return
        self.synthesizer = synthesizer
        self.realtime_factor = max(factors, default=None)
        self._ready.set()
        log.info("model ready in %.1f s (%s, real-time factor %.2f)", time.perf_counter() - began,
                 synthesizer.backend.name, self.realtime_factor or 0.0)

    def shutdown(self) -> None:
        self.inference.shutdown(wait=False, cancel_futures=True)
        self.codec.shutdown(wait=False, cancel_futures=True)
