"""A response's named states and their transitions (session/response.py)."""

import pytest

from tts_server.session.events import ResponseDone, Status
from tts_server.session.response import TRANSITIONS, Response, ResponseState

from server.session.test_session_engine import request


def test_the_transitions_are_queued_active_done_or_queued_done():
    assert TRANSITIONS == {
        ResponseState.QUEUED: {ResponseState.ACTIVE, ResponseState.DONE},
        ResponseState.ACTIVE: {ResponseState.DONE},
        ResponseState.DONE: set(),
    }


def test_a_response_is_done_once_and_never_restarts():
    response = Response(request("あ。", rid="r"))
    response.activate(None)
    done = ResponseDone("r", Status.COMPLETED, 2, 100)
    assert response.finish(done) is done and response.state is ResponseState.DONE
    with pytest.raises(RuntimeError, match="done -> done"):
        response.finish(done)
    with pytest.raises(RuntimeError, match="done -> active"):
        response.activate(None)


def test_a_cancel_before_the_task_exists_applies_when_it_starts():
    import asyncio

    async def scenario():
        response = Response(request("あ。", rid="r"))
        response.activate(None)
        response.cancel()
        task = asyncio.ensure_future(asyncio.sleep(10))
        response.start(None, task)
        await asyncio.sleep(0)
        return task.cancelled()

    assert asyncio.run(scenario())
