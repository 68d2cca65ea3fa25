"""`serve`: run the server with uvicorn on HOST:PORT (SageMaker: 0.0.0.0:8080)."""

from __future__ import annotations

import logging

import uvicorn

from .app import create_app
from .config import Settings


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
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        ws="websockets-sansio",
        ws_ping_interval=20.0,  # answer SageMaker's pings and detect dead peers
        log_level="info",
        timeout_graceful_shutdown=10,
    )
