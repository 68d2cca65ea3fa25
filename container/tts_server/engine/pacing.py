"""How big a stream's model runs are, from the engine speed the warm-up measured (SPEC §7).

- A response's first piece stays small (the fast first fragment) and is decoded in windows
  (windows.py), so its first audio leaves after a fraction of it.
- Later pieces grow: once a stream is far enough ahead of its listener, the next sentences go
  to the model together, as many as the model can run before the audio already ahead of the
  listener plays out (shared with the other streams speaking), up to the model's context.
  Long text then costs fewer, fuller model calls (on a GPU: fewer, fuller batches), and the
  stream does not run dry waiting for a piece it made too big.
"""

from __future__ import annotations

from dataclasses import dataclass

AHEAD_SHARE = 0.6  # a piece's predicted model time may use this share of the audio ahead of the listener
AUDIO_PER_TOKEN_S = 0.08  # audio a token becomes, about, until the stream has measured its own


@dataclass(frozen=True)
class Pacing:
    rtf: float  # engine seconds per second of audio, one piece alone (the warm-up's profile[1])
    max_tokens: int  # the model's context, pads excluded
    first_window: bool = True  # first pieces decoded in windows
    growth: bool = True  # later pieces merge sentences

    def piece_tokens(self, ahead_s: float, streams: int, audio_per_token_s: float | None = None) -> int:
        """Tokens the next piece may hold when `ahead_s` of audio is ahead of the listener and
        `streams` streams share the engine; 0: one sentence, whatever its length."""
        if not self.growth or ahead_s <= 0:
            return 0
        model_s = AHEAD_SHARE * ahead_s / max(1, streams)
        return min(self.max_tokens, int(model_s / (self.rtf * (audio_per_token_s or AUDIO_PER_TOKEN_S))))
