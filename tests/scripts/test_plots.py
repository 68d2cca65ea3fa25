"""scripts/plots.py: each benchmark's JSON becomes a PNG beside it, drawing the JSON's figures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from plots import (PLOTS, kind_of, plot_bench, plot_bench_overload, plot_bench_peers,  # noqa: E402
                   plot_bench_scaling, plot_bench_windows, save_plot)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

BENCH = {
    "benchmark": "bench",
    "series": [
        {"text": "short", "characters": 6, "runs": 3, "ttfa_p50_ms": 507, "ttfa_p95_ms": 516, "overhead_p50_ms": 4.3,
         "overhead_p95_ms": 8.2, "rtf": 0.29, "audio_s_per_response": 1.75, "ttfa_ms": [500, 507, 516]},
        {"text": "five-sentences", "characters": 118, "runs": 3, "ttfa_p50_ms": 777, "ttfa_p95_ms": 840,
         "overhead_p50_ms": 6.2, "overhead_p95_ms": 6.5, "rtf": 0.29, "audio_s_per_response": 23.5,
         "ttfa_ms": [760, 777, 840]},
    ],
    "throughput": [
        {"concurrency": 1, "audio_seconds_per_second": 3.32, "ttfa_p50_ms": 788, "ttfa_max_ms": 788},
        {"concurrency": 2, "audio_seconds_per_second": 2.76, "ttfa_p50_ms": 1531, "ttfa_max_ms": 2039},
    ],
}
OVERLOAD = {
    "benchmark": "bench-overload",
    "capacity": {"max_syntheses": 2, "max_sessions": 8},
    "phases": [
        {"load": "1x", "clients": 2, "requests": 11, "admitted": 11, "shed": 0, "shed_rate": 0.0, "admitted_p50_ms": 4165,
         "admitted_p95_ms": 4206, "shed_p95_ms": None, "admitted_per_s": 0.48, "audio_s_per_s": 2.66, "ping_p95_ms": 7.3},
        {"load": "2x", "clients": 4, "requests": 51, "admitted": 11, "shed": 40, "shed_rate": 0.78, "admitted_p50_ms": 4177,
         "admitted_p95_ms": 4287, "shed_p95_ms": 11.5, "admitted_per_s": 0.48, "audio_s_per_s": 2.65, "ping_p95_ms": 8.0},
    ],
}

SCALING = {
    "benchmark": "bench-scaling", "engine": "onnx", "device": "cpu", "max_batch": 1, "text_chars": 118,
    "levels": [
        {"sessions": 1, "audio_s_per_s": 3.3, "ttfa_p50_ms": 780, "ttfa_p95_ms": 800},
        {"sessions": 2, "audio_s_per_s": 2.8, "ttfa_p50_ms": 1500, "ttfa_p95_ms": 2000},
    ],
}


def bar_heights(axis, color: str) -> list[float]:
    from matplotlib.colors import to_hex

    return [bar.get_height() for bar in axis.patches if to_hex(bar.get_facecolor()) == color]


def test_the_bench_plot_draws_the_jsons_figures():
    figure = plot_bench(BENCH)
    ttfa, scaling, latency = figure.axes
    assert bar_heights(ttfa, "#2b6cb0") == [507, 777] and bar_heights(ttfa, "#dd6b20") == [516, 840]
    assert [list(line.get_ydata()) for line in scaling.lines] == [[3.32, 2.76]]
    assert [list(line.get_ydata()) for line in latency.lines] == [[788, 1531], [788, 2039]]


def test_the_bench_plot_breaks_first_audio_down_beside_the_engine_floor():
    phases = {"g2p": 10, "front": 30, "decode": 150, "queued": 1, "output": 2, "encoding": 3, "transport": 4}
    series = [s | {"floor_p50_ms": 500 + 300 * i, "ttfa_over_floor": 0.4, "first_audio_ms": phases}
              for i, s in enumerate(BENCH["series"])]
    ttfa, breakdown, scaling, latency = plot_bench(BENCH | {"series": series}).axes
    assert bar_heights(breakdown, "#2b6cb0") == [10, 10] and bar_heights(breakdown, "#dd6b20") == [150, 150]
    assert bar_heights(breakdown, "#ffffff") == [500, 800], "the engine floor beside each text"


def test_the_peers_plot_draws_each_systems_first_audio_and_total_time():
    rows = [{"text": text, "system": system, "ttfa_ms": ttfa, "total_s": total, "runs": 3}
            for text, system, ttfa, total in [("short", "server", 200, 0.6), ("short", "peer", 500, 0.5),
                                              ("ten", "server", 300, 12.0), ("ten", "peer", 900, 13.0)]]
    ttfa, total = plot_bench_peers({"benchmark": "bench-peers", "engine": "onnx", "threads": 2, "rows": rows}).axes
    assert bar_heights(ttfa, "#2b6cb0") == [200, 300] and bar_heights(ttfa, "#a0aec0") == [500, 900]
    assert bar_heights(total, "#2b6cb0") == [0.6, 12.0] and bar_heights(total, "#a0aec0") == [0.5, 13.0]


def test_the_overload_plot_stacks_admitted_and_shed_replies():
    counts, latency = plot_bench_overload(OVERLOAD).axes
    assert bar_heights(counts, "#2f855a") == [11, 11] and bar_heights(counts, "#c53030") == [0, 40]
    assert bar_heights(latency, "#c53030") == [0, 11.5]  # no 503 at 1x: an empty bar, not a made-up one


def test_the_scaling_plot_draws_delivered_against_needed_audio():
    throughput, ttfa = plot_bench_scaling(SCALING).axes
    assert [list(line.get_ydata()) for line in throughput.lines] == [[3.3, 2.8], [1, 2]]
    assert [list(line.get_ydata()) for line in ttfa.lines] == [[780, 1500], [800, 2000]]


@pytest.mark.parametrize("data", [BENCH, OVERLOAD, SCALING], ids=["bench", "bench-overload", "bench-scaling"])
def test_save_plot_writes_a_png_beside_the_json(tmp_path, data):
    path = tmp_path / f"{data['benchmark']}.json"
    path.write_text(json.dumps({k: v for k, v in data.items() if k != "benchmark"}))  # as older files were
    assert kind_of(json.loads(path.read_text())) == data["benchmark"]
    png = save_plot(path)
    assert png == path.with_suffix(".png") and png.read_bytes().startswith(PNG_MAGIC)


def test_an_unknown_json_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown benchmark JSON"):
        kind_of({"something": 1})
    assert set(PLOTS) == {"bench", "bench-agent", "bench-overload", "bench-peers", "bench-scaling", "bench-startup",
                          "bench-windows", "gpu-check", "load-stage"}


LOAD = {"benchmark": "load-stage", "target": "SageMaker endpoint e (us-east-1)", "passed": False,
        "budget": {"ttfa_p95_ms": 1000, "ttfa_p99_ms": 2000, "shed_free_sessions": 10},
        "levels": [{"sessions": 1, "ttfa_p50_ms": 300, "ttfa_p95_ms": 350, "ttfa_p99_ms": 360, "audio_s_per_s": 0.6,
                    "sheds": 0, "errors": 0},
                   {"sessions": 50, "ttfa_p50_ms": None, "ttfa_p95_ms": None, "ttfa_p99_ms": None,
                    "audio_s_per_s": 0.0, "sheds": 7, "errors": 2}]}


def test_the_load_stage_plot_draws_the_percentiles_against_the_budget_and_counts_what_went_wrong(tmp_path):
    ttfa, throughput, outcomes = PLOTS["load-stage"](LOAD).axes
    lines = {line.get_label(): list(line.get_ydata()) for line in ttfa.lines}
    assert lines["TTFA p95"][0] == 350 and str(lines["TTFA p95"][1]) == "nan"  # no turn answered: no point
    assert lines["p95 budget 1000 ms"] == [1000, 1000] and lines["p99 budget 2000 ms"] == [2000, 2000]
    assert [list(line.get_ydata()) for line in throughput.lines] == [[0.6, 0.0]]
    assert bar_heights(outcomes, "#a0aec0") == [0, 7] and bar_heights(outcomes, "#c53030") == [0, 2]
    assert "BUDGET MISSED" in ttfa.figure.get_suptitle()
    png = save_plot(tmp_path / "load.json", LOAD, png=tmp_path / "elsewhere.png")
    assert png == tmp_path / "elsewhere.png" and png.read_bytes().startswith(PNG_MAGIC)


def test_the_windows_plot_draws_each_engines_cer_and_spectral_distance():
    summary = {engine: {"cer_whole": 0.05 + i, "cer_windowed": 0.06 + i, "cer_one_frame_less": 0.07 + i,
                        "lsd_p50": 0.6 + i, "lsd_one_frame_less_p50": 0.4 + i} for i, engine in enumerate(["onnx", "torch"])}
    cer, lsd = plot_bench_windows({"benchmark": "bench-windows", "summary": summary}).axes
    assert bar_heights(cer, "#a0aec0") == [0.05, 1.05] and bar_heights(cer, "#2b6cb0") == [0.06, 1.06]
    assert bar_heights(lsd, "#2b6cb0") == [0.6, 1.6] and bar_heights(lsd, "#dd6b20") == [0.4, 1.4]
    with_span = {engine: {**figures, "cer_speech_span": 0.08 + i, "lsd_speech_span_p50": 0.5 + i}
                 for i, (engine, figures) in enumerate(summary.items())}
    cer, lsd = plot_bench_windows({"benchmark": "bench-windows", "summary": with_span}).axes
    assert bar_heights(cer, "#2f855a") == [0.08, 1.08] and bar_heights(lsd, "#2f855a") == [0.5, 1.5]
    assert bar_heights(cer, "#2b6cb0") == [0.06, 1.06], "the other bars as before"
    with_again = {engine: {**figures, "cer_whole_again": 0.09 + i, "lsd_whole_again_p50": 0.3 + i}
                  for i, (engine, figures) in enumerate(with_span.items())}
    cer, lsd = plot_bench_windows({"benchmark": "bench-windows", "summary": with_again}).axes
    assert bar_heights(cer, "#6b46c1") == [0.09, 1.09] and bar_heights(lsd, "#6b46c1") == [0.3, 1.3]
    assert bar_heights(cer, "#2f855a") == [0.08, 1.08], "the other bars as before"
    brief = {engine: {"cer_whole": 0.05 + i, "cer_windowed": 0.06 + i, "cer_windowed_own_statistics": 0.1 + i,
                      "cer_whole_again": 0.09 + i, "lsd_p50": 0.6 + i, "lsd_whole_again_p50": 0.3 + i}
             for i, engine in enumerate(["onnx", "torch"])}  # a --brief run, the windows' own statistics beside
    cer, lsd = plot_bench_windows({"benchmark": "bench-windows", "summary": brief}).axes
    assert bar_heights(cer, "#c53030") == [0.1, 1.1] and bar_heights(cer, "#2b6cb0") == [0.06, 1.06]
    assert bar_heights(cer, "#dd6b20") == [] and bar_heights(lsd, "#dd6b20") == [], "no decode of one frame less"
