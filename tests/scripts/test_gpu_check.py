"""scripts/gpu_check.py, the one GPU run, at its tiny size on the CPU: it runs end to end and its
output names every figure the GPU run fills (../shared/GPU.md), so it cannot rot between GPU runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-check")
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_check.py"), "--device", "cpu", "--tiny",
                          "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out, json.loads((out / "gpu-check.json").read_text()), run.stdout


def test_every_gpu_figure_is_named_and_filled(tiny_run):
    _, report, _ = tiny_run
    figures = report["figures"]
    assert set(figures) == {"parity", "batched", "throughput", "ttfa", "memory", "precision"}
    assert report["targets"] == {"audio_s_per_s": 1000, "ttfa_p95_ms_at_50_sessions": 150}
    assert [row["batch"] for row in figures["throughput"]] == [1, 2]
    assert all(row["audio_s_per_s"] > 0 and row["run_p95_ms"] >= row["run_p50_ms"] > 0 for row in figures["throughput"])
    assert [row["sessions"] for row in figures["ttfa"]] == [1, 2]
    assert all(row["responses"] >= row["sessions"] and row["ttfa_p95_ms"] >= row["ttfa_p50_ms"] > 0
               for row in figures["ttfa"])
    assert set(figures["precision"]) == {"batch", "fp32", "fp16", "bf16"}
    assert figures["precision"]["fp32"]["rel_l2_vs_fp32"] == 0.0 and figures["precision"]["fp32"]["finite"]
    bf16 = figures["precision"]["bf16"]
    if runs_lstm_under_autocast(torch.bfloat16):
        assert "cer" in bf16 and bf16["finite"], bf16
    else:  # oneDNN's bf16 LSTM needs CPU support that an AVX2-only CPU lacks
        assert bf16["supported"] is False and bf16["reason"].startswith("LSTM under torch.bfloat16"), bf16
    assert figures["memory"]["process_rss_mb"] > 0  # no GPU here: device_mb is the GPU run's


def runs_lstm_under_autocast(dtype) -> bool:
    """This test's own probe of the CPU, apart from the script's."""
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
            torch.nn.LSTM(4, 4, batch_first=True)(torch.randn(1, 3, 4))
    except RuntimeError:
        return False
    return True


def test_make_test_avx2_runs_the_figure_test_as_an_avx2_only_cpu_would():
    """`make test-avx2` (the Makefile's AVX2_ONLY) makes this CPU refuse the bf16 LSTM as one
    without AVX-512 does, so the figure test above takes its other branch there."""
    line = next(line for line in (REPO / "Makefile").read_text().splitlines() if line.startswith("AVX2_ONLY :="))
    limits = dict(pair.split("=", 1) for pair in line.split(":=", 1)[1].split())
    probe = "import torch, test_gpu_check as t; print(t.runs_lstm_under_autocast(torch.bfloat16))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).parent, env=os.environ | limits)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == "False", run.stdout


def test_the_model_paths_agree_and_the_recorded_durations_hold(tiny_run):
    _, report, _ = tiny_run
    parity, batched = report["figures"]["parity"], report["figures"]["batched"]
    assert parity["compared"] == "cpu vs cpu" and parity["passed"]
    # The batched forward equals batch 1 row by row, and the forced durations are the recorded ones,
    # so each item carries exactly the audio (and the compute) the real model's would.
    assert batched["passed"] and batched["durations_as_recorded"] and batched["batch"] == 2
    assert batched["audio_rel_l2_max"] <= batched["tolerance_rel_l2"]


def test_the_table_and_the_plot_are_written(tiny_run):
    out, _, stdout = tiny_run
    table = (out / "gpu-check.txt").read_text()
    assert table.strip() in stdout
    for name in ("parity", "batched vs batch 1", "audio-s/s", "TTFA p95", "peak memory", "fp16", "bf16", "targets"):
        assert name in table, name
    assert (out / "gpu-check.png").read_bytes().startswith(PNG_MAGIC)
    assert (out / "precision-fp32.wav").stat().st_size > 44


def test_the_recorded_inputs_travel_small_and_carry_the_model_config():
    inputs = json.loads((REPO / "scripts" / "gpu_check_inputs.json").read_text())
    assert (REPO / "scripts" / "gpu_check_inputs.json").stat().st_size < 200_000  # the GPU box takes ~64 MiB
    assert inputs["config"]["istftnet"] and len(inputs["config"]["vocab"]) > 100
    for item in inputs["items"]:
        assert len(item["durations"]) == len(item["ids"]) + 2 and len(item["style"]) == 256
        assert set(item["ids"]) <= set(inputs["config"]["vocab"].values())
