"""Word times the Cartesia way, from the engine's word alignments.

Cartesia sends `{"word_timestamps": {"words", "start", "end"}}`: the transcript's words as written
(split at whitespace, punctuation kept: "there."), in seconds from the start of the context's
audio, so a context's times run on across its transcripts. Clients rely on that: Pipecat sets its
clock at the context's first audio and places each word by its time; LiveKit finds each word in
the text it sent. So every whitespace word of a response is sent once, in order, timed from its
first to its last aligned token, shifted by the context's audio before this response.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...engine.output import Alignment


@dataclass
class WordTimes:
    text: str  # the response's text
    covered: int = 0  # characters of `text` handed out so far
    words: list[str] = field(default_factory=list)  # ... as words, with their times in ms
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    def chunk(self, records: list[Alignment], offset_ms: int) -> dict | None:
        """The `word_timestamps` of an audio chunk's records (None: no new word); `offset_ms`: the
        context's audio before this response."""
        first = len(self.words)
        for record in records:
            begin, end = self._word_around(record)
            if end <= self.covered and self.words:  # another token of the word just sent (or of an earlier one)
                self.ends[-1] = max(self.ends[-1], record.end_ms)
                continue
            begin = max(begin, self.covered)
            self.covered = end
            self.words.append(self.text[begin:end].strip())
            self.starts.append(record.start_ms)
            self.ends.append(max(record.start_ms, record.end_ms))
        if len(self.words) == first:
            return None
        return {"words": self.words[first:], "start": [_seconds(offset_ms + ms) for ms in self.starts[first:]],
                "end": [_seconds(offset_ms + ms) for ms in self.ends[first:]]}

    def _word_around(self, record: Alignment) -> tuple[int, int]:
        """The whitespace-delimited word of `text` holding the record's characters."""
        text = self.text
        begin, end = record.start_char, max(record.end_char, record.start_char + 1)
        while begin > 0 and not text[begin - 1].isspace():
            begin -= 1
        while end < len(text) and not text[end].isspace():
            end += 1
        return begin, end


def _seconds(ms: int) -> float:
    return round(ms / 1000, 3)
