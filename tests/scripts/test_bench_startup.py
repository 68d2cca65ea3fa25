"""scripts/bench_startup.py: a real cold start of the embedded engine, timed from outside, with the
phases the server reports in /ping (startup_s) and the first requests after it; and its plot."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from bench_startup import FIRST_REQUESTS, cold_start, parse_variant, served, summary  # noqa: E402
from plots import plot_bench_startup, startup_segments  # noqa: E402
from running_server import free_port  # noqa: E402

from tts_server.engine.languages import CODES  # noqa: E402


def test_a_cold_start_reports_each_phase_within_the_time_to_ping_200():
    result = cold_start("onnx", None, free_port(), {}, timeout=300)
    phases = result["phases_s"]
    assert list(phases)[:2] == ["interpreter and server imports", "weights"]
    assert {f"G2P {code}" for code in CODES} <= set(phases)
    assert "first synthesis" in phases and not [name for name in phases if name.startswith("speed profile")]
    assert all(seconds >= 0 for seconds in phases.values())
    # The server's own phases happen between the process's start and /ping 200, one after another.
    assert 0 < result["listening_s"] <= result["ping_200_s"]
    assert sum(phases.values()) <= result["ping_200_s"] + 0.5
    assert set(result["first_request_ms"]) == set(FIRST_REQUESTS) and min(result["first_request_ms"].values()) > 0


def test_the_summary_takes_medians_and_the_plot_sums_languages_and_profile_runs():
    runs = [{"listening_s": s, "ping_200_s": 10 * s, "first_request_ms": {"ja": 100 * s, "en-US": 200 * s},
             "phases_s": {"weights": s, "G2P ja": 1.0, "G2P en-US": 2.0, "speed profile, batch 1": s,
                          "speed profile, batch 2": 1.0}} for s in (1.0, 3.0, 2.0)]
    series = summary(runs)
    assert series["ping_200_s"] == 20.0 and series["phases_s"]["weights"] == 2.0
    assert series["first_request_ms"] == {"ja": 200, "en-US": 400}
    assert startup_segments(series["phases_s"]) == {"weights": 2.0, "G2P, every language": 3.0, "speed profile": 3.0}
    figure = plot_bench_startup({"cpus": 2, "series": [{"engine": "onnx", "variant": "after", **series}]})
    widths = [bar.get_width() for bar in figure.axes[0].patches]
    assert widths == [2.0, 3.0, 3.0]


def test_first_requests_go_only_to_the_languages_a_server_speaks():
    """A variant with LANGUAGES=ja answers English with a 400: its cold start times Japanese alone."""
    assert served(["ja"]) == ["ja"]
    assert served(["en-US", "ja", "fr"]) == list(FIRST_REQUESTS)


def test_a_variant_names_its_settings():
    assert parse_variant("before:CHECKOUT=/tmp/x,ENGINE=onnx") == ("before", {"CHECKOUT": "/tmp/x", "ENGINE": "onnx"})
    assert parse_variant("after:") == ("after", {})
