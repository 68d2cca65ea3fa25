"""The audio formats, one record each, shared by the speech server and the client library.

A format's record says everything any side needs: its name on the wire, its media type, the
sample rate it is fixed at (if any), how it is encoded (the server builds the encoder from
it; a client reads how to count or decode it) and the file names it is saved under. Adding a
codec is adding one record here (and, for a new kind of encoding, its case in the server's
`audio/encoders.py`). Pure data: it imports neither side, nor any codec library.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The common PCM rates; the server resamples the model's 24 kHz to each, and every
# variable-rate format here takes all of them.
SAMPLE_RATES: tuple[int, ...] = (8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000)
DEFAULT_SAMPLE_RATE = 24000


def speech_bit_rate(rate: int) -> int:
    """Speech-oriented mono bit rates: 24 kb/s at 8 kHz, 48 at 16 kHz, 64 from 22.05 kHz up
    (the model's audio holds nothing above 12 kHz, so higher rates need no more bits)."""
    return 24_000 if rate < 16000 else 48_000 if rate < 22050 else 64_000


@dataclass(frozen=True)
class Raw:
    """Headerless little-endian PCM."""

    sample: str  # "f32" or "s16"

    @property
    def bytes_per_sample(self) -> int:
        return 4 if self.sample == "f32" else 2


@dataclass(frozen=True)
class Wav:
    """16-bit PCM WAV for streaming: a header with unknown sizes, then PCM16 (one file per response)."""

    demuxer: str = "wav"


@dataclass(frozen=True)
class G711:
    """mu-law / A-law: one byte per sample, no header."""

    codec: str  # FFmpeg's name: pcm_mulaw, pcm_alaw
    bytes_per_sample: int = 1


@dataclass(frozen=True)
class Muxed:
    """A codec inside a streaming container (FFmpeg names); the chunks of a response concatenate
    to one file, which a client decodes with `demuxer`."""

    muxer: str
    codec: str
    sample_format: str  # what the codec takes (flt, fltp, s16)
    bit_rate: int | None = None  # None: speech_bit_rate(rate), or the codec's own choice when lossless
    lossless: bool = False
    container_options: tuple[tuple[str, str], ...] = ()
    codec_options: tuple[tuple[str, str], ...] = ()
    demuxer: str = ""  # empty: the muxer's name

    @property
    def reader(self) -> str:
        return self.demuxer or self.muxer


Encoding = Raw | Wav | G711 | Muxed


@dataclass(frozen=True)
class AudioFormat:
    name: str
    media_type: str  # may hold {rate}
    encoding: Encoding
    fixed_rate: int | None = None  # the rate it always has; a requested rate is ignored
    suffixes: tuple[str, ...] = field(default=())  # file names it is saved under, the usual first

    @property
    def rates(self) -> tuple[int, ...]:
        return (self.fixed_rate,) if self.fixed_rate else SAMPLE_RATES

    def media_type_at(self, rate: int) -> str:
        return self.media_type.format(rate=rate)

    @property
    def bytes_per_sample(self) -> int | None:
        """For raw formats (counted, not decoded); None for a container."""
        return getattr(self.encoding, "bytes_per_sample", None)

    @property
    def demuxer(self) -> str | None:
        """The container a client decodes it with; None for raw formats."""
        if isinstance(self.encoding, Muxed):
            return self.encoding.reader
        return self.encoding.demuxer if isinstance(self.encoding, Wav) else None


FORMATS: tuple[AudioFormat, ...] = (
    # No registered type exists for raw float PCM; say what it is in parameters.
    AudioFormat("pcm_f32", "audio/pcm;rate={rate};encoding=float;bits=32", Raw("f32"), suffixes=(".f32",)),
    AudioFormat("pcm_16", "audio/L16;rate={rate}", Raw("s16"), suffixes=(".pcm",)),
    AudioFormat("mulaw", "audio/basic", G711("pcm_mulaw"), fixed_rate=8000, suffixes=(".ulaw", ".mulaw")),
    AudioFormat("alaw", "audio/x-alaw-basic", G711("pcm_alaw"), fixed_rate=8000, suffixes=(".alaw",)),
    # Ogg pages of at most one 20 ms Opus packet: a page leaves as soon as it holds that much
    # audio, instead of the muxer's default of one second.
    AudioFormat("opus", "audio/ogg", Muxed("ogg", "libopus", "flt", bit_rate=32_000,
                                           container_options=(("page_duration", "20000"),)),
                fixed_rate=24000, suffixes=(".ogg", ".opus")),
    # No ID3 tag, no Xing frame, no bit reservoir: a plain frame stream, valid from any chunk boundary.
    AudioFormat("mp3", "audio/mpeg", Muxed("mp3", "libmp3lame", "fltp",
                                           container_options=(("id3v2_version", "0"), ("write_xing", "0")),
                                           codec_options=(("reservoir", "0"),)), suffixes=(".mp3",)),
    AudioFormat("wav", "audio/wav", Wav(), suffixes=(".wav",)),
    # No 8 KiB padding block: it only serves rewriting the header, which a stream cannot.
    AudioFormat("flac", "audio/flac", Muxed("flac", "flac", "s16", lossless=True,
                                            container_options=(("metadata_header_padding", "0"),)),
                suffixes=(".flac",)),
    AudioFormat("aac", "audio/aac", Muxed("adts", "aac", "fltp", demuxer="aac"), suffixes=(".aac",)),
)
BY_NAME: dict[str, AudioFormat] = {f.name: f for f in FORMATS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
BY_SUFFIX: dict[str, AudioFormat] = {suffix: f for f in FORMATS for suffix in f.suffixes}
