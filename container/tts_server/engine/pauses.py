"""No dead air (SPEC §6): cut the model's own silence around each piece, put back pauses by punctuation.

Kokoro pads every inference with silence (~290 ms before, ~770 ms after), so sentences
synthesized one by one would be a second apart and the first sound would come ~0.3 s after
the first byte. Each inference's audio is cut to `lead_ms` (+ up to one 25 ms frame) before
its first audible sample (`onset_ms` before its first heard one at most) and `trail_ms` (+ up
to a frame) after its last, and the gap after a piece is chosen by how its text ends: a clause
mark, a sentence end, or a paragraph break (a newline follows). Gaps are measured between
audible samples, so a gap of 300 ms appends 300 - lead - trail ms of zeros.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tts_text.punctuation import CLAUSE_MARKS, CLOSERS

from .backend import MS_PER_DURATION_UNIT, SAMPLES_PER_DURATION_UNIT, SAMPLES_PER_MS

# Cuts and pauses fall on the model's 25 ms duration frames, so timestamps stay on its grid.


@dataclass(frozen=True)
class Pauses:
    # The defaults of PAUSE_CLAUSE_MS, PAUSE_SENTENCE_MS and PAUSE_PARAGRAPH_MS (settings.py reads them here).
    clause_ms: int = 200
    sentence_ms: int = 300
    paragraph_ms: int = 450
    lead_ms: int = 10  # kept before the first audible sample (soft onsets)
    trail_ms: int = 40  # kept after the last one (decays)
    audible_db: float = -42.0  # dBFS: what counts as sound when trimming
    # SPEC §6: a response's first sample above -40 dBFS lies within 50 ms of its first byte.
    # A soft onset can stay between audible_db and that for longer (measured: 50.4 ms after the
    # cut), so the cut also comes no earlier than onset_ms before the first sample above heard_db.
    heard_db: float = -40.0
    onset_ms: int = 35  # 15 ms left for a codec: Ogg/Opus measured its onset up to 9 ms later

    def gap_after(self, text: str, end: int) -> int:
        """The silence that follows text[:end] when it is spoken, in ms (audible to audible)."""
        rest = text[end:]
        if "\n" in rest[: len(rest) - len(rest.lstrip())]:
            return self.paragraph_ms
        i = end
        while i > 0 and (text[i - 1] in CLOSERS or text[i - 1] in " \t"):
            i -= 1
        last = text[i - 1] if i > 0 else ""
        if last and last in CLAUSE_MARKS:
            return self.clause_ms
        return self.sentence_ms  # a sentence end, or text that simply stops

    def padding(self, gap_ms: int) -> np.ndarray:
        """Zeros that make `gap_ms` between two trimmed pieces."""
        units = max(0, round((gap_ms - self.lead_ms - self.trail_ms) / MS_PER_DURATION_UNIT))
        return np.zeros(units * SAMPLES_PER_DURATION_UNIT, np.float32)

    def trim(self, audio: np.ndarray) -> tuple[int, int]:
        """The [start, end) sample range of `audio` to keep; (0, 0) for silence only."""
        audible = np.flatnonzero(np.abs(audio) >= 10 ** (self.audible_db / 20))
        if audible.size == 0:
            return 0, 0
        unit, ms = SAMPLES_PER_DURATION_UNIT, SAMPLES_PER_MS
        start = self.cut(audio, int(audible[0]))
        end = min(len(audio), -(-(int(audible[-1]) + 1 + self.trail_ms * ms) // unit) * unit)
        return start, end

    def cut(self, audio: np.ndarray, first_audible: int) -> int:
        """Where the kept audio starts (on the frame grid): lead_ms before the first audible sample,
        and no earlier than onset_ms before the first heard one (both in `audio`, which holds it)."""
        unit, ms = SAMPLES_PER_DURATION_UNIT, SAMPLES_PER_MS
        cut = max(0, (first_audible - self.lead_ms * ms) // unit) * unit
        heard = self.first_heard(audio[first_audible:])
        if heard is not None:
            cut = max(cut, -(-(first_audible + heard - self.onset_ms * ms) // unit) * unit)
        return cut

    def first_heard(self, audio: np.ndarray) -> int | None:
        """The first sample of `audio` above heard_db; None when there is none."""
        heard = np.flatnonzero(np.abs(audio) >= 10 ** (self.heard_db / 20))
        return int(heard[0]) if heard.size else None
