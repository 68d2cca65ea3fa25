"""The load stage (scripts/load_stage.py) as a pipeline runs it: a process and its exit code,
through the local SageMaker gateway with the real SDK, against the real server with the CPU
budget of stacks/load_budget.py; and proven able to fail: a server that is slow to first
audio, and one that drops sessions, miss that budget.

Levels and durations are small (seconds, not the deploy's minutes): the figures are this
machine's, not an endpoint's; what is tested is the measuring and the verdict."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from broken_servers import DropsSessions, SlowFirstAudio, broken_server

from sagemaker_gateway.server import start_gateway
from stacks.load_budget import CPU_BUDGET, CPU_REFERENCE_TTFA_MS, LoadBudget
from tts_client.events import AudioChunk
from tts_client.session import Session
from tts_client.validation.texts import TWO_SENTENCES

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "load_stage.py"
SHORT_RUN = ["--levels", "1,2", "--seconds", "4", "--think", "0.2", "--timeout", "120"]


@pytest.fixture(scope="module")
async def cpu_budget(speech_server) -> LoadBudget:
    """The CPU deploy's budget (what `python -m stacks.expectations load` prints for a CPU instance
    type), its TTFA limits scaled by how much slower this machine is right now than the one the
    budget comes from: the median TTFA of three lone turns here over CPU_REFERENCE_TTFA_MS. Machines
    here differ fourfold in speed, and a busy one tenfold; the verdicts tested are relative."""
    samples = []
    for _ in range(3):
        session = await Session.websocket(speech_server.ws_url, binary=True)
        try:
            await session.open(format="pcm_16", audio_frames="binary")
            first = session.watch(lambda e: isinstance(e, AudioChunk))
            began = time.monotonic()
            response = await session.create(TWO_SENTENCES)
            await asyncio.wait_for(first, 120)
            samples.append((time.monotonic() - began) * 1000)
            await response.wait(120)
        finally:
            await session.abort()
    factor = max(1.0, statistics.median(samples) / CPU_REFERENCE_TTFA_MS)
    return CPU_BUDGET.model_copy(update={"ttfa_p95_ms": round(CPU_BUDGET.ttfa_p95_ms * factor),
                                         "ttfa_p99_ms": round(CPU_BUDGET.ttfa_p99_ms * factor)})


async def load_stage(upstream_http: str, tmp_path: Path, *args: str, limit_s: float = 300) -> tuple[int, str, dict]:
    gateway = await start_gateway(upstream_http, tmp_path / "certs", port=0, max_part_bytes=4096)
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(SCRIPT), "--endpoint", "local-kokoro", "--region", "us-east-1",
            "--endpoint-url", gateway.endpoint_url, "--ca-file", str(gateway.ca_file), *args,
            "--json", str(tmp_path / "load.json"), "--junit", str(tmp_path / "load.xml"),
            "--plot", str(tmp_path / "load.png"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output, _ = await asyncio.wait_for(process.communicate(), limit_s)
    finally:
        await gateway.close()
    return process.returncode, output.decode(), json.loads((tmp_path / "load.json").read_text())


async def test_the_real_server_through_the_gateway_meets_the_cpu_budget(speech_server, cpu_budget, tmp_path):
    code, output, report = await load_stage(speech_server.http_url, tmp_path, *cpu_budget.arguments(), *SHORT_RUN)
    assert code == 0, output
    assert report["passed"] and report["budget"] == {"ttfa_p95_ms": cpu_budget.ttfa_p95_ms,
                                                     "ttfa_p99_ms": cpu_budget.ttfa_p99_ms, "shed_free_sessions": 1}
    assert [level["sessions"] for level in report["levels"]] == [1, 2]
    for level in report["levels"]:
        assert level["responses"] >= 1 and level["errors"] == 0 and level["misses"] == [], output
        assert 0 < level["ttfa_p50_ms"] <= level["ttfa_p95_ms"] <= level["ttfa_p99_ms"] <= cpu_budget.ttfa_p99_ms
        assert level["audio_s_per_s"] > 0
    assert report["levels"][0]["sheds"] == 0  # one session is within shed_free_sessions
    suite = ET.parse(tmp_path / "load.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("2", "0")
    assert [case.get("name") for case in suite.iter("testcase")] == ["load.sessions_1", "load.sessions_2"]
    assert (tmp_path / "load.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "within budget" in output and "PASSED" in output


@pytest.mark.parametrize("breakage,miss", [(SlowFirstAudio, "TTFA p95"), (DropsSessions, "session dropped")],
                         ids=lambda b: getattr(b, "name", ""))
async def test_a_slow_or_session_dropping_server_misses_the_budget(speech_server, cpu_budget, tmp_path, breakage,
                                                                  miss, monkeypatch):
    # Slow: first audio held past the (scaled) p95 budget, whatever this machine's speed.
    monkeypatch.setattr(SlowFirstAudio, "HOLD_S", cpu_budget.ttfa_p95_ms / 1000 + 1)
    async with broken_server(speech_server.http_url, breakage) as url:
        relay = url.replace("ws://", "http://").removesuffix("/invocations-bidirectional-stream")
        code, output, report = await load_stage(relay, tmp_path, *cpu_budget.arguments(), "--levels", "1",
                                                "--seconds", "2", "--think", "0", "--timeout", "120",
                                                limit_s=300)
    assert code == 1, output
    [level] = report["levels"]
    assert not report["passed"] and any(miss in text for text in level["misses"]), level
    [case] = ET.parse(tmp_path / "load.xml").getroot().iter("testcase")
    assert miss in case.find("failure").get("message")
    assert "MISS" in output and "FAILED" in output


async def test_an_unreachable_endpoint_exits_2_with_a_report_that_says_why(tmp_path):
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), "--url", "ws://127.0.0.1:9/invocations-bidirectional-stream",
        *CPU_BUDGET.arguments(),
        "--json", str(tmp_path / "load.json"), "--junit", str(tmp_path / "load.xml"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2, output
    report = json.loads((tmp_path / "load.json").read_text())
    assert report["levels"] == [] and "unreachable" in report
    [case] = ET.parse(tmp_path / "load.xml").getroot().iter("testcase")
    assert case.get("name") == "load.connect" and "cannot reach" in case.find("failure").get("message")


def test_the_deploys_budget_options_are_the_scripts_own():
    """stacks/load_budget.py writes the options; the script reads them back to the same budget."""
    sys.path.insert(0, str(SCRIPT.parent))
    import load_stage

    args = load_stage.parse_args(["--url", "ws://x", *CPU_BUDGET.arguments()])
    assert (args.levels, args.seconds) == (CPU_BUDGET.levels, CPU_BUDGET.seconds)
    assert (args.ttfa_p95_ms, args.ttfa_p99_ms, args.shed_free_sessions) == (
        CPU_BUDGET.ttfa_p95_ms, CPU_BUDGET.ttfa_p99_ms, CPU_BUDGET.shed_free_sessions)


def test_percentiles_are_nearest_rank_and_each_miss_is_named():
    from tts_client.validation.load import Budget, LevelResult

    level = LevelResult(sessions=2, seconds=10.0, ttfa_ms=[100.0 * n for n in range(1, 21)], audio_ms=30_000, sheds=1)
    assert (level.percentile_ms(0.5), level.percentile_ms(0.95), level.percentile_ms(0.99)) == (1000.0, 1900.0, 2000.0)
    assert level.misses(Budget(ttfa_p95_ms=2000, ttfa_p99_ms=2000, shed_free_sessions=1)) == []
    level.error("session dropped", "r1: closed")
    assert level.misses(Budget(ttfa_p95_ms=1500, ttfa_p99_ms=2000, shed_free_sessions=2)) == [
        "1 errors (session dropped 1; first: session dropped: r1: closed)", "TTFA p95 1900 ms > 1500 ms",
        "1 sessions shed at 2 sessions (none may be up to 2)"]
    assert LevelResult(sessions=1).misses(Budget(1, 1, 0)) == ["no turn was admitted and answered"]
    assert level.summary(Budget(1, 1, 0))["audio_s_per_s"] == 3.0
