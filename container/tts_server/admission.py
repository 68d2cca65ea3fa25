"""Admission control: a fixed capacity of synthesis work and of open sessions, shed at once.

Synthesis work is an HTTP request in flight or the active response of a WebSocket session.
- An HTTP request that finds all synthesis slots taken gets 503 `service_overloaded` at once.
- A new WebSocket session that finds all session slots taken gets `service_overloaded` and
  close code 1013 at once.
Nothing ever waits for a slot: a queue would only turn overload into silent latency.
A session already admitted is never refused half-way: its active response takes a synthesis
slot even above capacity (so HTTP yields to it), but is not limited by it.

Default capacity, from the real-time factor the runtime measured at warm-up (engine seconds
per second of audio, `rtf`), when MAX_CONCURRENT_SYNTHESES / MAX_SESSIONS are not set:
    syntheses = max(1, floor(inference_workers / rtf))  # responses that all still stream in real time
    sessions  = SESSIONS_PER_SYNTHESIS * syntheses      # a voice-agent session speaks ~1/4 of the time
"""

from __future__ import annotations

import math

from .protocol.errors import ErrorCode, ProtocolError
from .runtime import EngineRuntime

SESSIONS_PER_SYNTHESIS = 4
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

    def __init__(self, limit):
        self._limit = limit  # a callable: the limit may only be known once the model is warm
        self.in_use = 0

    @property
    def limit(self) -> int:
        return self._limit()

    def try_take(self) -> Slot | None:
        if self.in_use >= self.limit:
            return None
        return self.take()

    def take(self) -> Slot:
        """A slot even above the limit (work that was already admitted)."""
        self.in_use += 1
        return Slot(self)


class Admission:
    def __init__(self, runtime: EngineRuntime, max_syntheses: int | None = None, max_sessions: int | None = None,
                 retry_after_s: int = 1):
        self._runtime = runtime
        self._max_syntheses = max_syntheses
        self._max_sessions = max_sessions
        self.retry_after_s = retry_after_s
        self.syntheses = Gauge(self._synthesis_limit)
        self.sessions = Gauge(self._session_limit)

    def _synthesis_limit(self) -> int:
        if self._max_syntheses:
            return self._max_syntheses
        rtf = self._runtime.realtime_factor
        if not rtf:
            return 1  # not measured (yet): nothing is admitted before the model is ready anyway
        return max(1, math.floor(self._runtime.inference_workers / rtf))

    def _session_limit(self) -> int:
        return self._max_sessions or SESSIONS_PER_SYNTHESIS * self._synthesis_limit()

    def overloaded(self) -> ProtocolError:
        return ProtocolError(ErrorCode.SERVICE_OVERLOADED, OVERLOADED_MESSAGE, retry_after=self.retry_after_s)

    @staticmethod
    def model_loading() -> ProtocolError:
        return ProtocolError(ErrorCode.MODEL_LOADING, "the model is still loading; retry shortly",
                             retry_after=MODEL_LOADING_RETRY_AFTER_S)

    def snapshot(self) -> dict:
        """What /ping reports: work in progress against capacity."""
        return {
            "syntheses": self.syntheses.in_use,
            "max_syntheses": self.syntheses.limit,
            "sessions": self.sessions.in_use,
            "max_sessions": self.sessions.limit,
        }
