"""`serve`: run the server with uvicorn on HOST:PORT (SageMaker: 0.0.0.0:8080)."""

from __future__ import annotations

import asyncio
import logging
import signal

import uvicorn

from .app import create_app
from .settings import Settings
from .transport.state import ServerState, app_state

log = logging.getLogger(__name__)


class Server(uvicorn.Server):
    """uvicorn, except that the first SIGTERM drains instead of stopping at once.

    uvicorn's own handling would close the listening socket (so /ping could not answer 503),
    close every WebSocket with 1012 mid-sentence, and re-raise the signal after the exit (status
    143). Here the app's lifecycle stops first (lifecycle.py) and uvicorn is told to exit only
    once the sessions and requests have ended: the process then exits 0. A second signal, or
    SIGINT, keeps uvicorn's behaviour.
    """

    def __init__(self, config: uvicorn.Config, state: ServerState):
        super().__init__(config)
        self._state = state  # its lifecycle and admission
        self._loop: asyncio.AbstractEventLoop | None = None
        self._draining: asyncio.Task | None = None

    async def startup(self, sockets=None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)

    def handle_exit(self, sig: int, frame) -> None:
        if sig == signal.SIGTERM and self._draining is None and self._loop is not None and not self.should_exit:
            self._loop.call_soon_threadsafe(self._begin_stop)
            return
        super().handle_exit(sig, frame)

    def _begin_stop(self) -> None:
        if self._draining is not None:
            return
        self._state.lifecycle.begin_stop()
        self._draining = asyncio.create_task(self._exit_when_drained())

    async def _exit_when_drained(self) -> None:
        await self._state.lifecycle.wait_drained(self._state.admission)
        self.should_exit = True


def main() -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    shown_host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    print(
        f"Kokoro streaming TTS: loading the model, then serving on http://{shown_host}:{settings.port}\n"
        f"  health:    GET  http://{shown_host}:{settings.port}/ping  (503 until the model is warm)\n"
        f"  http:      POST http://{shown_host}:{settings.port}/invocations\n"
        f"  websocket: ws://{shown_host}:{settings.port}/invocations-bidirectional-stream\n"
        f"  demo page: http://{shown_host}:{settings.port}/",
        flush=True,
    )
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        ws="websockets-sansio",
        ws_ping_interval=20.0,  # answer SageMaker's pings and detect dead peers
        log_level="info",
        timeout_graceful_shutdown=3,  # after the app's own drain (SIGTERM): what is left is cut
    )
    Server(config, app_state(app)).run()
