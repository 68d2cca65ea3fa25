"""The post-deploy validator, run as a release pipeline runs it: a process and its exit code;
and proven able to fail: each of its checks against a server that breaks that one rule."""

import asyncio
import importlib.util
import io
import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from broken_servers import FAMILY, BinaryFramesRefused, Breakage, ClosesAfterFirstResponse, NoInvocationsRoute, broken_server

from sagemaker_gateway.server import start_gateway

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "validate_endpoint.py"
# Generous for a loaded machine; the broken server holds its 503s twice as long.
SHED_WITHIN = ("--shed-within", "4")


def load_validator():
    spec = importlib.util.spec_from_file_location("validate_endpoint", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


validator = load_validator()


async def validate(*args: str, reports: Path, limit_s: float = 280) -> tuple[int, str, dict]:
    """As a pipeline runs it: a process. Asynchronous: the servers serve from this event loop."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), *args, "--json", str(reports / "v.json"), "--junit", str(reports / "v.xml"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await asyncio.wait_for(process.communicate(), limit_s)
    report = json.loads((reports / "v.json").read_text())
    return process.returncode, output.decode(), report


async def validate_here(capsys, *args: str, reports: Path) -> tuple[int, str, dict]:
    """The same entry point in this process (no interpreter start-up): its exit code as main() returns it."""
    code = await validator.validate(validator.parse_args([*args, "--json", str(reports / "v.json"), "--no-progress"]))
    return code, capsys.readouterr().out, json.loads((reports / "v.json").read_text())


def statuses(report: dict) -> dict[str, str]:
    return {check["name"]: check["status"] for check in report["checks"]}


def failed(report: dict) -> set[str]:
    return {name for name, status in statuses(report).items() if status == "fail"}


# Every check, in groups: one validator run per group keeps each test short on a busy machine.
GROUPS = {"session": "server.*,open.*,session.*,cancel.*,queue.*,close.*", "errors": "errors.*", "formats": "format.*",
          "timing": "timestamps.*,max_length.*", "http": "http.*", "overload": "overload.*"}


def test_the_groups_cover_every_check():
    grouped = [c.name for pattern in GROUPS.values() for c in validator.select(validator.ALL_CHECKS, pattern.split(","))]
    assert sorted(grouped) == sorted(c.name for c in validator.ALL_CHECKS)


# The broken servers below are this relay with one rule broken. The real server behind the relay
# as it is passing every check is both what a release gates on (the relay forwards each frame and
# request unchanged) and what makes each broken server's failures its breakage's doing.
@pytest.mark.parametrize("group", GROUPS)
async def test_the_real_server_passes_every_check_through_the_correct_relay(speech_server, group, tmp_path):
    async with broken_server(speech_server.http_url, Breakage) as url:
        code, output, report = await validate("--url", url, "--checks", GROUPS[group], *SHED_WITHIN, reports=tmp_path)
    assert code == 0, output
    assert report["checks"] and set(statuses(report).values()) == {"pass"}, output
    suite = ET.parse(tmp_path / "v.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and suite.get("skipped") == "0" and int(suite.get("tests")) == len(report["checks"])


# What the SDK's transport changes: binary frames in event-stream parts, queueing, cancel and the
# end of input over HTTP/2, errors in the stream, InvokeEndpoint and its response stream (the
# rest of the protocol is the same server's, checked above).
GATEWAY_CHECKS = ["open.*,session.pipelining_fifo,cancel.active,close.*",
                  "errors.bad_frames,format.pcm_16*,http.*"]


@pytest.mark.parametrize("checks", GATEWAY_CHECKS)
async def test_the_real_server_passes_through_the_sagemaker_gateway_with_the_real_sdk(speech_server, checks, tmp_path):
    gateway = await start_gateway(speech_server.http_url, tmp_path / "certs", port=0, max_part_bytes=4096)
    try:
        code, output, report = await validate(
            "--endpoint", "local-kokoro", "--region", "us-east-1", "--endpoint-url", gateway.endpoint_url,
            "--ca-file", str(gateway.ca_file), "--checks", checks, reports=tmp_path)
    finally:
        await gateway.close()
    assert code == 0, output
    assert "SageMaker endpoint local-kokoro" in report["target"]
    assert report["checks"] and set(statuses(report).values()) == {"pass"}, output


# closes_after_first_response runs below, as a process, with its JUnit report checked too.
@pytest.mark.parametrize("breakage", [b for b in FAMILY if b is not ClosesAfterFirstResponse], ids=lambda b: b.name)
async def test_each_broken_server_fails_exactly_the_checks_of_the_rule_it_breaks(speech_server, breakage, tmp_path, capsys):
    # open.binary_frame is the control: the relay is otherwise correct.
    control = () if breakage is BinaryFramesRefused else ("open.binary_frame",)
    async with broken_server(speech_server.http_url, breakage) as url:
        code, output, report = await validate_here(capsys, "--url", url, "--checks", ",".join(breakage.fails + control),
                                                   *SHED_WITHIN, reports=tmp_path)
    assert code == 1, output
    assert failed(report) == set(breakage.fails), output
    assert all(statuses(report)[name] == "pass" for name in control), output
    assert set(output.split("FAILED: ")[1].strip().split(", ")) == set(breakage.fails)


async def test_a_server_that_closes_after_one_response_fails_with_the_checks_named(speech_server, tmp_path):
    async with broken_server(speech_server.http_url, ClosesAfterFirstResponse) as broken_url:
        # Only checks that expect the hang-ups: right after them the real server may still be
        # winding down the abandoned work and shed a new session (its admission's call).
        code, output, report = await validate("--url", broken_url, "--checks", "open.*,session.*,cancel.*,close.*",
                                              reports=tmp_path)
    assert code == 1, output
    assert failed(report) == set(ClosesAfterFirstResponse.fails), output
    assert statuses(report)["open.binary_frame"] == "pass"  # one response per session still works
    assert "FAILED: " in output and "session.several_messages" in output.split("FAILED: ")[1]
    junit_failures = [case.get("name") for case in ET.parse(tmp_path / "v.xml").iter("testcase") if case.find("failure") is not None]
    assert set(junit_failures) == failed(report)


async def test_a_missing_route_fails_unless_skipped_by_flag_and_the_report_says_why(speech_server, tmp_path, capsys):
    async with broken_server(speech_server.http_url, NoInvocationsRoute) as url:
        code, output, report = await validate_here(capsys, "--url", url, "--checks", "open.binary_frame,http.*",
                                                   reports=tmp_path)
        assert code == 1
        assert "route is missing" in next(c["detail"] for c in report["checks"] if c["name"] == "http.invocations")
        code, output, report = await validate_here(capsys, "--url", url, "--checks", "open.binary_frame,http.*",
                                                   "--skip", "http.*", reports=tmp_path)
    assert code == 0, output
    assert statuses(report) == {"open.binary_frame": "pass", "http.invocations": "skip", "http.stream": "skip",
                                "http.sse": "skip", "http.error": "skip"}
    assert {c["detail"] for c in report["checks"] if c["status"] == "skip"} == {"skipped on request (--skip http.*)"}
    assert "1 passed, 0 failed, 4 skipped" in output


async def test_a_server_on_another_device_than_the_deploy_asked_for_fails(speech_server, tmp_path, capsys):
    """A GPU deploy passes --expect-device cuda: an endpoint that serves from the CPU (no usable GPU,
    a silent fallback) fails server.runs_on, and the report says what it runs on."""
    uid = str(os.getuid())
    code, output, report = await validate_here(capsys, "--url", speech_server.ws_url, "--checks", "server.*",
                                               "--expect-device", "cuda", "--expect-uid", uid, reports=tmp_path)
    assert code == 1, output
    [check] = report["checks"]
    assert check["name"] == "server.runs_on" and check["status"] == "fail"
    assert "runs on 'cpu', the deploy asked for 'cuda'" in check["detail"]
    assert "kokoro-82m-int8-onnx on cpu (int8)" in check["detail"]
    code, output, report = await validate_here(capsys, "--url", speech_server.ws_url, "--checks", "server.*",
                                               "--expect-device", "cpu", "--expect-uid", uid, reports=tmp_path)
    assert code == 0, output
    code, output, report = await validate_here(capsys, "--url", speech_server.ws_url, "--checks", "server.*",
                                               "--expect-uid", str(int(uid) + 1), reports=tmp_path)
    assert code == 1 and f"runs as uid {uid}, the deploy asked for {int(uid) + 1}" in report["checks"][0]["detail"]


def test_role_arn_is_assumed_in_the_validators_own_process(monkeypatch):
    """--role-arn: sts:AssumeRole with the caller's credentials (moto's STS here); the role's
    credentials go to the SageMaker target, never into an environment variable."""
    import boto3
    from moto import mock_aws

    from tts_client.validation.target import target_for

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    before = dict(os.environ)
    with mock_aws():
        role = boto3.client("iam", region_name="us-east-1").create_role(
            RoleName="kokoro-tts-staging-validator", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        args = validator.parse_args(["--endpoint", "kokoro-tts-staging-endpoint", "--region", "us-east-1",
                                     "--role-arn", role])
        target = target_for(args, "validate-endpoint")
    credentials = target.options["sagemaker"]["credentials"]
    assert credentials.access_key_id != "testing" and credentials.session_token
    assert target.http is not None and dict(os.environ) == before


def test_role_arn_needs_an_endpoint():
    with pytest.raises(SystemExit):
        validator.parse_args(["--url", "ws://127.0.0.1:1/x", "--role-arn", "arn:aws:iam::111111111111:role/r"])


async def test_an_unreachable_target_exits_2(tmp_path):
    code, output, report = await validate("--url", "ws://127.0.0.1:9/invocations-bidirectional-stream", reports=tmp_path)
    assert code == 2
    assert report["checks"][0]["name"] == "connect" and "cannot reach" in report["checks"][0]["detail"]


def test_progress_goes_to_a_terminal_stderr_and_leaves_stdout_as_it_was(monkeypatch, capsys):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    checks = validator.ALL_CHECKS[:2]
    results = [validator.CheckResult(check.name, "pass", 0.1) for check in checks]

    def run(*flags):
        terminal = Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        on_start, on_result = validator.progress(validator.parse_args(["--url", "ws://x", *flags]), len(checks))
        for check, result in zip(checks, results, strict=True):
            on_start(check)
            on_result(result)
        return capsys.readouterr().out, terminal.getvalue()

    out, err = run()
    assert checks[1].name in err and "1/2" in err, err
    plain_out, plain_err = run("--no-progress")
    assert plain_err == "" and out == plain_out == "".join(f"  pass  {c.name}\n" for c in checks)
