#!/usr/bin/env python3
"""Pictures of the benchmarks' JSON: one function per plot, shared by every benchmark.

Each benchmark calls `save_plot(json_path, data)` after writing its JSON, which writes the
PNG next to it (bench.json -> bench.png). `make plots` runs this file on the committed
JSONs in docs/benchmarks/ to regenerate the benchmarks' pictures (docs/benchmarks.md):

    .venv/bin/python scripts/plots.py docs/benchmarks/*.json

A new benchmark adds a function `plot_<name>(data) -> Figure` and an entry in PLOTS, and
writes "benchmark": "<name>" in its JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: no display, no GUI toolkit
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

BLUE, ORANGE, GREEN, RED, GREY, PURPLE = "#2b6cb0", "#dd6b20", "#2f855a", "#c53030", "#a0aec0", "#6b46c1"


def _figure(columns: int, title: str, width: float = 5.2, height: float = 3.6) -> tuple[Figure, list]:
    figure, axes = plt.subplots(1, columns, figsize=(width * columns, height), squeeze=False, layout="constrained")
    figure.suptitle(title, fontsize=11)
    for axis in axes[0]:
        axis.grid(axis="y", alpha=0.3)
        axis.spines[["top", "right"]].set_visible(False)
    return figure, list(axes[0])


def _label_bars(axis, bars, fmt: str, **options) -> None:
    labels = [fmt.format(bar.get_height()) if bar.get_height() else "" for bar in bars]
    axis.bar_label(bars, labels=labels, fontsize=8, padding=2, **options)


def plot_bench(data: dict) -> Figure:
    """make bench: TTFA per text (p50, p95, every run), where first audio's time goes against the
    engine floor (when measured), and throughput against concurrency."""
    series = data["series"]
    broken_down = all("first_audio_ms" in s for s in series)
    title = f"make bench ({data.get('engine', 'engine')}): time to first audio and throughput"
    figure, axes = _figure(3 if broken_down else 2, title)
    ttfa, scaling = axes[0], axes[-1]
    if broken_down:
        _first_audio_breakdown(axes[1], series)
    names = [f"{s['text']}\n({s['characters']} chars, RTF {s['rtf']:.2f})" for s in series]
    x = range(len(series))
    _label_bars(ttfa, ttfa.bar([i - 0.2 for i in x], [s["ttfa_p50_ms"] for s in series], 0.4, color=BLUE, label="p50"), "{:.0f}")
    _label_bars(ttfa, ttfa.bar([i + 0.2 for i in x], [s["ttfa_p95_ms"] for s in series], 0.4, color=ORANGE, label="p95"), "{:.0f}")
    for i, s in enumerate(series):
        runs = s.get("ttfa_ms", [])
        ttfa.scatter([i] * len(runs), runs, s=10, color="black", alpha=0.5, zorder=3, label="each run" if i == 0 and runs else None)
    ttfa.set_xticks(list(x), names, fontsize=8)
    ttfa.set_ylabel("time to first audio (ms)")
    ttfa.legend(fontsize=8)

    rows = data["throughput"]
    sessions = [r["concurrency"] for r in rows]
    scaling.plot(sessions, [r["audio_seconds_per_second"] for r in rows], "o-", color=GREEN, label="audio s per s")
    scaling.set_xlabel("concurrent sessions")
    scaling.set_ylabel("audio seconds per second", color=GREEN)
    scaling.set_xticks(sessions)
    scaling.set_ylim(bottom=0)
    latency = scaling.twinx()
    latency.plot(sessions, [r["ttfa_p50_ms"] for r in rows], "s--", color=BLUE, label="TTFA p50")
    latency.plot(sessions, [r["ttfa_max_ms"] for r in rows], "^--", color=ORANGE, label="TTFA max")
    latency.set_ylabel("time to first audio (ms)")
    latency.set_ylim(bottom=0)
    latency.spines[["top"]].set_visible(False)
    handles = scaling.get_legend_handles_labels()[0] + latency.get_legend_handles_labels()[0]
    scaling.legend(handles, [h.get_label() for h in handles], fontsize=8, loc="lower right")
    return figure


def _first_audio_breakdown(axis, series: list[dict]) -> None:
    """Stacked medians of where first audio's time goes, per text, and the engine floor beside them."""
    colours = [BLUE, GREEN, ORANGE, GREY, "#805ad5", "#d69e2e", RED]
    x = list(range(len(series)))
    bottoms = [0.0] * len(series)
    for colour, name in zip(colours, series[0]["first_audio_ms"], strict=False):
        heights = [s["first_audio_ms"][name] for s in series]
        axis.bar([i - 0.2 for i in x], heights, 0.4, bottom=bottoms, color=colour, label=name)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    floors = axis.bar([i + 0.2 for i in x], [s["floor_p50_ms"] for s in series], 0.4, color="white",
                      edgecolor="black", hatch="//", label="engine floor")
    _label_bars(axis, floors, "{:.0f}")
    for i, s in enumerate(series):
        axis.annotate(f"{s['ttfa_p50_ms']:.0f} ms\n{s['ttfa_over_floor']:.2f}x floor", (i - 0.2, bottoms[i]),
                      ha="center", va="bottom", fontsize=7)
    axis.set_xticks(x, [s["text"] for s in series], fontsize=8)
    axis.set_ylabel("first audio, median (ms)")
    axis.legend(fontsize=7, ncol=2)


def plot_bench_agent(data: dict) -> Figure:
    """make bench-agent: when the LLM writes, when audio starts and ends, bidi against batch."""
    title = (f"make bench-agent: {data['tokens']} tokens at {data['tokens_per_second']:g} tokens/s, "
             f"median of {data['repeats']}; batch starts {data['ttfa_ratio_batch_over_bidi']:.2f}x later")
    figure, (axis,) = _figure(1, title, width=9, height=2.8)
    modes = ["batch", "bidi"]
    for row, mode in enumerate(modes):
        result = data[mode]
        axis.barh(row, data["generation_s"], left=0, height=0.5, color=GREY, label="LLM writing" if row == 0 else None)
        axis.barh(row, result["last_audio_s"] - result["ttfa_s"], left=result["ttfa_s"], height=0.22, color=BLUE,
                  label="audio arriving" if row == 0 else None)
        axis.plot(result["ttfa_s"], row, "D", color=ORANGE, label="first audio" if row == 0 else None)
        axis.annotate(f"first audio {result['ttfa_s']:.2f} s", (result["ttfa_s"], row + 0.3), ha="center", fontsize=8)
        axis.annotate(f"last {result['last_audio_s']:.2f} s", (result["last_audio_s"], row + 0.3), ha="center", fontsize=8)
    axis.set_yticks(range(len(modes)), modes)
    axis.set_ylim(-0.5, len(modes) - 0.2)
    axis.set_xlabel("seconds since the LLM started")
    axis.set_xlim(left=0)
    axis.grid(axis="x", alpha=0.3)
    figure.legend(fontsize=8, loc="outside lower center", ncols=3)
    return figure


def plot_bench_overload(data: dict) -> Figure:
    """make bench-overload: replies admitted and shed per load, and the latencies that matter."""
    capacity = data["capacity"]
    figure, (counts, latency) = _figure(2, f"make bench-overload: capacity {capacity['max_syntheses']} syntheses, "
                                           f"{capacity['max_sessions']} sessions")
    phases = data["phases"]
    labels = [f"{p['load']} ({p['clients']} clients)" for p in phases]
    admitted = counts.bar(labels, [p["admitted"] for p in phases], color=GREEN, label="admitted (200)")
    shed = counts.bar(labels, [p["shed"] for p in phases], bottom=[p["admitted"] for p in phases], color=RED,
                      label="shed (503)")
    _label_bars(counts, admitted, "{:.0f}", label_type="center", color="white")
    counts.bar_label(shed, labels=[f"{p['shed']} shed ({p['shed_rate']:.0%})" if p["shed"] else "" for p in phases],
                     fontsize=8)
    counts.set_ylabel("replies")
    counts.legend(fontsize=8)

    measures = [("admitted_p50_ms", "admitted p50", GREEN), ("admitted_p95_ms", "admitted p95", BLUE),
                ("shed_p95_ms", "503 p95", RED), ("ping_p95_ms", "/ping p95", GREY)]
    width = 0.8 / len(measures)
    for k, (key, name, color) in enumerate(measures):
        values = [p[key] or 0 for p in phases]  # None: no reply of that kind in the phase
        positions = [i - 0.4 + width * (k + 0.5) for i in range(len(phases))]
        _label_bars(latency, latency.bar(positions, values, width, color=color, label=name), "{:.0f}")
    latency.set_yscale("log")
    latency.set_ylim(top=50 * max(p[key] or 1 for p in phases for key, _, _ in measures))  # room for the legend
    latency.set_xticks(range(len(phases)), labels)
    latency.set_ylabel("milliseconds (log)")
    latency.legend(fontsize=8, loc="upper center", ncols=4)
    return figure


def plot_bench_scaling(data: dict) -> Figure:
    """make bench-scaling: delivered audio against what real time needs, and TTFA, per session count."""
    figure, (throughput, ttfa) = _figure(2, f"make bench-scaling: {data['engine']} on {data['device']}, "
                                            f"batch up to {data['max_batch']}")
    levels = data["levels"]
    sessions = [entry["sessions"] for entry in levels]
    throughput.plot(sessions, [e["audio_s_per_s"] for e in levels], "o-", color=GREEN, label="delivered")
    throughput.plot(sessions, sessions, ":", color=GREY, label="needed (real time)")
    throughput.set(xlabel="concurrent sessions", ylabel="audio seconds per second")
    ttfa.plot(sessions, [e["ttfa_p50_ms"] for e in levels], "o-", color=BLUE, label="TTFA p50")
    ttfa.plot(sessions, [e["ttfa_p95_ms"] for e in levels], "s-", color=ORANGE, label="TTFA p95")
    ttfa.set(xlabel="concurrent sessions", ylabel="time to first audio (ms)")
    for axis in (throughput, ttfa):
        axis.set_xscale("log", base=2)
        axis.set_xticks(sessions, [str(n) for n in sessions])
        axis.legend(fontsize=8)
    return figure


def startup_segments(phases: dict[str, float]) -> dict[str, float]:
    """The server's start-up phases with the per-language G2P and per-batch profile runs summed."""
    segments: dict[str, float] = {}
    for name, seconds in phases.items():
        key = "G2P, every language" if name.startswith("G2P ") else "speed profile" if name.startswith("speed profile") else name
        segments[key] = segments.get(key, 0.0) + seconds
    return segments


def plot_bench_startup(data: dict) -> Figure:
    """make bench-startup: where the time from process start to /ping 200 goes, per engine and variant."""
    series = data["series"]
    figure, (axis,) = _figure(1, f"make bench-startup: process start to /ping 200, the server's phases, medians "
                                 f"({data['cpus']} CPUs)", width=10, height=1.6 + 0.6 * len(series))
    palette = [BLUE, ORANGE, GREEN, RED, GREY, "#805ad5", "#d69e2e", "#319795", "#b83280"]
    colors: dict[str, str] = {}
    for row, entry in enumerate(series):
        left = 0.0
        for name, seconds in startup_segments(entry["phases_s"]).items():
            color = colors.setdefault(name, palette[len(colors) % len(palette)])
            axis.barh(row, seconds, left=left, height=0.5, color=color, label=name if row == next(
                r for r, e in enumerate(series) if name in startup_segments(e["phases_s"])) else None)
            left += seconds
        axis.plot(entry["ping_200_s"], row, "k|", markersize=18, label="/ping 200 (measured outside)" if row == 0 else None)
        axis.annotate(f"{entry['ping_200_s']:.1f} s", (entry["ping_200_s"], row + 0.3), fontsize=8)
    axis.set_yticks(range(len(series)), [f"{e['engine']} {e['variant']} ({e.get('repeats', data.get('repeats'))} runs)"
                                         for e in series])
    axis.invert_yaxis()
    axis.set_xlabel("seconds since the process started")
    axis.grid(axis="x", alpha=0.3)
    figure.legend(fontsize=8, loc="outside lower center", ncols=4)
    return figure


def plot_gpu_check(data: dict) -> Figure:
    """scripts/gpu_check.py: throughput per batch size and TTFA per session count against the targets."""
    figures, targets = data["figures"], data["targets"]
    figure, (speed, ttfa) = _figure(2, f"gpu_check on {data['device_name']} ({'tiny' if data['tiny'] else 'full'} run)")
    rows = figures["throughput"]
    speed.plot([r["batch"] for r in rows], [r["audio_s_per_s"] for r in rows], "o-", color=GREEN, label="through the scheduler")
    speed.axhline(targets["audio_s_per_s"], color=RED, linestyle=":", label=f"target {targets['audio_s_per_s']}")
    speed.set(xlabel="batch size", ylabel="audio seconds per second", xscale="log", yscale="log")
    levels = figures["ttfa"]
    ttfa.plot([r["sessions"] for r in levels], [r["ttfa_p50_ms"] for r in levels], "o-", color=BLUE, label="TTFA p50")
    ttfa.plot([r["sessions"] for r in levels], [r["ttfa_p95_ms"] for r in levels], "s-", color=ORANGE, label="TTFA p95")
    ttfa.axhline(targets["ttfa_p95_ms_at_50_sessions"], color=RED, linestyle=":", label="target p95 at 50 sessions")
    ttfa.set(xlabel="concurrent sessions", ylabel="time to first audio (ms)", yscale="log")
    for axis in (speed, ttfa):
        axis.legend(fontsize=8)
    return figure


def plot_bench_peers(data: dict) -> Figure:
    """make bench-peers: the server against kokoro-onnx, time to first audio and total time per text."""
    rows = data["rows"]
    texts = list(dict.fromkeys(r["text"] for r in rows))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    title = (f"make bench-peers: {data['engine']}, {data['threads']} threads, the same weights and phonemes "
             f"(medians of {rows[0]['runs']})")
    figure, (ttfa, total) = _figure(2, title, width=6)
    width = 0.8 / len(systems)
    for k, (system, colour) in enumerate(zip(systems, [BLUE, GREY, ORANGE, GREEN], strict=False)):
        mine = {r["text"]: r for r in rows if r["system"] == system}
        x = [i - 0.4 + width * (k + 0.5) for i in range(len(texts))]
        _label_bars(ttfa, ttfa.bar(x, [mine[t]["ttfa_ms"] for t in texts], width, color=colour, label=system), "{:.0f}")
        _label_bars(total, total.bar(x, [mine[t]["total_s"] for t in texts], width, color=colour, label=system),
                    "{:.1f}")
    for axis, label in ((ttfa, "time to first audio (ms)"), (total, "total time (s)")):
        axis.set_xticks(range(len(texts)), texts, fontsize=8)
        axis.set_ylabel(label)
        axis.legend(fontsize=7)
    ttfa.set_yscale("log")
    return figure


def plot_bench_windows(data: dict) -> Figure:
    """make bench-windows: per engine, the listener's CER and the log-spectral distance of the first
    piece decoded in windows (as served, and with the windows' own statistics) and of its speech
    span alone (as a response's later pieces are decoded), beside the whole decode's, that of the
    whole decode of one frame less and of the whole decode again (its random source drawn anew)."""
    summary = data["summary"]
    engines = list(summary)
    figure, (cer, lsd) = _figure(2, "make bench-windows: a first piece in windows against the whole decode", width=5)
    x = range(len(engines))
    present = summary[engines[0]]  # older JSONs, and --brief runs, lack some variants
    groups = [
        (cer, "{:.3f}", [("cer_whole", "whole", GREY), ("cer_windowed", "in windows", BLUE),
                         ("cer_windowed_own_statistics", "in windows, own statistics", RED),
                         ("cer_one_frame_less", "whole, one frame less", ORANGE),
                         ("cer_whole_again", "whole again", PURPLE), ("cer_speech_span", "speech span", GREEN)]),
        (lsd, "{:.2f}", [("lsd_p50", "in windows", BLUE), ("lsd_one_frame_less_p50", "whole, one frame less", ORANGE),
                         ("lsd_whole_again_p50", "whole again", PURPLE),
                         ("lsd_speech_span_p50", "speech span", GREEN)]),
    ]
    groups = [(axis, fmt, [bar for bar in bars if bar[0] in present]) for axis, fmt, bars in groups]
    for axis, fmt, bars in groups:
        width = 0.8 / len(bars)
        for k, (key, label, colour) in enumerate(bars):
            _label_bars(axis, axis.bar([i - 0.4 + width * (k + 0.5) for i in x], [summary[e][key] for e in engines],
                                       width, color=colour, label=label), fmt)
    for axis, label in ((cer, "listener's CER over the corpus"), (lsd, "log-spectral distance from the whole, p50")):
        axis.set_xticks(list(x), engines, fontsize=8)
        axis.set_ylabel(label)
        axis.legend(fontsize=7)
    return figure


def plot_load_stage(data: dict) -> Figure:
    """scripts/load_stage.py: TTFA percentiles against the budget, delivered audio, sheds and errors."""
    budget, levels = data["budget"], data["levels"]
    verdict = "within budget" if data["passed"] else "BUDGET MISSED"
    figure, (ttfa, throughput, outcomes) = _figure(3, f"load stage: {data['target']} ({verdict})", width=4.6)
    sessions = [level["sessions"] for level in levels]
    for key, name, color, marker in (("ttfa_p50_ms", "p50", BLUE, "o-"), ("ttfa_p95_ms", "p95", ORANGE, "s-"),
                                     ("ttfa_p99_ms", "p99", RED, "^-")):
        values = [float("nan") if level[key] is None else level[key] for level in levels]  # None: no turn answered
        ttfa.plot(sessions, values, marker, color=color, label=f"TTFA {name}")
    ttfa.axhline(budget["ttfa_p95_ms"], color=ORANGE, linestyle=":", label=f"p95 budget {budget['ttfa_p95_ms']:g} ms")
    ttfa.axhline(budget["ttfa_p99_ms"], color=RED, linestyle=":", label=f"p99 budget {budget['ttfa_p99_ms']:g} ms")
    ttfa.set(xlabel="concurrent sessions", ylabel="time to first audio (ms)")
    throughput.plot(sessions, [level["audio_s_per_s"] for level in levels], "o-", color=GREEN, label="delivered")
    throughput.set(xlabel="concurrent sessions", ylabel="audio seconds per second")
    x = range(len(levels))
    _label_bars(outcomes, outcomes.bar([i - 0.2 for i in x], [level["sheds"] for level in levels], 0.4, color=GREY,
                                       label="sheds (open refused)"), "{:.0f}")
    _label_bars(outcomes, outcomes.bar([i + 0.2 for i in x], [level["errors"] for level in levels], 0.4, color=RED,
                                       label="errors"), "{:.0f}")
    outcomes.set_xticks(list(x), [f"{n} sessions" for n in sessions], fontsize=8)
    outcomes.set_ylabel("count")
    for axis in (ttfa, throughput, outcomes):
        axis.legend(fontsize=7)
    for axis in (ttfa, throughput):
        axis.set_xticks(sessions, [str(n) for n in sessions])
        axis.set_ylim(bottom=0)
    return figure


def line_plot(title: str, x_label: str, y_label: str, x: list, lines: dict[str, list]) -> Figure:
    """A generic curve (e.g. a scaling sweep): one line per name, sharing x."""
    figure, (axis,) = _figure(1, title, width=7)
    for name, values in lines.items():
        axis.plot(x, values, "o-", label=name)
    axis.set_xlabel(x_label)
    axis.set_ylabel(y_label)
    axis.set_ylim(bottom=0)
    axis.legend(fontsize=8)
    return figure


PLOTS = {"bench": plot_bench, "bench-agent": plot_bench_agent, "bench-overload": plot_bench_overload,
         "bench-peers": plot_bench_peers, "bench-scaling": plot_bench_scaling, "bench-startup": plot_bench_startup,
         "bench-windows": plot_bench_windows, "gpu-check": plot_gpu_check, "load-stage": plot_load_stage}


def kind_of(data: dict) -> str:
    """The benchmark a JSON came from (older files carry no "benchmark" field)."""
    if "benchmark" in data:
        return data["benchmark"]
    if "series" in data:
        return "bench"
    if "ttfa_ratio_batch_over_bidi" in data:
        return "bench-agent"
    if "phases" in data:
        return "bench-overload"
    if "levels" in data:
        return "bench-scaling"
    raise ValueError(f"unknown benchmark JSON (keys: {sorted(data)})")


def save_plot(json_path: Path, data: dict | None = None, png: Path | None = None) -> Path:
    """Writes the PNG for a benchmark's JSON (next to it unless `png` says where); returns its path."""
    data = data if data is not None else json.loads(Path(json_path).read_text())
    figure = PLOTS[kind_of(data)](data)
    png = Path(png) if png else Path(json_path).with_suffix(".png")
    figure.savefig(png, dpi=110)
    plt.close(figure)
    return png


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path in argv:
        print(f"{path} -> {save_plot(Path(path))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
