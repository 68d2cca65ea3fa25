"""Server-Sent Events reassembly: delivery chunks in, whole events out.

Transports cut a stream wherever they like: one event may arrive in six pieces, a piece
may end inside a field, a line ending or a multi-byte character. Bytes are buffered and an
event is released only at its blank-line delimiter (the blog's Step 4 fix).
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None

    def json(self):
        return json.loads(self.data)


class SSEReader:
    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._pending = ""  # text not yet split into complete lines
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._pending += self._decoder.decode(chunk)
        return self._drain_lines(final=False)

    def close(self) -> list[SSEEvent]:
        """End of stream: a last event without its blank line is dropped, as the spec says."""
        self._pending += self._decoder.decode(b"", final=True)
        self._drain_lines(final=True)
        return []

    def _drain_lines(self, final: bool) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        while True:
            end = _line_end(self._pending, final)
            if end is None:
                return events
            stop, after = end
            line, self._pending = self._pending[:stop], self._pending[after:]
            event = self._take_line(line)
            if event is not None:
                events.append(event)

    def _take_line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            self._id = value
        return None

    def _dispatch(self) -> SSEEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = SSEEvent("\n".join(self._data), self._event or "message", self._id)
        self._data, self._event = [], ""
        return event


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _line_end(text: str, final: bool) -> tuple[int, int] | None:
    """(end of line, start of next) for the first complete line, CRLF / LF / CR alike."""
    match = _LINE_BREAK.search(text)
    if match is None:
        return None
    if match.group() == "\r" and match.end() == len(text) and not final:
        return None  # a CR at the end of a chunk may be the first half of CRLF
    return match.start(), match.end()
