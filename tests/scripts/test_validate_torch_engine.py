"""The whole session protocol, every format and timestamps, against the PyTorch engine: the
post-deploy validator, run as a release pipeline runs it, against the server on the converted weights."""

from test_validate_endpoint import statuses, validate


async def test_the_torch_engine_passes_every_check(torch_server, tmp_path):
    code, output, report = await validate("--url", torch_server.ws_url, reports=tmp_path)
    assert code == 0, output
    assert set(statuses(report).values()) <= {"pass", "skip"}
    passed = {name for name, status in statuses(report).items() if status == "pass"}
    assert {"session.pipelining_fifo", "cancel.active", "format.opus", "timestamps.consistent", "close.drains"} <= passed
