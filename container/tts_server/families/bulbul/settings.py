"""Bulbul's settings (environment variables), read at start-up like the server's."""

from __future__ import annotations

from ...settings import FamilySettings, NameMap, setting


class BulbulSettings(FamilySettings):
    bulbul_speaker_map: NameMap = setting(
        None, "JSON object, Bulbul speaker -> our speaker id (unset: the built-in map by gender)", "compatibility")
