"""A client family: one wire format's whole surface, declared once (families/<name>/__init__.py)
and registered in families/__init__.py. The transport asks the registry; it never names a family.

What a family declares (docs/architecture.md, "Adding a family"):
- its paths: `sockets` (WebSocket paths, Starlette templates such as
  `/v1/text-to-speech/{voice_id}/stream-input`) and `routes` (its HTTP paths); a session or a
  request on one of them is this family's without asking;
- how it is recognised where every family shares the path (SageMaker's
  /invocations-bidirectional-stream and /invocations): `claims_query` (the URL's query, which
  SageMaker fills from the client's ModelQueryString), then `opens_with` (the first message),
  `claims_body` (an /invocations body), asked family by family in the registry's order;
- its dialect (the session adapter), its /invocations answer, its model ids, its voice names
  (`VoiceNames`, scoped to it), its settings (a `FamilySettings` subclass), where its clients
  put an API key (`KeyFields`) and its HTTP error shape (`error_reply`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute

from ..engine.voice_policy import VoiceNames
from ..settings import FamilySettings
from ..wire.errors import ProtocolError
from .dialect import Dialect
from .http_errors import request_id
from .keys import KeyFields, refusal
from .state import server_state

Invoke = Callable[[Request, dict, str], Awaitable[Response]]  # (request, its JSON body, request id)
ErrorReply = Callable[[ProtocolError, str], Response]  # (error, request id) -> the family's HTTP error


def _never(_) -> bool:
    return False


@dataclass(frozen=True)
class Family:
    name: str
    dialect: type[Dialect] | None = None
    sockets: tuple[str, ...] = ()  # its own WebSocket paths: a session there is this family's
    claims_query: Callable[[Mapping[str, str]], bool] = _never  # on the shared socket: is this query its?
    opens_with: Callable[[dict], bool] = _never  # ... else: is this first message its?
    claims_body: Callable[[dict], bool] = _never  # is this /invocations body in its shape?
    invoke: Invoke | None = None  # its answer to such a body
    routes: Sequence[Route] = ()  # its own HTTP paths (its SDK's base URL pointed here)
    # Model ids every family then accepts beside the served one (MODEL_ALIASES' default: Bulbul's, which
    # its seed's clients send on every path); ids only its own clients send it checks itself.
    model_ids: tuple[str, ...] = ()
    voices: VoiceNames = VoiceNames()  # its voice names: aliases, default voice, what speaks for unknown ids
    settings: type[FamilySettings] = FamilySettings  # its own environment variables
    keys: KeyFields = KeyFields()  # where its clients put an API key (API_KEYS)
    error_reply: ErrorReply | None = None  # its HTTP error shape; None: the canonical envelope


class Families:
    """The registered families, asked in order; `default` (the canonical protocol) answers the rest."""

    def __init__(self, families: Sequence[Family], default: Family):
        self.families = tuple(families)
        self.default = default

    @property
    def all(self) -> tuple[Family, ...]:
        return (self.default, *self.families)

    def recognise(self, query: Mapping[str, str], first: dict) -> Family:
        """The family of a session on the shared socket: its query string first, then its first message."""
        speaking = [f for f in self.families if f.dialect]
        return (next((f for f in speaking if f.claims_query(query)), None)
                or next((f for f in speaking if f.opens_with(first)), self.default))

    def claiming(self, body: dict) -> Family:
        return next((f for f in self.families if f.invoke and f.claims_body(body)), self.default)

    def routes(self, socket_endpoint: Callable[[Family], Callable]) -> list[BaseRoute]:
        """Every family's own paths; each HTTP route asks for an API key first (API_KEYS), in the
        family's own words. `socket_endpoint(family)` serves a WebSocket as that family's."""
        routes: list[BaseRoute] = []
        for family in self.all:
            routes += [WebSocketRoute(path, socket_endpoint(family)) for path in family.sockets]
            routes += [Route(route.path, guarded(family, route.endpoint), methods=route.methods, name=route.name)
                       for route in family.routes]
        return routes

    def read_settings(self) -> dict[type[FamilySettings], FamilySettings]:
        """Each family's settings from the environment (start-up stops naming a bad variable)."""
        return {family.settings: family.settings.from_env() for family in self.all}

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for family in self.all for m in family.model_ids))


def http_refusal(family: Family, request: Request) -> ProtocolError | None:
    """The API-key refusal for this request in this family's fields, or None (no key needed, or sent)."""
    return refusal(family.keys, server_state(request).settings.api_keys, request.headers, request.query_params)


def error_response(family: Family, error: ProtocolError, rid: str) -> Response:
    """`error` in the family's HTTP shape (the canonical envelope is the exception handler's)."""
    if family.error_reply is None:
        raise error
    return family.error_reply(error, rid)


def guarded(family: Family, endpoint: Callable[[Request], Awaitable[Response]]):
    """The endpoint, behind the family's API-key check."""
    async def endpoint_with_key(request: Request) -> Response:
        problem = http_refusal(family, request)
        if problem is not None:
            return error_response(family, problem, request_id(request))
        return await endpoint(request)

    return endpoint_with_key
