"""How a session ends, as one state with explicit transitions (transport/closing.py)."""

import pytest

from tts_server.transport.closing import TRANSITIONS, Closing, Phase
from tts_server.wire.errors import ErrorCode, ProtocolError

IDLE = ProtocolError(ErrorCode.IDLE_TIMEOUT, "idle")


def test_open_may_close_by_the_client_or_the_server_and_cutting_is_final():
    assert TRANSITIONS[Phase.OPEN] == {Phase.CLIENT_CLOSING, Phase.ENDING, Phase.CUTTING}
    assert TRANSITIONS[Phase.CLIENT_CLOSING] == {Phase.ENDING}  # SIGTERM during the client's close
    assert TRANSITIONS[Phase.ENDING] == {Phase.CUTTING}  # the shutdown deadline
    assert TRANSITIONS[Phase.CUTTING] == set()


def test_the_servers_ending_keeps_its_error_code_and_deadline():
    closing = Closing()
    closing.to(Phase.ENDING, IDLE, 1000)
    assert (closing.error, closing.close_code, closing.deadline) == (IDLE, 1000, None)
    closing.to(Phase.CUTTING)
    assert closing.error is IDLE and closing.close_code == 1000, "cutting keeps what the session will be told"


@pytest.mark.parametrize("path", [[Phase.CLIENT_CLOSING, Phase.CUTTING], [Phase.CUTTING, Phase.OPEN],
                                  [Phase.ENDING, Phase.CLIENT_CLOSING]])
def test_other_moves_are_refused(path):
    closing = Closing()
    closing.to(path[0], IDLE, 1000)
    with pytest.raises(RuntimeError, match="is not a transition"):
        closing.to(path[1])
