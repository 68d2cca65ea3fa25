"""The session protocol against the PyTorch engine: the post-deploy validator, run as a release
pipeline runs it, against the server on the converted weights, with the checks whose outcome
depends on the engine: its audio (raw float32 and an encoded format), its durations
(timestamps), its interruption (cancel, max_length) and its runs queued behind each other
(pipelining, drains). The rest of the contract (open, errors, the queue bound, every format's
encoding, HTTP's shapes, overload) is engine-blind and runs against the embedded engine
(test_validate_endpoint.py)."""

import pytest
from test_validate_endpoint import statuses, validate

ENGINE_CHECKS = ("session.pipelining_fifo,cancel.active,close.drains,format.pcm_f32,format.opus,"
                 "timestamps.consistent,max_length.truncates")


# The fp32 CPU engine is slow: minutes on a loaded 2-core machine.
@pytest.mark.timeout(900)
async def test_the_torch_engine_passes_the_engine_checks(torch_server, tmp_path):
    code, output, report = await validate("--url", torch_server.ws_url, "--checks", ENGINE_CHECKS, reports=tmp_path,
                                          limit_s=800)
    assert code == 0, output
    assert statuses(report) == dict.fromkeys(ENGINE_CHECKS.split(","), "pass"), output
