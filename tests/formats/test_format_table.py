"""One record per audio format (tts_formats), read by both sides: what the server encodes from a
record, the client library decodes from the same record to the duration that went in."""

import numpy as np
import pytest
from tts_formats import BY_SUFFIX, FORMATS, NAMES, SAMPLE_RATES

from tts_client.audio import FILE_SUFFIXES, decoded_sample_rate, duration_ms
from tts_server.audio import AUDIO_FORMATS, AudioOutput, negotiate

# Codec framing (MP3/AAC priming and padding) adds up to a few frames (AAC: 2048 samples at 16 kHz).
TOLERANCE_MS = 150


def test_the_server_offers_exactly_the_table():
    assert AUDIO_FORMATS == NAMES
    for record in FORMATS:
        assert negotiate(record.name).sample_rate in record.rates
        assert negotiate(record.name).media_type == record.media_type_at(negotiate(record.name).sample_rate)


@pytest.mark.parametrize("record", FORMATS, ids=lambda r: r.name)
def test_what_the_server_encodes_the_client_decodes(record):
    spec = negotiate(record.name, 16000)
    output = AudioOutput(spec)
    tone = (0.3 * np.sin(np.arange(24000) * 2 * np.pi * 220 / 24000)).astype(np.float32)  # 1 s at 24 kHz
    audio = output.push(tone[:12000]) + output.push(tone[12000:]) + output.close()
    assert duration_ms(record.name, spec.sample_rate, audio) == pytest.approx(1000, abs=TOLERANCE_MS)
    assert decoded_sample_rate(record.name, audio) in (None, spec.sample_rate)


def test_file_names_come_from_the_table():
    assert FILE_SUFFIXES == {suffix: record.name for suffix, record in BY_SUFFIX.items()}
    assert all(record.suffixes for record in FORMATS)
    assert {r.fixed_rate for r in FORMATS if r.fixed_rate} <= set(SAMPLE_RATES)
