"""A client family: one wire format's whole surface, registered once (families/__init__.py).

A family says which WebSocket first messages and which `POST /invocations` bodies are its
own, and brings its dialect (the session adapter), its HTTP answer, its own paths and the
model ids its clients send. The transport asks the registry; it never names a family.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from .dialect import Dialect

Invoke = Callable[[Request, dict, str], Awaitable[Response]]  # (request, its JSON body, request id)


def _never(_: dict) -> bool:
    return False


@dataclass(frozen=True)
class Family:
    name: str
    dialect: type[Dialect] | None = None
    opens_with: Callable[[dict], bool] = _never  # is this first WebSocket message this family's?
    claims_body: Callable[[dict], bool] = _never  # is this /invocations body in this family's shape?
    invoke: Invoke | None = None  # its answer to such a body
    routes: Sequence[BaseRoute] = ()  # its own paths (its SDK's base URL pointed here)
    model_ids: tuple[str, ...] = ()  # model ids its clients send; the served model still speaks
    voice_aliases: Mapping[str, str] = field(default_factory=dict)  # its voice names -> Kokoro voices


class Families:
    """The registered families, asked in order; `default` (the canonical protocol) answers the rest."""

    def __init__(self, families: Sequence[Family], default: Family):
        self.families = tuple(families)
        self.default = default

    def dialect_for(self, first: dict) -> type[Dialect]:
        family = next((f for f in self.families if f.dialect and f.opens_with(first)), self.default)
        return family.dialect

    def invoke_for(self, body: dict) -> Invoke:
        family = next((f for f in self.families if f.invoke and f.claims_body(body)), self.default)
        return family.invoke

    @property
    def routes(self) -> list[BaseRoute]:
        return [route for family in (self.default, *self.families) for route in family.routes]

    @property
    def voice_aliases(self) -> dict[str, str]:
        return {name: voice for family in (self.default, *self.families) for name, voice in family.voice_aliases.items()}

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for family in (self.default, *self.families) for m in family.model_ids))
