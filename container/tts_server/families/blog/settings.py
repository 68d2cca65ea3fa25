"""The blog family's settings (environment variables), read at start-up like the server's."""

from __future__ import annotations

from ...settings import FamilySettings, setting


class BlogSettings(FamilySettings):
    max_request_age_s: float = setting(56.0, "the blog shape's `request_timestamp` bound (its container's "
                                       "default)", "compatibility", ge=0)
