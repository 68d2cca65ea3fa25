"""The app's shared state, typed: what every route and socket reads, built once by app.create_app.

Starlette's `app.state` is an untyped namespace; the app keeps one ServerState in it and every
reader takes it through `server_state`, so a missing or misspelt field is a type error, not an
AttributeError in the middle of a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from starlette.applications import Starlette
from starlette.requests import HTTPConnection

from ..admission import Admission
from ..lifecycle import Lifecycle
from ..runtime import ModelRuntime
from ..settings import FamilySettings, Settings

if TYPE_CHECKING:
    from .family import Families

F = TypeVar("F", bound=FamilySettings)


@dataclass(frozen=True)
class ServerState:
    settings: Settings
    families: Families
    family_settings: dict[type[FamilySettings], FamilySettings]  # each registered family's, read at start-up
    runtime: ModelRuntime
    lifecycle: Lifecycle
    admission: Admission

    def family(self, settings: type[F]) -> F:
        """A client family's own settings (`families/<name>/settings.py`) as read at start-up."""
        return self.family_settings[settings]

    def install(self, app: Starlette) -> None:
        app.state.server = self


def app_state(app: Starlette) -> ServerState:
    return app.state.server


def server_state(connection: HTTPConnection) -> ServerState:
    """The state of the app serving `connection` (a request or a WebSocket)."""
    return app_state(connection.app)
