"""Audio that plays: every format decodes to the duration the server reports, timestamps
point into the text and the audio, max_length truncates (SPEC §3, §6)."""

from __future__ import annotations

from tts_formats import FORMATS as AUDIO_FORMATS

from ..audio import decoded_sample_rate, duration_ms
from .runner import Check, Context, expect
from .sessions import opened
from .texts import LONG, SHORT, TWO_SENTENCES

# Codec framing (MP3/AAC priming and padding) may add a few frames.
TOLERANCE_MS = 120
# Every format of the shared table, each once as (format, sample rate asked, audio_frames): some
# at another rate than the default, some as binary frames, the rest as base64 JSON.
VARIANTS = {"pcm_16": (16000, "binary"), "mulaw": (None, "binary"), "opus": (None, "binary"),
            "wav": (8000, "binary"), "flac": (16000, "json"), "aac": (None, "binary")}
FORMATS = [(f.name, *VARIANTS.get(f.name, (None, "json"))) for f in AUDIO_FORMATS]


async def _synthesize(context: Context, format: str, sample_rate: int | None, audio_frames: str, text: str, **options):
    async with opened(context, format=format, sample_rate=sample_rate, audio_frames=audio_frames) as session:
        response = await session.synthesize(text, timeout=context.timeout, **options)
        return session.created, response


async def _reference_ms(context: Context) -> int:
    """What the same text lasts as plain float PCM: the yardstick for every other format."""
    if "reference_ms" not in context.cache:
        _, response = await _synthesize(context, "pcm_f32", None, "json", SHORT)
        context.cache["reference_ms"] = response.done.audio_ms
    return context.cache["reference_ms"]


def format_check(format: str, sample_rate: int | None, audio_frames: str) -> Check:
    async def run(context: Context) -> str:
        reference = await _reference_ms(context)
        created, response = await _synthesize(context, format, sample_rate, audio_frames, SHORT)
        expect(response.done.status == "completed", f"status {response.done.status!r}")
        if sample_rate:
            expect(created.sample_rate == sample_rate, f"negotiated {created.sample_rate} Hz, asked {sample_rate}")
        declared = decoded_sample_rate(format, response.audio)  # a container says its own rate
        expect(declared in (None, created.sample_rate), f"the {format} audio is at {declared} Hz, session.created says {created.sample_rate}")
        decoded = duration_ms(format, created.sample_rate, response.audio)
        reported = response.done.audio_ms
        expect(abs(decoded - reported) <= TOLERANCE_MS, f"decodes to {decoded:.0f} ms, response.done says {reported} ms")
        expect(abs(decoded - reference) <= TOLERANCE_MS, f"decodes to {decoded:.0f} ms, the same text is {reference} ms as pcm_f32")
        return f"{decoded:.0f} ms at {created.sample_rate} Hz ({len(response.chunks)} chunks, {audio_frames} frames)"

    rate = f"@{sample_rate}" if sample_rate else ""
    return Check(f"format.{format}{rate}", run, f"{format} decodes to the expected duration")


async def timestamps_consistent(context: Context) -> str:
    _, response = await _synthesize(context, "pcm_16", None, "json", TWO_SENTENCES, with_timestamps=True)
    records = response.alignments
    audio_ms = duration_ms("pcm_16", 24000, response.audio)
    expect(records, "no alignments with with_timestamps=true")
    previous_end = 0
    for record in records:
        expect(record.text == TWO_SENTENCES[record.start_char:record.end_char],
               f"{record.text!r} is not text[{record.start_char}:{record.end_char}]")
        expect(previous_end <= record.start_ms <= record.end_ms, f"{record.text!r} overlaps or runs backwards")
        previous_end = record.end_ms
    expect(previous_end <= audio_ms + TOLERANCE_MS, f"timestamps end at {previous_end} ms, audio at {audio_ms:.0f} ms")
    return f"{len(records)} records in order, inside {audio_ms:.0f} ms of audio"


async def max_length_truncates(context: Context) -> str:
    limit = 800
    _, response = await _synthesize(context, "pcm_16", None, "json", LONG, max_length=limit)
    played = duration_ms("pcm_16", 24000, response.audio)
    expect(response.done.status == "truncated", f"status {response.done.status!r}, expected 'truncated'")
    expect(played <= limit + TOLERANCE_MS, f"{played:.0f} ms of audio for max_length {limit}")
    return f"truncated at {played:.0f} ms (max_length {limit})"


CHECKS = [
    *(format_check(*spec) for spec in FORMATS),
    Check("timestamps.consistent", timestamps_consistent, "alignments slice the text and fit the audio"),
    Check("max_length.truncates", max_length_truncates, "max_length stops the audio, status truncated"),
]
