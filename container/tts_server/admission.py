"""Admission control: new work is shed at once when the engine could not serve it in time.

Synthesis work is an HTTP request in flight or the active response of a WebSocket session.
An open WebSocket session that is not speaking costs almost nothing: it takes a connection
slot (MAX_SESSIONS, generous) and no synthesis capacity.
- An HTTP request is refused with 503 `service_overloaded` at once when the synthesis slots are
  all taken or the scheduler predicts its first audio later than TARGET_FIRST_AUDIO_MS.
- A new WebSocket session is refused with `service_overloaded` and close code 1013 at once when
  the connection cap is reached or first audio is already predicted late (first pieces queue
  up): a session that only waits is never refused for the work of others.
Nothing ever waits for a slot: a queue would only turn overload into silent latency. A session
already admitted is never refused half-way: its responses take a synthesis slot even above
capacity (so HTTP yields to them), and the scheduler orders its pieces with everyone else's.

Capacity, when MAX_CONCURRENT_SYNTHESES is not set, comes from the warm-up's real-time factors
per batch size (engine seconds per second of audio, `rtf[b]`): the most streams that one model
thread keeps ahead of playback, max over b of floor(1 / rtf[b]).
"""

from __future__ import annotations

import math

from .wire.errors import ErrorCode, ProtocolError
from .runtime import ModelRuntime
from .scheduler import Load
from .settings import Settings

FIRST_PIECE_AUDIO_S = 2.0  # a typical first piece (the fast first fragment), until the warm-up timed one
OVERLOADED_MESSAGE = "server at capacity, retry later"
MODEL_LOADING_RETRY_AFTER_S = 5


class Slot:
    """One unit of admitted work; `release()` gives it back (once, however often it is called)."""

    def __init__(self, gauge: Gauge):
        self._gauge = gauge

    def release(self) -> None:
        if self._gauge is not None:
            self._gauge.in_use -= 1
            self._gauge = None


class Gauge:
    """Slots in use against a limit. Event-loop only, so no lock."""

    def __init__(self, limit, busy=lambda: False):
        self._limit = limit  # a callable: the limit may only be known once the model is warm
        self._busy = busy  # a callable: True refuses new slots whatever the count
        self.in_use = 0

    @property
    def limit(self) -> int:
        return self._limit()

    def try_take(self) -> Slot | None:
        if self.in_use >= self.limit or self._busy():
            return None
        return self.take()

    def take(self) -> Slot:
        """A slot even above the limit (work that was already admitted)."""
        self.in_use += 1
        return Slot(self)


class Admission:
    """Reads its slice of `settings` (the admission group: MAX_CONCURRENT_SYNTHESES, MAX_SESSIONS,
    TARGET_FIRST_AUDIO_MS, OVERLOAD_RETRY_AFTER_S); None: their defaults."""

    def __init__(self, runtime: ModelRuntime, settings: Settings | None = None):
        settings = settings or Settings()
        self._runtime = runtime
        self._max_syntheses = settings.max_concurrent_syntheses
        self._target_first_audio_s = settings.target_first_audio_ms / 1000
        self.retry_after_s = settings.overload_retry_after_s
        self.syntheses = Gauge(self._synthesis_limit, self._late)
        self.sessions = Gauge(lambda: settings.max_sessions, self._late)

    def _synthesis_limit(self) -> int:
        if self._max_syntheses:
            return self._max_syntheses
        profile = self._runtime.profile
        if not profile:
            return 1  # not measured (yet): nothing is admitted before the model is ready anyway
        return max(1, max(math.floor(1 / rtf) for rtf in profile.values()))

    def predicted_first_audio_s(self, load: Load | None = None) -> float:
        """When new work would start speaking: the first pieces queued before it, the run on the
        model now, then its own first piece, each the model time of a first piece's first audio
        (its first window where first pieces run in windows), as the warm-up measured it."""
        load = load or self._runtime.scheduler.load()
        per_piece = self._runtime.first_part_s
        if per_piece is None:
            per_piece = (self._runtime.realtime_factor or 0.0) * FIRST_PIECE_AUDIO_S
        return (load.work_ahead + 1) * per_piece

    def _late(self) -> bool:
        """First pieces already wait in line and new work would start speaking past the target.
        Without such a queue the engine takes work, however slow it is."""
        load = self._runtime.scheduler.load()
        return load.queued_first_pieces > 0 and self.predicted_first_audio_s(load) > self._target_first_audio_s

    def overloaded(self) -> ProtocolError:
        return ProtocolError(ErrorCode.SERVICE_OVERLOADED, OVERLOADED_MESSAGE, retry_after=self.retry_after_s)

    @staticmethod
    def model_loading() -> ProtocolError:
        return ProtocolError(ErrorCode.MODEL_LOADING, "the model is still loading; retry shortly",
                             retry_after=MODEL_LOADING_RETRY_AFTER_S)

    def snapshot(self) -> dict:
        """What /ping reports: work in progress against capacity."""
        load = self._runtime.scheduler.load()
        return {
            "syntheses": self.syntheses.in_use,
            "max_syntheses": self.syntheses.limit,
            "sessions": self.sessions.in_use,
            "max_sessions": self.sessions.limit,
            "streams": load.active_streams,
            "max_batch": load.max_batch,
            "batches": {str(size): count for size, count in load.batch_sizes.items()},
            "interruptions": load.interruptions,
            "predicted_first_audio_ms": round(self.predicted_first_audio_s(load) * 1000),
        }
