"""The AWS blog sample (kokoro-sagemaker-blog.txt): its `{"text"}` socket and its `/invocations`
shape, with its error tokens and its default voice."""

from __future__ import annotations

from ...transport.family import Family
from . import http
from .websocket import SimpleDialect

FAMILY = Family(
    name="blog",
    dialect=SimpleDialect,
    opens_with=lambda first: "type" not in first and "text" in first,
    claims_body=http.claims_body,
    invoke=http.invoke,
)
