"""Text that arrives in pieces (an LLM's tokens, a vendor protocol's text messages), cut into what
can be spoken now: every family whose clients stream text feeds it here.

The shared SentenceChunker (tts_text) finds the sentences a piece completes; they leave at once,
as one response's text (a newline between them, so the renderer cuts them the same way), so
first audio comes while the LLM still writes. A piece ending in a sentence end (the chunker's
own set, Hindi's danda included) ends its sentence there: the chunker alone would wait for the
next piece to rule out a closing quote, and the next piece may be an LLM's next sentence away.
`flush` gives the rest, whatever it is.
"""

from __future__ import annotations

from tts_text.chunker import CLOSERS, SENTENCE_ENDS, SentenceChunker

from ..wire.errors import ProtocolError
from ..wire.fields import MAX_TEXT_CHARS


class IncrementalText:
    def __init__(self, fast_first_fragment: int | None, field: str = "text", flush_hint: str = "flush"):
        """`field` and `flush_hint` name, in the family's words, the text field and how to flush."""
        self._chunker = SentenceChunker(fast_first_fragment=fast_first_fragment)
        self._field, self._flush_hint = field, flush_hint
        self._fed = 0  # characters fed so far
        self._taken = 0  # ... of which spoken text has taken this many

    def feed(self, text: str) -> str | None:
        """The text to speak now (None: no sentence is complete yet)."""
        if self._fed - self._taken + len(text) > MAX_TEXT_CHARS:
            raise ProtocolError.invalid(f"{self._field}: at most {MAX_TEXT_CHARS} characters may wait for the end "
                                        f"of a sentence; {self._flush_hint}")
        self._fed += len(text)
        sentences = self._chunker.feed_spans(text)
        last = text.rstrip().rstrip(CLOSERS)[-1:]
        if last and last in SENTENCE_ENDS:
            sentences += self._chunker.flush_spans()
        if not sentences:
            return None
        self._taken = sentences[-1][0][1]
        return "\n".join(sentence for _, sentence in sentences)

    def flush(self) -> str | None:
        """Everything not yet spoken (None: nothing but whitespace)."""
        sentences = self._chunker.flush_spans()
        self._taken = self._fed
        return "\n".join(sentence for _, sentence in sentences) or None
