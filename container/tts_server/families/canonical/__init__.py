"""The canonical protocol (SPEC §3, §5): the `open` session and the `/invocations` JSON body.

The default family: a first message or a body that no other family claims is answered here
(a first message that is not `open` gets the protocol's fatal error).
"""

from __future__ import annotations

from ...transport.family import Family
from . import http
from .websocket import CanonicalDialect

FAMILY = Family(
    name="canonical",
    dialect=CanonicalDialect,
    opens_with=lambda first: first.get("type") == "open",
    invoke=http.invoke,
)
