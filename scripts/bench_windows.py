#!/usr/bin/env python3
"""What decoding a first piece in windows costs against decoding it whole, on both engines.

For each sentence of the listener's speech corpus (scripts/intelligibility.py, the Japanese
benchmark texts' sentences: scripts/bench.py, and MORE_JA), as a response's first piece (engine/windows.py, sized for the engine speed measured here, or --rtf):
- the Whisper listener's character error rate of the windowed decode (as served: each window
  given its voice's reference statistics, recorded as the server's warm-up does) and of the
  whole one, beside that of the windows with their own statistics, made up for level (as served
  before the reference statistics, and still for a blend or a custom style),
  beside that of the whole decode of one silent frame less (the listener's own noise: the
  decoder's statistics change with the frames it is given, and its phase with them, so any
  change of the input moves the audio, and a weak listener's transcript with it) and that of
  the whole decode again, its random source drawn anew (what the same request gets next time);
- the log-spectral distance of the windowed decode from the whole one over the sound, beside
  that of the whole decode of one silent frame less;
- the largest step between neighbouring samples at a join, over the largest step of the whole
  decode within 50 ms of it (1.0: no step the model does not make itself);
- the first window's level, made up as served, against the whole decode's, in dB (its
  statistics are its own: windows.Loudness);
- the decode of the speech span only, as the server decodes a response's later pieces
  (engine/speech_span.py: the model's silence around them not decoded): its CER, log-spectral
  distance and level against the whole decode, and the share of the frames it decodes;
- with --lead-frames 4,8,99: the windowed decode's CER and first-window frames with the first
  window starting that many frames before the speech (99: at the piece's start), no make-up (the
  PyTorch engine counts a lead shorter than windows.LEAD_FRAMES as that lead: span_norm.py);
- with --joins, for a piece of three windows or more: its CER with its first join only (the
  rest decoded whole after it) and with its first window reaching the second join (every
  later join kept): which join costs the listener;
- with --voices all (or a comma-separated list of voice ids), every sentence in each of the
  language's own voices (five Japanese ones): more pieces, for a CER difference the listener's
  flips on single sentences cannot hide.

    .venv/bin/python scripts/bench_windows.py --model-dir .cache/model-dir --json reports/bench-windows.json

Writes the JSON and a plot beside it (bench-windows.png).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import intelligibility
from bench import TEN_SENTENCES
from plots import save_plot

from tts_server.engine import speech_span
from tts_server.engine.backend import SAMPLES_PER_DURATION_UNIT as UNIT
from tts_server.engine.factory import build_synthesizer
from tts_server.engine.windows import Splicer, Window, plan
from tts_server.runtime import learn_norms
from tts_text.chunker import split_sentences

# More sentences for the listener than the test's corpus: it flips on a sentence now and then,
# and with 13 one flip moved the corpus CER by more than the 0.01 to be resolved.
MORE_JA = [
    "電車は次の駅で五分ほど停車いたします。", "この道をまっすぐ行くと郵便局があります。",
    "週末は家族と一緒に山へ出かける予定です。", "会議の資料は今日中にお送りいたします。",
    "冷蔵庫の中に昨日の残りのカレーがあります。", "図書館は月曜日がお休みになっております。",
    "新しいスマートフォンの使い方を教えてください。", "午後から雨が降るので傘を持っていきましょう。",
    "お電話ありがとうございます、担当者におつなぎします。", "荷物は明日の午前中にお届けする予定です。",
    "このレストランは魚料理がとてもおいしいです。", "子供たちは公園で元気に遊んでいます。",
    "パスワードを三回間違えるとロックされます。", "来月から新しいプロジェクトが始まります。",
    "窓を開けると涼しい風が入ってきました。", "ご注文の商品は在庫切れとなっております。",
    "毎朝七時に起きて散歩をしています。", "駅の近くに新しいパン屋ができました。",
    "申し込みの締め切りは今週の金曜日です。", "ホテルのチェックインは午後三時からです。",
    "この薬は食後に一錠ずつ飲んでください。", "空港までタクシーで三十分ほどかかります。",
    "先生の説明はとても分かりやすかったです。", "エレベーターは点検のため停止しております。",
    "日曜日の朝は市場がにぎやかになります。", "お客様の番号は五番窓口でお呼びします。",
    "夏休みに海で泳ぐのを楽しみにしています。", "画面の右上にある設定ボタンを押してください。",
    "今夜は満月なので月がとてもきれいです。", "ご不明な点がございましたらお問い合わせください。",
]
CORPUS = {"ja": intelligibility.CORPUS["ja"] + [TEN_SENTENCES[a:b] for a, b in split_sentences(TEN_SENTENCES)]
          + MORE_JA,
          "en-US": intelligibility.CORPUS["en-US"]}


def log_spectral_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean |log |STFT(a)| - log |STFT(b)|| (as tests/server/engine/test_batched_forward.py measures)."""
    spectra = [torch.stft(torch.from_numpy(np.ascontiguousarray(x)), 512, 128, window=torch.hann_window(512),
                          return_complex=True).abs() for x in (a, b)]
    return float((torch.log(spectra[0] + 1e-5) - torch.log(spectra[1] + 1e-5)).abs().mean())


def measured_rtf(synthesizer, language: str) -> float:
    text = CORPUS[language][0]
    style = synthesizer.voice_book(language).resolve("default")
    began = time.perf_counter()
    segment = synthesizer.synthesize(text, 0, len(text), style, 1.0, language)
    return (time.perf_counter() - began) / (segment.duration_ms / 1000)


def in_windows(backend, front, windows: list[Window], loudness, statistics=None) -> tuple[np.ndarray, Splicer]:
    """The piece decoded window by window, as the runner and the assembler do: each window given
    the voice's reference `statistics` (the caller has checked they fit: Reference.fits), else its
    own and the make-up gain `loudness` (None for none); spliced, and its splicer (where it joined)."""
    splicer = Splicer(windows, loudness if statistics is None else None)
    return np.concatenate([splicer.add(backend.decode(front, w.start, w.end, None, statistics)) for w in windows]), splicer


def decodes(synthesizer, text: str, language: str, voice: str, rtf: float, scratch: Path, leads: list[int],
            joins: bool = False, brief: bool = False) -> dict:
    """The decoder's output for the piece: whole, in windows (spliced), whole less one frame, and
    over its speech span only (as a later piece is decoded); their distances and each one's CER
    (trimmed as served: pauses.trim of the whole decode). `brief`: neither the decode of one frame
    less nor the speech span's (about half the listener's time)."""
    backend, book = synthesizer.backend, synthesizer.voice_book(language)
    style = book.resolve(voice)
    job = synthesizer.prepare(text, 0, len(text), style, 1.0, language).jobs[0]
    front = backend.front(job.ids, job.style, job.speed)
    frames = front.frames
    whole = backend.decode(front, 0, frames)
    windows = plan(front.durations, rtf, front.energy, backend.first_window_lead)  # as the server plans
    reference = synthesizer.references.get(book.voice_of(voice))
    # As served: given the voice's reference statistics where they fit, else made up for level.
    given = reference is not None and reference.fits(frames, len(windows))
    spliced, splicer = in_windows(backend, front, windows, synthesizer.loudness, reference.statistics if given else None)
    own_statistics = in_windows(backend, front, windows, synthesizer.loudness)[0] if given else spliced
    again = backend.front(job.ids, job.style, job.speed)  # its source not drawn yet: decode draws it anew
    assert again.frames == frames, "the front part is deterministic"
    whole_again = backend.decode(again, 0, frames)
    start, end = synthesizer.pauses.trim(whole)
    steps = []
    for join in splicer.joins:
        own = np.abs(np.diff(whole[join - 1200 : join + 1200])).max()
        steps.append(float(np.abs(np.diff(spliced[join - 240 : join + 240])).max() / max(own, 1e-6)))
    first_end = windows[1].join * UNIT if len(windows) > 1 else end
    level = 20 * np.log10(_rms(spliced[start:first_end]) / max(_rms(whole[start:first_end]), 1e-9))
    heard = [("whole", whole), ("windowed", spliced), ("whole_again", whole_again),
             ("windowed_own_statistics", own_statistics)]
    figures = {}
    if not brief:
        shorter, spoken = backend.decode(front, 0, frames - 1), speech_span.decode(backend, front)
        span_start, span_end = speech_span.span(front)
        heard += [("one_frame_less", shorter), ("speech_span", spoken)]
        figures = {"lsd_one_frame_less": log_spectral_distance(shorter[start:end], whole[start:end]),
                   "lsd_speech_span": log_spectral_distance(spoken[start:end], whole[start:end]),
                   "speech_span_level_db": float(20 * np.log10(_rms(spoken[start:end])
                                                              / max(_rms(whole[start:end]), 1e-9))),
                   "speech_span_frames": span_end - span_start}
    leading = {}
    for lead in leads:
        lead_windows = plan(front.durations, rtf, front.energy, lead_frames=lead)
        heard.append((f"lead{lead}", in_windows(backend, front, lead_windows, None)[0]))
        leading[f"first_window_frames_lead{lead}"] = lead_windows[0].end - lead_windows[0].start
    if joins and len(windows) > 2:
        context = windows[1].join - windows[1].start
        first, second = windows[1].join, windows[2].join
        for name, variant in (("first_join_only", [windows[0], Window(first - context, frames, first)]),
                              ("no_first_join", [Window(windows[0].start, second + context, windows[0].join),
                                                 *windows[2:]])):
            # the served make-up gain, not taught by the variants' joins
            heard.append((name, in_windows(backend, front, variant, copy.copy(synthesizer.loudness))[0]))
    cers, heard_before = {}, {}  # the same audio twice (the embedded engine's whole decode again) heard once
    for name, audio in heard:
        clip = audio[start:end]
        key = hashlib.sha256(clip.tobytes()).hexdigest()
        if key not in heard_before:
            path = scratch / f"{name}.wav"
            path.write_bytes(intelligibility.encode(clip, "wav", 24000))
            heard_before[key] = intelligibility.cer(text, intelligibility.transcribe(path, language, 24000), language)
        cers[f"cer_{name}"] = heard_before[key]
    return {"windows": len(windows), "first_window_frames": windows[0].end - windows[0].start, "frames": frames,
            "lsd": log_spectral_distance(spliced[start:end], whole[start:end]),
            "lsd_whole_again": log_spectral_distance(whole_again[start:end], whole[start:end]), **figures,
            "largest_join_step": max(steps, default=0.0), "first_window_level_db": float(level), **cers, **leading}


def score(engine: str, model_dir: str | None, languages: list[str], rtf: float | None, scratch: Path,
          leads: list[int], limit: int | None = None, joins: bool = False, voices: str = "default",
          brief: bool = False) -> list[dict]:
    synthesizer = build_synthesizer(engine, "cpu", model_dir, languages=languages)
    learn_norms(synthesizer)  # as the server's warm-up does
    rows = []
    for language in languages:
        speed = rtf or measured_rtf(synthesizer, language)
        style = synthesizer.voice_book(language).resolve("default")
        warm = CORPUS[language][0]  # as the server's warm-up does: one windowed synthesis teaches the make-up
        synthesizer.synthesize(warm, 0, len(warm), style, 1.0, language, rtf=speed)
        for voice in synthesizer.voice_book(language).own_voices if voices == "all" else voices.split(","):
            for text in CORPUS[language][:limit]:
                row = {"engine": synthesizer.backend.name, "language": language, "voice": voice, "text": text,
                       "rtf": speed, **decodes(synthesizer, text, language, voice, speed, scratch, leads, joins, brief)}
                rows.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
    return rows


def weighted_cer(rows: list[dict], key: str) -> float:
    """The CER of `key` over the rows' texts together: each sentence weighted by its characters."""
    return sum(r[key] * len(r["text"]) for r in rows) / sum(len(r["text"]) for r in rows)


def difference_interval(rows: list[dict], key: str, draws: int = 2000) -> list[float]:
    """The 95% bootstrap interval of weighted_cer(key) - weighted_cer("cer_whole"), pieces drawn
    with replacement (each piece's decodes together): is a difference the listener's noise?"""
    chars = np.array([len(r["text"]) for r in rows], dtype=float)
    gap = np.array([r[key] - r["cer_whole"] for r in rows]) * chars
    picks = np.random.default_rng(0).integers(0, len(rows), size=(draws, len(rows)))
    values = gap[picks].sum(axis=1) / chars[picks].sum(axis=1)
    return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]


def summary(rows: list[dict]) -> dict:
    """Per engine: the corpus CER (weighted by characters) both ways, and the decodes' medians and worst."""
    out = {}
    for engine in dict.fromkeys(r["engine"] for r in rows):
        mine = [r for r in rows if r["engine"] == engine]
        heard = [key for key in ("cer_whole", "cer_windowed", "cer_one_frame_less", "cer_whole_again",
                                 "cer_windowed_own_statistics") if key in mine[0]]
        out[engine] = {
            **{key: weighted_cer(mine, key) for key in heard},
            "pieces": len(mine),
            "voices": list(dict.fromkeys(r["voice"] for r in mine)),
            "by_voice": {voice: {key: weighted_cer([r for r in mine if r["voice"] == voice], key) for key in heard}
                         for voice in dict.fromkeys(r["voice"] for r in mine)},
            **{f"{key}_minus_whole_ci95": difference_interval(mine, key) for key in heard[1:]},
            "lsd_p50": statistics.median(r["lsd"] for r in mine),
            "lsd_whole_again_p50": statistics.median(r["lsd_whole_again"] for r in mine),
            "largest_join_step": max(r["largest_join_step"] for r in mine),
            "first_window_level_db_p50": statistics.median(r["first_window_level_db"] for r in mine),
            "first_window_level_db_min": min(r["first_window_level_db"] for r in mine),
            "first_window_level_db_max": max(r["first_window_level_db"] for r in mine),
        }
        if "cer_speech_span" in mine[0]:
            out[engine] |= {
                "cer_speech_span": weighted_cer(mine, "cer_speech_span"),
                "lsd_speech_span_p50": statistics.median(r["lsd_speech_span"] for r in mine),
                "speech_span_level_db_p50": statistics.median(r["speech_span_level_db"] for r in mine),
                "speech_span_frame_share": sum(r["speech_span_frames"] for r in mine) / sum(r["frames"] for r in mine),
                "lsd_one_frame_less_p50": statistics.median(r["lsd_one_frame_less"] for r in mine)}
        for lead in (int(key.removeprefix("cer_lead")) for key in mine[0] if key.startswith("cer_lead")):
            out[engine][f"cer_lead{lead}"] = weighted_cer(mine, f"cer_lead{lead}")
            out[engine][f"first_window_frames_lead{lead}"] = sum(r[f"first_window_frames_lead{lead}"] for r in mine)
        isolated = [r for r in mine if "cer_first_join_only" in r]
        if isolated:  # --joins: over the pieces of three windows or more only
            out[engine]["joins"] = {"pieces": len(isolated), **{
                key: weighted_cer(isolated, key)
                for key in ("cer_whole", "cer_windowed", "cer_first_join_only", "cer_no_first_join")}}
    return out


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=str(intelligibility.REPO / ".cache" / "model-dir"))
    parser.add_argument("--engines", default="onnx,torch")
    parser.add_argument("--languages", default="ja,en-US")
    parser.add_argument("--rtf", type=float, help="size the windows for this engine speed (default: measured here)")
    parser.add_argument("--lead-frames", default="", help="also decode with the first window starting these many "
                        "frames before the speech, comma-separated (99: at the piece's start), no make-up")
    parser.add_argument("--corpus-limit", type=int, help="the first N sentences of each language only")
    parser.add_argument("--joins", action="store_true", help="also decode a piece of three windows or more with its "
                        "first join only and with no first join (which join costs the listener)")
    parser.add_argument("--voices", default="default", help="the language's default voice, `all` of its own "
                        "voices in turn, or these voice ids, comma-separated")
    parser.add_argument("--brief", action="store_true", help="neither the decode of one frame less nor the speech "
                        "span's: about half the listener's time")
    parser.add_argument("--json", type=Path, default=Path("reports/bench-windows.json"))
    args = parser.parse_args()
    if not intelligibility.listener_ready():
        sys.exit(f"the Whisper listener is not set up: run `bash {intelligibility.ASR}/setup.sh` first")
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for engine in args.engines.split(","):
            rows += score(engine, args.model_dir if engine == "torch" else None, args.languages.split(","), args.rtf,
                          Path(scratch), [int(lead) for lead in args.lead_frames.split(",") if lead], args.corpus_limit,
                          args.joins, args.voices, args.brief)
    figures = {"benchmark": "bench-windows", "load_average": {"before": load_before, "after": os.getloadavg()},
               "summary": summary(rows), "rows": rows}
    print(json.dumps(figures["summary"], indent=2))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.json} and {save_plot(args.json, figures)}")


if __name__ == "__main__":
    main()
