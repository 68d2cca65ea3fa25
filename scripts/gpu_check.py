#!/usr/bin/env python3
"""Every GPU figure in one run (../shared/GPU.md), written as JSON, a table and a PNG to --out.

    python3 scripts/gpu_check.py --out $OUT                    # on the GPU box (device cuda)
    python scripts/gpu_check.py --device cpu --tiny --out reports/gpu-check   # here: the suite runs this

The engine layer alone (scheduler + batched forward), on Kokoro-82M's architecture with seeded
random weights and the inputs in scripts/gpu_check_inputs.json (token ids, style rows and the real
model's durations, forced in place of the predictor's: scripts/gpu_engine.py):
  parity        the same weights on the device and on the CPU: durations equal, audio within tolerance
  batched       each row of a batch equal to its batch-1 result on the device
  throughput    audio-s/s and model-run latency per batch size, through the server's scheduler
  ttfa          time to first audio at 1/10/50 concurrent sessions, each speaking, listening, speaking
  memory        peak device memory
  precision     fp16/bf16 (autocast) against fp32: speed, distance from fp32, the listener's CER
                (--listen: on --model-dir's trained weights, every recorded sentence, ../shared/asr);
                a precision whose layers the device cannot run: {"supported": false, "reason": ...}
--tiny runs the same code on two short items, small batches and two sessions (seconds on a CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_engine import REPO, SeededBackend, load_inputs, record, seeded_model, trained_model
from gpu_load import sessions_ttfa, throughput

from tts_server.engine.batched_forward import forward_batch
from tts_server.engine.batched_layers import packed_lstm

TARGETS = {"audio_s_per_s": 1000, "ttfa_p95_ms_at_50_sessions": 150}
TOLERANCE = {"cpu_vs_device_rel_l2": 1e-3, "batched_vs_single_rel_l2": 1e-4}  # relative L2 of the audio


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    n = min(len(a), len(b))
    return float(np.linalg.norm(a[:n] - b[:n]) / max(np.linalg.norm(b[:n]), 1e-12)) if len(a) == len(b) else float("inf")


def compare(rows: list, reference: list) -> dict:
    return {"durations_equal": all(np.array_equal(r[1], q[1]) for r, q in zip(rows, reference, strict=True)),
            "audio_rel_l2_max": max(rel_l2(r[0], q[0]) for r, q in zip(rows, reference, strict=True))}


def parity(cpu_model, model, items, speed: float) -> dict:
    """Unforced: the predictor's own durations (random weights predict ~25 frames a token at speed 1:
    a higher speed keeps the audio short), harmonic-source noise seeded per row."""
    batch = [(i["ids"], i["style"], speed) for i in items]
    seeds = list(range(len(batch)))
    found = compare(forward_batch(model, batch, seeds=seeds), forward_batch(cpu_model, batch, seeds=seeds))
    return {**found, "tolerance_rel_l2": TOLERANCE["cpu_vs_device_rel_l2"], "compared": f"{model.device.type} vs cpu",
            "passed": found["durations_equal"] and found["audio_rel_l2_max"] <= TOLERANCE["cpu_vs_device_rel_l2"]}


def batched_equals_single(backend, items) -> dict:
    batch = [(i["ids"], i["style"], 1.0) for i in items]
    backend.forced.rows = [i["durations"] for i in items]
    together = forward_batch(backend.model, batch, seeds=list(range(len(batch))))
    alone = []
    for k, item in enumerate(batch):
        backend.forced.rows = [items[k]["durations"]]
        alone += forward_batch(backend.model, [item], seeds=[k])
    backend.forced.rows = None
    found = compare(together, alone)
    found["durations_as_recorded"] = all(np.array_equal(row[1], item["durations"]) for row, item in zip(together, items, strict=True))
    return {**found, "batch": len(batch), "tolerance_rel_l2": TOLERANCE["batched_vs_single_rel_l2"],
            "passed": found["durations_equal"] and found["durations_as_recorded"]
            and found["audio_rel_l2_max"] <= TOLERANCE["batched_vs_single_rel_l2"]}


def precision(backend, items, batch: int, repeats: int, out: Path, skip: tuple[str, ...] = (), wavs: int = 1) -> dict:
    """autocast at each dtype: audio-s/s at one batch size, relative L2 and log-spectral distance
    from fp32 (noise seeded alike), WAVs for the listener (CER needs trained weights)."""
    rows = [(i["ids"], i["style"], 1.0) for i in (items * batch)[:batch]]
    seeds = list(range(len(rows)))
    results, reference = {}, None
    for name, dtype in (("fp32", None), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
        if name in skip:
            results[name] = {"skipped": f"{name} left out on the {backend.device} (half precision there: minutes)"}
            continue
        if dtype is not None and (reason := unsupported(backend.device, dtype)):
            results[name] = {"supported": False, "reason": reason}
            continue
        try:
            with torch.autocast(backend.device, dtype=dtype, enabled=dtype is not None):
                backend.infer_batch(rows, seeds=seeds)  # first run: kernels, allocations
                began = time.perf_counter()
                for _ in range(repeats):
                    audio = [r.audio for r in backend.infer_batch(rows, seeds=seeds)]
                seconds = (time.perf_counter() - began) / repeats
        except (RuntimeError, NotImplementedError) as error:  # the probe passed: a fault, not the device
            results[name] = {"error": " ".join(str(error).split())[:200]}
            continue
        reference = reference or audio
        results[name] = {"audio_s_per_s": round(sum(map(len, audio)) / 24000 / seconds, 2),
                         "rel_l2_vs_fp32": round(max(map(rel_l2, audio, reference)), 5),
                         "log_spectral_distance_vs_fp32": round(max(map(log_spectral_distance, audio, reference)), 4),
                         "finite": bool(all(np.isfinite(a).all() for a in audio)),
                         "cer": None, "cer_note": "seeded random weights do not speak: CER needs --model-dir"}
        for k in range(wavs):
            write_wav(out / (f"precision-{name}-{k}.wav" if wavs > 1 else f"precision-{name}.wav"), audio[k])
    return {"batch": batch, **results}


def unsupported(device: str, dtype: torch.dtype) -> str | None:
    """Why autocast at dtype cannot run the model's kinds of layer on this device, or None: each is
    tried on a tiny input (oneDNN's bf16 LSTM, for one, needs CPU support that AVX2 alone lacks)."""
    device = torch.device(device)
    lstm = torch.nn.LSTM(8, 8, batch_first=True, bidirectional=True).to(device)
    # One row: rows of unequal length take another kernel, which runs where this one may not.
    probes = {"LSTM": lambda: packed_lstm(lstm, torch.randn(1, 5, 8, device=device), torch.tensor([5])),
              "Conv1d": lambda: torch.nn.Conv1d(8, 8, 3).to(device)(torch.randn(1, 8, 16, device=device)),
              "ConvTranspose1d": lambda: torch.nn.ConvTranspose1d(8, 8, 4, 2).to(device)(torch.randn(1, 8, 16, device=device)),
              "Linear": lambda: torch.nn.Linear(8, 8).to(device)(torch.randn(2, 8, device=device))}
    for layer, probe in probes.items():
        try:
            with torch.no_grad(), torch.autocast(device.type, dtype=dtype):
                probe()
        except (RuntimeError, NotImplementedError) as error:
            return f"{layer} under {dtype} autocast on {device.type}: {' '.join(str(error).split())[:160]}"
    return None


def listen(results: dict, items: list[dict], out: Path, asr: Path) -> dict:
    """The listener's CER of each precision's WAVs (../shared/asr: Whisper base, offline)."""
    python = Path(os.environ.get("ASR_VENV", Path.home() / ".cache" / "asr-venv")) / "bin" / "python"
    for name, result in results.items():
        if not isinstance(result, dict) or "audio_s_per_s" not in result:
            continue
        scores = []
        for k, item in enumerate(items):
            language = item["language"].split("-")[0]
            heard = subprocess.run([str(python), str(asr / "transcribe.py"), str(out / f"precision-{name}-{k}.wav"),
                                    "--lang", language], capture_output=True, text=True, check=True).stdout.strip()
            scored = subprocess.run([sys.executable, str(asr / "cer.py"), item["text"], heard, "--lang", language],
                                    capture_output=True, text=True, check=True).stdout
            scores.append(float(scored.strip().splitlines()[-1].split()[-1]))
        result |= {"cer": round(statistics.mean(scores), 4), "cer_note": f"mean over {len(scores)} sentences, trained weights"}
    return results


def log_spectral_distance(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) != len(b) or len(a) < 512:
        return float("inf") if len(a) != len(b) else 0.0
    spectra = [np.log(np.abs(np.fft.rfft(x[: len(x) // 512 * 512].reshape(-1, 512), axis=1)) + 1e-5) for x in (a, b)]
    return float(np.mean(np.abs(spectra[0] - spectra[1])))


def write_wav(path: Path, audio: np.ndarray) -> None:
    import wave

    samples = (np.clip(np.nan_to_num(audio), -1, 1) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1), wav.setsampwidth(2), wav.setframerate(24000)
        wav.writeframes(samples.tobytes())


def peak_memory_mb(device: str) -> dict:
    if device == "cuda":
        return {"device_mb": round(torch.cuda.max_memory_allocated() / 2**20), "what": "torch.cuda.max_memory_allocated"}
    return {"device_mb": None, "process_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "what": "no GPU: the process's peak RSS instead"}


def table(report: dict) -> str:
    f = report["figures"]
    lines = [f"gpu_check on {report['device_name']} (torch {report['torch']}, {'tiny' if report['tiny'] else 'full'})",
             f"parity {f['parity']['compared']}: durations equal {f['parity']['durations_equal']}, "
             f"audio rel L2 {f['parity']['audio_rel_l2_max']:.2e} (<= {f['parity']['tolerance_rel_l2']:g})",
             f"batched vs batch 1 ({f['batched']['batch']} rows): durations equal {f['batched']['durations_equal']}, "
             f"audio rel L2 {f['batched']['audio_rel_l2_max']:.2e}",
             "batch  audio-s/s  run p50 ms  run p95 ms  mean batch  padding"]
    lines += [f"{r['batch']:>5}  {r['audio_s_per_s']:>9.1f}  {r['run_p50_ms']:>10.1f}  {r['run_p95_ms']:>10.1f}  "
              f"{r['mean_batch']:>10.1f}  {r['padding_share']:>7.0%}" for r in f["throughput"]]
    lines += ["sessions  TTFA p50 ms  TTFA p95 ms  audio-s/s  responses"]
    lines += [f"{r['sessions']:>8}  {r['ttfa_p50_ms']:>11.1f}  {r['ttfa_p95_ms']:>11.1f}  {r['audio_s_per_s']:>9.1f}  "
              f"{r['responses']:>9}" for r in f["ttfa"]]
    lines += [f"peak memory: {f['memory']}"]
    lines += [f"{name}: {value}" for name, value in f["precision"].items() if name != "batch"]
    lines += [f"targets: {TARGETS}"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=["cuda", "cpu"])
    parser.add_argument("--tiny", action="store_true", help="two items, batches 1-2, 1-2 sessions: the suite's run")
    parser.add_argument("--inputs", type=Path, default=REPO / "scripts" / "gpu_check_inputs.json")
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "gpu-check")
    parser.add_argument("--seconds", type=float, help="per session count (default 20, tiny 0.5)")
    parser.add_argument("--record", type=Path, help="record the inputs from --model-dir's real model, then stop")
    parser.add_argument("--model-dir", type=Path, default=REPO / ".cache" / "model-dir")
    parser.add_argument("--listen", action="store_true",
                        help="the precision figures only, on --model-dir's trained weights, with the listener's CER")
    parser.add_argument("--asr", type=Path, default=REPO.parent / "shared" / "asr", help="../shared/asr")
    parser.add_argument("--skip", nargs="*", default=[], choices=["fp16", "bf16"], help="precisions to leave out")
    args = parser.parse_args()
    if args.record:
        record(args.record, args.model_dir)
        return 0
    if args.listen:
        return listen_run(args)
    if args.device == "cuda":  # true fp32 for the parity figures (TF32 would round the vocoder's phase)
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    inputs = load_inputs(args.inputs, args.tiny)
    items = inputs["items"]
    batches = [1, 2] if args.tiny else [1, 2, 4, 8, 16, 32, 64]
    sessions = [1, 2] if args.tiny else [1, 10, 50]
    args.out.mkdir(parents=True, exist_ok=True)
    cpu_model = seeded_model(inputs["config"])
    model = seeded_model(inputs["config"]).to(args.device)
    backend = SeededBackend(model, {tuple(i["ids"]): i["durations"] for i in items}, max_batch=max(batches))
    figures = {"parity": parity(cpu_model, model, items[:4], 20.0 if args.tiny else 3.0),
               "batched": batched_equals_single(backend, items[:8])}
    figures["throughput"] = throughput(backend, items, batches, 1 if args.tiny else 4)
    profile = {r["batch"]: r["engine_s_per_audio_s"] for r in figures["throughput"]}
    figures["ttfa"] = [sessions_ttfa(backend, items, n, profile, args.seconds or (0.5 if args.tiny else 20))
                       for n in sessions]
    slow = ("fp16",) if args.tiny and args.device == "cpu" else ()  # CPU half precision: 0.06 audio-s/s
    figures["precision"] = precision(backend, items, 2 if args.tiny else 16, 1 if args.tiny else 3, args.out, slow)
    figures["memory"] = peak_memory_mb(args.device)
    report = {"benchmark": "gpu-check", "device": args.device, "tiny": args.tiny, "torch": torch.__version__,
              "device_name": torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or "cpu",
              "targets": TARGETS, "items": len(items), "figures": figures}
    (args.out / "gpu-check.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "gpu-check.txt").write_text(table(report) + "\n")
    print(table(report))
    try:
        from plots import save_plot

        save_plot(args.out / "gpu-check.json", report)
    except ImportError as error:  # matplotlib missing: the JSON and the table are the record
        print(f"no plot: {error}")
    return 0 if figures["parity"]["passed"] and figures["batched"]["passed"] else 1


def listen_run(args) -> int:
    """fp16/bf16 against fp32 on trained weights, every recorded sentence once, scored by the listener."""
    items = load_inputs(args.inputs)["items"]
    model = trained_model(args.model_dir).to(args.device)
    backend = SeededBackend(model, {tuple(i["ids"]): i["durations"] for i in items})  # the recorded = its own
    args.out.mkdir(parents=True, exist_ok=True)
    results = precision(backend, items, len(items), 1, args.out, tuple(args.skip), wavs=len(items))
    report = {"benchmark": "gpu-check-precision", "device": args.device, "torch": torch.__version__,
              "weights": str(args.model_dir), "precision": listen(results, items, args.out, args.asr)}
    (args.out / "gpu-check-precision.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["precision"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
