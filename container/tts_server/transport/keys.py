"""API keys on the local server (API_KEYS): every surface asks for one in its own clients' fields.

Off by default. Behind SageMaker it stays off: the endpoint's IAM policy already decides who
may call, the deploy never sets API_KEYS, and clients' key fields (`xi-api-key`,
`Authorization: Token ...`, `X-API-Key`, `api_key`) are accepted and ignored there. Set it only
where the image runs on its own (a VM, a laptop shared on a network). /ping never asks.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..settings import Settings
from ..wire.errors import ErrorCode, ProtocolError


@dataclass(frozen=True)
class KeyFields:
    """Where a family's clients put their key: whole-value headers, the `Authorization` schemes
    they use, query parameters, and (on a socket) fields of the first message. A value may
    carry its scheme (`Bearer k`) wherever it is."""

    headers: tuple[str, ...] = ()
    schemes: tuple[str, ...] = ("Bearer",)
    query: tuple[str, ...] = ("api_key",)
    message: tuple[str, ...] = ()

    def offered(self, headers: Mapping[str, str], query: Mapping[str, str],
                first: Mapping | None = None) -> Iterator[str]:
        """Every key the client sent in one of these fields."""
        values = [headers.get("authorization")] + [headers.get(name) for name in self.headers]
        values += [query.get(name) for name in self.query]
        values += [first.get(name) for name in self.message] if isinstance(first, Mapping) else []
        for value in values:
            if isinstance(value, str) and value.strip():
                yield self._without_scheme(value.strip())

    def _without_scheme(self, value: str) -> str:
        scheme, _, rest = value.partition(" ")
        return rest.strip() if rest and scheme.lower() in {s.lower() for s in self.schemes} else value

    def describe(self) -> str:
        where = [f"`Authorization: {scheme} <key>`" for scheme in self.schemes]
        where += [f"header `{name}`" for name in self.headers] + [f"query `{name}`" for name in self.query]
        where += [f"first message's `{name}`" for name in self.message]
        return ", ".join(where)


def refusal(keys: KeyFields, accepted: Iterable[str] | None, headers: Mapping[str, str], query: Mapping[str, str],
            first: Mapping | None = None) -> ProtocolError | None:
    """None when no key is required or one of `accepted` was sent; else the refusal to tell."""
    accepted = tuple(accepted or ())
    if not accepted:
        return None
    for value in keys.offered(headers, query, first):
        if any(hmac.compare_digest(value.encode(), key.encode()) for key in accepted):
            return None
    return ProtocolError(ErrorCode.UNAUTHORIZED, f"api key: this server requires an API key "
                                                 f"({Settings.variable('api_keys')}); send one in {keys.describe()}")
