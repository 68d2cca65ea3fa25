"""The blog family: the AWS sample's protocol (kokoro-sagemaker-blog.txt), its `{"text"}` socket
and its `/invocations` shape, with its error tokens and its default voice."""

from __future__ import annotations

from ...transport.family import Family
from . import http
from .settings import BlogSettings
from .tokens import VOICES
from .websocket import BlogDialect, opens_with

FAMILY = Family(
    name="blog",
    dialect=BlogDialect,
    opens_with=opens_with,
    claims_body=http.claims_body,
    invoke=http.invoke,
    voices=VOICES,
    settings=BlogSettings,
    error_reply=http.blog_error_reply,
)
