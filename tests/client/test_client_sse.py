"""SSE events survive any cut of the byte stream into delivery chunks."""

import json
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from tts_client.sse import SSEEvent, SSEReader

STREAM = (
    'data: {"type":"audio","audio":"QUJD","text":"こんにちは"}\n\n'
    ": keep-alive\n\n"
    "event: chunk\r\nid: 7\r\ndata: first line\r\ndata: second line\r\n\r\n"
    'data: {"type":"done"}\n\n'
)
EXPECTED = [
    SSEEvent('{"type":"audio","audio":"QUJD","text":"こんにちは"}'),
    SSEEvent("first line\nsecond line", "chunk", "7"),
    SSEEvent('{"type":"done"}', id="7"),  # the last event id carries over, as the SSE spec says
]


def read(chunks: list[bytes]) -> list[SSEEvent]:
    reader = SSEReader()
    events = [event for chunk in chunks for event in reader.feed(chunk)]
    return events + reader.close()


def test_whole_stream():
    assert read([STREAM.encode()]) == EXPECTED


def test_one_byte_at_a_time_splits_multibyte_characters_and_crlf():
    data = STREAM.encode()
    assert read([data[i:i + 1] for i in range(len(data))]) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM.encode())), max_size=12))
def test_any_cut_into_delivery_chunks_gives_the_same_events(cuts):
    data = STREAM.encode()
    points = [0, *sorted(cuts), len(data)]
    assert read([data[a:b] for a, b in pairwise(points)]) == EXPECTED


def test_four_mp3_frames_in_six_delivery_chunks_as_the_blog_measured():
    events = "".join(f'data: {json.dumps({"seq": n, "audio": "x" * 300})}\n\n' for n in range(4)).encode()
    cuts = [0, 100, 390, 700, 710, 1200, len(events)]
    out = read([events[a:b] for a, b in pairwise(cuts)])
    assert [event.json()["seq"] for event in out] == [0, 1, 2, 3]


def test_an_event_without_its_blank_line_at_the_end_is_not_delivered():
    assert read([b"data: complete\n\ndata: cut off"]) == [SSEEvent("complete")]
