"""How a WebSocket session ends: one named state with explicit transitions (SessionLoop drives it).

    OPEN ──client `close`──> CLIENT_CLOSING ──(all done)──> the dialect's goodbye, 1000
      │                          │ SIGTERM
      ├─ idle / SIGTERM ──> ENDING ──deadline──> CUTTING ──(all done)──> error event, its close code
      └─ lifetime ─────────────────────────────> CUTTING

CLIENT_CLOSING: what is accepted finishes, nothing new is. ENDING: the server ends the session
(idle, SIGTERM): the active response may finish (until the shutdown deadline for SIGTERM).
CUTTING: everything still running is cancelled; the session waits only for the dones.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..wire.errors import ProtocolError


class Phase(StrEnum):
    OPEN = "open"
    CLIENT_CLOSING = "client_closing"
    ENDING = "ending"
    CUTTING = "cutting"


TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.OPEN: frozenset({Phase.CLIENT_CLOSING, Phase.ENDING, Phase.CUTTING}),
    Phase.CLIENT_CLOSING: frozenset({Phase.ENDING}),
    Phase.ENDING: frozenset({Phase.CUTTING}),
    Phase.CUTTING: frozenset(),
}


@dataclass
class Closing:
    phase: Phase = Phase.OPEN
    error: ProtocolError | None = None  # what the server says as it ends the session (None: the client closed)
    close_code: int | None = None
    deadline: float | None = None  # time.monotonic() when ENDING turns into CUTTING (SIGTERM only)

    def to(self, phase: Phase, error: ProtocolError | None = None, close_code: int | None = None,
           deadline: float | None = None) -> None:
        if not self.can(phase):
            raise RuntimeError(f"session closing: {self.phase} -> {phase} is not a transition")
        self.phase = phase
        if error is not None:
            self.error, self.close_code, self.deadline = error, close_code, deadline

    def can(self, phase: Phase) -> bool:
        return phase in TRANSITIONS[self.phase]

    @property
    def is_open(self) -> bool:
        return self.phase is Phase.OPEN
