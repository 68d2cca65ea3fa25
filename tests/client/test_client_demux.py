"""Audio and control frames share one socket: the whole-frame JSON rule tells them apart."""

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tts_client.demux import Demuxer, as_control
from tts_client.events import AudioChunk, RawAudio, ResponseDone


def pcm16_starting_with_brace(samples: int = 480) -> bytes:
    """Real-looking PCM whose first byte is 0x7b ('{'): sample 0 is 0x227b (little-endian 7b 22)."""
    wave = (np.sin(np.linspace(0, 40, samples)) * 12000).astype("<i2")
    wave[0] = 0x227B  # bytes 7b 22: '{"' -- the start of a JSON object, in audio
    return wave.tobytes()


def test_pcm_that_starts_with_a_brace_is_audio():
    frame = pcm16_starting_with_brace()
    assert frame[:2] == b'{"'
    assert as_control(frame) is None


def test_a_whole_json_object_is_control_in_text_and_binary_frames():
    event = {"type": "pong"}
    assert as_control(json.dumps(event)) == event
    assert as_control(json.dumps(event).encode()) == event
    assert as_control(b'  \n{"type": "pong"}') == event


def test_json_that_is_not_an_object_is_not_control():
    assert as_control(b"[1, 2]") is None
    assert as_control(b'{"type": "pong"') is None  # cut short


@given(st.binary(min_size=1, max_size=2000))
def test_binary_audio_starting_with_a_brace_is_never_control_unless_it_is_a_json_object(tail):
    frame = b"{" + tail
    try:
        is_object = isinstance(json.loads(frame), dict)
    except ValueError:
        is_object = False
    assert (as_control(frame) is not None) == is_object


def test_binary_mode_pairs_each_chunk_event_with_the_frame_after_it():
    audio = pcm16_starting_with_brace()
    demuxer = Demuxer()
    assert demuxer.feed(json.dumps({"type": "audio.chunk", "response_id": "r", "sequence": 0})) == []
    [chunk] = demuxer.feed(audio)
    assert chunk == AudioChunk("r", 0, audio)
    done = {"type": "response.done", "response_id": "r", "status": "completed", "usage": {"characters": 3, "audio_ms": 20}}
    assert demuxer.feed(json.dumps(done)) == [ResponseDone("r", "completed", 3, 20)]


def test_json_mode_chunk_carries_its_own_base64_audio():
    [chunk] = Demuxer().feed(json.dumps({"type": "audio.chunk", "response_id": "r", "sequence": 2, "audio": "AAEC"}))
    assert chunk.audio == b"\x00\x01\x02" and chunk.sequence == 2


def test_audio_nobody_announced_is_raw_audio():
    audio = pcm16_starting_with_brace()
    assert Demuxer().feed(audio) == [RawAudio(audio)]
