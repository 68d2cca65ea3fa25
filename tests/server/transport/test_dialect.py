"""What every dialect shares: a request is recorded as its owner's before it is submitted (its
first event may arrive before submit returns), and a refused one leaves no record behind."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tts_server.transport.dialect import Dialect
from tts_server.wire.errors import ProtocolError


class Engine:
    """Submit as the session engine's: it sees the record in place, then accepts or refuses."""

    def __init__(self, outstanding: list[str], owners: dict, refuse: bool):
        self.outstanding, self.owners, self.refuse, self.seen = outstanding, owners, refuse, None

    async def submit(self, request) -> None:
        self.seen = (list(self.outstanding), dict(self.owners))
        if self.refuse:
            raise ProtocolError.invalid("text: too long")


@pytest.mark.parametrize("refuse", [False, True], ids=["accepted", "refused"])
async def test_a_submitted_request_is_recorded_before_and_a_refused_one_not_after(refuse):
    outstanding, owners = ["r0"], {"r0": "earlier"}
    dialect = object.__new__(Dialect)
    dialect._engine = engine = Engine(outstanding, owners, refuse)
    request = SimpleNamespace(response_id="r1")
    if refuse:
        with pytest.raises(ProtocolError, match="text: too long"):
            await dialect._submit_owned(request, outstanding, owners, "context")
    else:
        await dialect._submit_owned(request, outstanding, owners, "context")
    assert engine.seen == (["r0", "r1"], {"r0": "earlier", "r1": "context"})
    assert (outstanding, owners) == ((["r0"], {"r0": "earlier"}) if refuse else
                                     (["r0", "r1"], {"r0": "earlier", "r1": "context"}))
