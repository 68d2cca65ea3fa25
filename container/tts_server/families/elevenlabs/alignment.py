"""Character times the ElevenLabs way, from the engine's word alignments.

ElevenLabs times every character (spaces and punctuation too): on its sockets per audio message,
relative to that message's audio (`chars`, `charStartTimesMs`, `charDurationsMs`); on its HTTP
with-timestamps paths from the start of the request's audio, in seconds. Clients rebuild words
by splitting the characters at spaces and advance their clock by each message's last character
end (Pipecat), so: every character of the response's text is sent once, in order; a word's
characters share its time evenly; characters between words start where the word before ended;
the last character of a message lasts until its audio ends; and each response's characters end
with a space, so its last word ends there (the next response's text follows on from it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...engine.output import Alignment


@dataclass
class CharTimes:
    """One response's characters, handed out chunk by chunk (`chars`, start ms, duration ms)."""

    text: str
    covered: int = 0  # characters handed out so far

    def chunk(self, records: list[Alignment], start_ms: int, end_ms: int) -> tuple[list[str], list[int], list[int]]:
        """The characters of an audio chunk spanning [start_ms, end_ms) of the response's audio,
        timed in response ms; empty when it carries no word."""
        if not records:
            return [], [], []
        text, begin = self.text, self.covered
        end = records[-1].end_char
        while end < len(text) and not text[end].isalnum():  # the punctuation and spaces after its last word
            end += 1
        self.covered = end
        chars, starts, durations = [], [], []
        words = iter(records)
        word = next(words)
        previous_end = start_ms
        for position in range(begin, end):
            while word is not None and position >= word.end_char:
                previous_end, word = word.end_ms, next(words, None)
            if word is not None and word.start_char <= position:
                share = (word.end_ms - word.start_ms) / (word.end_char - word.start_char)
                starts.append(round(word.start_ms + share * (position - word.start_char)))
                durations.append(round(share))
            else:
                starts.append(previous_end)
                durations.append(0)
            chars.append(" " if text[position].isspace() else text[position])
        if end == len(text) and not text[-1:].isspace():  # its last word ends here, not in the next response
            chars.append(" ")
            starts.append(starts[-1] + durations[-1] if starts else start_ms)
            durations.append(0)
        durations[-1] = max(durations[-1], end_ms - starts[-1])  # the chunk's audio runs to its end
        return chars, starts, durations


def socket_alignment(chars: list[str], starts: list[int], durations: list[int], chunk_start_ms: int) -> dict | None:
    """Its sockets' shape: times relative to the message's own audio."""
    if not chars:
        return None
    return {"chars": chars, "charStartTimesMs": [max(0, s - chunk_start_ms) for s in starts],
            "charDurationsMs": durations}


def http_alignment(chars: list[str], starts: list[int], durations: list[int]) -> dict | None:
    """Its HTTP with-timestamps shape: seconds from the start of the request's audio."""
    if not chars:
        return None
    return {"characters": chars, "character_start_times_seconds": [s / 1000 for s in starts],
            "character_end_times_seconds": [(s + d) / 1000 for s, d in zip(starts, durations, strict=True)]}
