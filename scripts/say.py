#!/usr/bin/env python3
"""One-shot synthesis: text in, an audio file out, through the same client as the validator.

  say.py --text "こんにちは。" --out hello.wav                         (local server)
  say.py --endpoint NAME --region R --text "..." --out hello.mp3     (deployed endpoint)

The format follows the file's suffix (.wav .mp3 .ogg/.opus .flac .aac .pcm .f32 .ulaw .alaw)
unless --format says otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tts_client, used from the checkout

from tts_client.audio import FILE_SUFFIXES
from tts_client.session import Session

DEFAULT_URL = "ws://127.0.0.1:8080/invocations-bidirectional-stream"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--text", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--url", default=DEFAULT_URL, help="WebSocket URL (default %(default)s)")
    parser.add_argument("--endpoint", help="SageMaker endpoint name (instead of --url)")
    parser.add_argument("--region")
    parser.add_argument("--endpoint-url", help="override the SageMaker runtime URL (the local gateway)")
    parser.add_argument("--ca-file", help="CA bundle to trust for --endpoint-url (default: $AWS_CA_BUNDLE)")
    parser.add_argument("--format", help="audio format (default: from the --out suffix)")
    parser.add_argument("--sample-rate", type=int)
    parser.add_argument("--language", default="ja")
    parser.add_argument("--speaker", default="default")
    parser.add_argument("--speed", type=float)
    return parser.parse_args(argv)


async def connect(args) -> Session:
    if args.endpoint:
        return await Session.sagemaker(args.endpoint, region=args.region, endpoint_url=args.endpoint_url, ca_file=args.ca_file)
    return await Session.websocket(args.url)


def finish_wav(data: bytes) -> bytes:
    """A streamed WAV header cannot know its length; the whole file can: fill the sizes in."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return data
    position = 12
    while position + 8 <= len(data):
        chunk, size = data[position:position + 4], struct.unpack_from("<I", data, position + 4)[0]
        if chunk == b"data":
            data = bytearray(data)
            struct.pack_into("<I", data, 4, len(data) - 8)
            struct.pack_into("<I", data, position + 4, len(data) - position - 8)
            return bytes(data)
        position += 8 + size
    return data


async def say(args) -> int:
    audio_format = args.format or FILE_SUFFIXES.get(args.out.suffix.lower())
    if not audio_format:
        print(f"error: cannot tell the format from {args.out.name!r}; pass --format", file=sys.stderr)
        return 2
    session = await connect(args)
    try:
        created = await session.open(format=audio_format, sample_rate=args.sample_rate, language=args.language,
                                     speaker_id=args.speaker, speed=args.speed, audio_frames="binary")
        response = await session.synthesize(args.text)
        await session.close()
    finally:
        await session.abort()
    if response.done.status not in ("completed", "truncated"):
        error = response.done.error
        print(f"error: synthesis {response.done.status}: {error.message if error else ''}", file=sys.stderr)
        return 1
    audio = finish_wav(response.audio) if audio_format == "wav" else response.audio
    args.out.write_bytes(audio)
    print(f"wrote {args.out} ({audio_format} {created.sample_rate} Hz, {response.done.audio_ms} ms, {len(audio)} bytes)")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return asyncio.run(say(args))
    except Exception as error:  # noqa: BLE001 - a refused open, a connection that failed: one line, not a traceback
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
