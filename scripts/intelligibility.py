#!/usr/bin/env python3
"""Is the speech intelligible? Both engines, several formats, scored by an offline Whisper listener.

Each sentence of a small corpus is synthesized by the engine (no server: the same Synthesizer,
encoded by the server's AudioOutput), written as the client would receive it, transcribed by
the Whisper listener in ../shared/asr (`bash ../shared/asr/setup.sh` once) and scored against
the text: character error rate per engine, language and format.

    .venv/bin/python scripts/intelligibility.py --model-dir .cache/model-dir --json reports/cer.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ASR = Path(os.environ.get("ASR_DIR", REPO.parent / "shared" / "asr"))
sys.path[:0] = [str(REPO / "container"), str(REPO)]
from tts_server.audio.formats import negotiate  # noqa: E402
from tts_server.audio.pipeline import AudioOutput  # noqa: E402
from tts_server.engine.backend import SAMPLE_RATE  # noqa: E402
from tts_server.engine.factory import build_synthesizer  # noqa: E402

CORPUS = {
    "ja": ["今日はいい天気ですね。", "明日の会議は午後三時から始まります。", "駅までの道を教えてください。"],
    "en-US": ["The weather is lovely today.", "Please send me the report by Friday."],
}
FORMATS = {"wav": ("wav", 24000, ".wav"), "opus": ("opus", 24000, ".ogg"), "mulaw 8 kHz": ("mulaw", 8000, ".mulaw")}


def listener_ready() -> bool:
    venv = Path(os.environ.get("ASR_VENV", Path.home() / ".cache" / "asr-venv"))
    return (ASR / "transcribe.py").is_file() and (venv / "models").is_dir()


def encode(samples, fmt: str, rate: int) -> bytes:
    output = AudioOutput(negotiate(fmt, rate), source_rate=SAMPLE_RATE)
    return output.push(samples) + output.close()


def transcribe(path: Path, language: str, rate: int) -> str:
    args = [sys.executable, str(ASR / "transcribe.py"), str(path), "--lang", language.split("-")[0]]
    if path.suffix == ".mulaw":
        args += ["--rate", str(rate)]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()


def cer(reference: str, hypothesis: str, language: str) -> float:
    """Character error rate by the listener's own scorer (its normalisation per language)."""
    out = subprocess.run([sys.executable, str(ASR / "cer.py"), reference, hypothesis, "--lang", language.split("-")[0]],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split("CER:")[1].split()[0])


def score(engine: str, model_dir: str | None, languages: list[str], formats: list[str],
          threads: int | None = None) -> list[dict]:
    synthesizer = build_synthesizer(engine, "cpu", model_dir, threads=threads, languages=languages)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for language in languages:
            style = synthesizer.voice_book(language).resolve("default")
            for name in formats:
                fmt, rate, suffix = FORMATS[name]
                errors, chars = 0.0, 0
                for number, text in enumerate(CORPUS[language]):
                    segment = synthesizer.synthesize(text, 0, len(text), style, 1.0, language)
                    path = Path(scratch) / f"{language}-{number}{suffix}"
                    path.write_bytes(encode(segment.audio, fmt, rate))
                    errors += cer(text, transcribe(path, language, rate), language) * len(text)
                    chars += len(text)
                rows.append({"engine": synthesizer.backend.name, "language": language, "format": name,
                             "cer": errors / chars})
                print(f"{rows[-1]['engine']:<24} {language:<6} {name:<12} CER {rows[-1]['cer']:.3f}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=str(REPO / ".cache" / "model-dir"))
    parser.add_argument("--languages", default="ja,en-US")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not listener_ready():
        sys.exit(f"the Whisper listener is not set up: run `bash {ASR}/setup.sh` first")
    languages, formats = args.languages.split(","), args.formats.split(",")
    rows = score("onnx", None, languages, formats) + score("torch", args.model_dir, languages, formats)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
