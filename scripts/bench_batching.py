#!/usr/bin/env python3
"""Audio seconds per second of the batched PyTorch forward at several batch sizes.

The same pieces (seeded random phoneme ids of the given lengths, voices in turn) are run
in groups of each batch size; the figure is their total audio over the total wall time.

    python scripts/bench_batching.py [--model-dir .cache/model-dir] [--device cpu]
        [--batch-sizes 1 2 4 8] [--lengths 40 60 ...] [--json reports/bench-batching.json]

`measure()` is the reusable part (the scaling benchmark can call it with its own pieces).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "container")]

import numpy as np  # noqa: E402
import torch  # noqa: E402

from tts_server.engine.batched_forward import forward_batch  # noqa: E402


def measure(model, items, batch_sizes, repeats: int = 1) -> list[dict]:
    """-> per batch size: audio seconds, wall seconds, audio-s/s, mean padding share of the frames."""
    forward_batch(model, items[:1])  # warm-up: first-call allocations
    results = []
    for size in batch_sizes:
        audio = wall = padded = real = 0.0
        for _ in range(repeats):
            for start in range(0, len(items), size):
                group = items[start : start + size]
                began = time.perf_counter()
                rows = forward_batch(model, group)
                wall += time.perf_counter() - began
                lengths = [len(samples) for samples, _ in rows]
                audio += sum(lengths) / 24000
                real += sum(lengths)
                padded += max(lengths) * len(lengths)
        results.append({
            "batch_size": size,
            "audio_s": round(audio, 2),
            "wall_s": round(wall, 2),
            "audio_s_per_s": round(audio / wall, 2),
            "padding_share": round(1 - real / padded, 3),
        })
    return results


def pieces(backend, lengths, seed: int = 0):
    rng = np.random.default_rng(seed)
    vocab = sorted(set(backend.vocab.values()))
    names = sorted(backend.voices)
    return [
        ([int(i) for i in rng.choice(vocab, count)], backend.voices[names[k % len(names)]][count], 1.0)
        for k, count in enumerate(lengths)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=REPO / ".cache" / "model-dir")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 60, 30, 50, 45, 35, 55, 25])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from tts_server.engine.model_dir import ModelDir
    from tts_server.engine.torch_backend import TorchBackend

    if args.threads:
        torch.set_num_threads(args.threads)
    backend = TorchBackend(ModelDir(args.model_dir), device=args.device)
    results = measure(backend.model, pieces(backend, args.lengths), args.batch_sizes, args.repeats)
    for row in results:
        print(f"batch {row['batch_size']:>2}: {row['audio_s_per_s']:7.2f} audio-s/s "
              f"({row['audio_s']} s of audio in {row['wall_s']} s, padding {row['padding_share']:.0%})")
    report = {"device": backend.device, "threads": torch.get_num_threads(), "lengths": args.lengths,
              "results": results}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
