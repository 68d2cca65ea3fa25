"""The browser demo (SPEC §11): `GET /` serves the page, `/demo/*` its scripts and styles.

Static files only, no build step and nothing fetched from outside; the page talks to the
same WebSocket as every other client. `make demo`'s bridge (scripts/demo_bridge.py) serves
these same routes in front of a SageMaker endpoint.
"""

from __future__ import annotations

from pathlib import Path

from starlette.responses import FileResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"


async def page(_request) -> FileResponse:
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def routes() -> list:
    # A Mount at "/" would also take WebSocket paths it cannot serve: the page gets a route
    # of its own and its assets a prefix.
    return [Route("/", page, methods=["GET"]), Mount("/demo", StaticFiles(directory=STATIC), name="demo")]
