"""The post-deploy validator, run as a release pipeline runs it: a process and its exit code."""

import asyncio
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from broken_server import closes_after_first_response

from sagemaker_gateway.server import start_gateway

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "validate_endpoint.py"


async def validate(*args: str, reports: Path) -> tuple[int, str, dict]:
    # Asynchronous: the broken server and the gateway serve from this test's event loop.
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), *args, "--json", str(reports / "v.json"), "--junit", str(reports / "v.xml"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await asyncio.wait_for(process.communicate(), 280)
    report = json.loads((reports / "v.json").read_text())
    return process.returncode, output.decode(), report


def statuses(report: dict) -> dict[str, str]:
    return {check["name"]: check["status"] for check in report["checks"]}


async def test_the_real_server_passes_every_check_over_websocket(speech_server, tmp_path):
    code, output, report = await validate("--url", speech_server.ws_url, reports=tmp_path)
    assert code == 0, output
    assert set(statuses(report).values()) <= {"pass", "skip"}
    assert {"open.binary_frame", "session.pipelining_fifo", "cancel.active", "format.opus", "close.drains"} <= {
        name for name, status in statuses(report).items() if status == "pass"}
    suite = ET.parse(tmp_path / "v.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("tests")) == len(report["checks"])


async def test_the_real_server_passes_through_the_sagemaker_gateway_with_the_real_sdk(speech_server, tmp_path):
    gateway = await start_gateway(speech_server.http_url, tmp_path / "certs", port=0, max_part_bytes=4096)
    try:
        code, output, report = await validate(
            "--endpoint", "local-kokoro", "--region", "us-east-1", "--endpoint-url", gateway.endpoint_url,
            "--ca-file", str(gateway.ca_file), "--checks", "open.*,session.*,cancel.*,close.*,errors.*,format.pcm_16*,http.*",
            reports=tmp_path)
    finally:
        await gateway.close()
    assert code == 0, output
    assert "SageMaker endpoint local-kokoro" in report["target"]
    assert statuses(report)["session.several_messages"] == "pass"


async def test_a_server_that_closes_after_one_response_fails_with_the_checks_named(speech_server, tmp_path):
    async with closes_after_first_response(speech_server.ws_url) as broken_url:
        code, output, report = await validate("--url", broken_url, "--checks", "open.*,session.*,cancel.*,close.*,format.mulaw",
                                              reports=tmp_path)
    assert code == 1, output
    failed = {name for name, status in statuses(report).items() if status == "fail"}
    assert {"session.several_messages", "session.pipelining_fifo", "cancel.active", "close.drains"} <= failed
    assert statuses(report)["open.binary_frame"] == "pass"  # one response per session still works
    assert statuses(report)["format.mulaw"] == "pass"
    assert "FAILED: " in output and "session.several_messages" in output.split("FAILED: ")[1]
    junit_failures = [case.get("name") for case in ET.parse(tmp_path / "v.xml").iter("testcase") if case.find("failure") is not None]
    assert set(junit_failures) == failed


async def test_an_unreachable_target_exits_2(tmp_path):
    code, output, report = await validate("--url", "ws://127.0.0.1:9/invocations-bidirectional-stream", reports=tmp_path)
    assert code == 2
    assert report["checks"][0]["name"] == "connect" and "cannot reach" in report["checks"][0]["detail"]
