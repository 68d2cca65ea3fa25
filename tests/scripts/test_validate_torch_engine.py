"""The whole session protocol, every format and timestamps, against the PyTorch engine: the
post-deploy validator, run as a release pipeline runs it, against the server on the converted weights."""

import pytest
from test_validate_endpoint import statuses, validate


# Every check on the fp32 CPU engine: ~2.5 min quiet, over 5 with one core taken by another job.
@pytest.mark.timeout(1200)
async def test_the_torch_engine_passes_every_check(torch_server, tmp_path):
    code, output, report = await validate("--url", torch_server.ws_url, reports=tmp_path, limit_s=1100)
    assert code == 0, output
    assert set(statuses(report).values()) <= {"pass", "skip"}
    passed = {name for name, status in statuses(report).items() if status == "pass"}
    assert {"session.pipelining_fifo", "cancel.active", "format.opus", "timestamps.consistent", "close.drains"} <= passed
