"""The Starlette application: SageMaker's container contract (SPEC §2), and the client families'
own paths from the registry (families/__init__.py)."""

from __future__ import annotations

import contextlib

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute

from .admission import Admission
from .demo import routes as demo_routes
from .engine.factory import build_synthesizer
from .families import REGISTERED
from .lifecycle import Lifecycle
from .runtime import ModelRuntime
from .settings import Settings
from .transport.family import Families
from .transport.http_errors import EXCEPTION_HANDLERS
from .transport.dialect import SHARED_PATH
from .transport.invocations import invocations
from .transport.state import ServerState, server_state
from .transport.websocket import socket_endpoint


async def ping(request: Request) -> JSONResponse:
    """200 once the model is ready, whatever the load: SageMaker replaces an instance whose
    ping fails, and a busy instance is healthy. Counters only, so it stays fast under load."""
    state = server_state(request)
    runtime = state.runtime
    if state.lifecycle.stopping.is_set():  # SIGTERM: the load balancer should send no more
        return JSONResponse({"status": "stopping"}, status_code=503)
    if runtime.ready:
        return JSONResponse({"status": "ok", **runtime.describe(), "load": state.admission.snapshot()})
    if runtime.load_error:
        return JSONResponse({"status": "failed", "reason": runtime.load_error}, status_code=503)
    return JSONResponse({"status": "loading"}, status_code=503)


def create_app(settings: Settings | None = None, runtime: ModelRuntime | None = None,
               families: Families = REGISTERED, family_settings: dict | None = None) -> Starlette:
    """`family_settings` (FamilySettings subclass -> its values): each registered family's, read from
    the environment when not given. `runtime`: built from `settings` when not given (a test that
    brings its own builds it from the same settings)."""
    settings = (settings or Settings.from_env()).with_model_aliases(families.model_ids)
    family_settings = families.read_settings() | (family_settings or {})
    runtime = runtime or ModelRuntime(
        lambda: build_synthesizer(settings.engine, settings.device, settings.model_dir, settings.inference_threads,
                                  settings.pauses, settings.max_batch,
                                  list(settings.languages) if settings.languages else None),
        settings,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        runtime.start()
        yield
        await runtime.shutdown()

    app = Starlette(
        routes=[
            Route("/ping", ping, methods=["GET"]),
            Route("/invocations", invocations, methods=["POST"]),
            WebSocketRoute(SHARED_PATH, socket_endpoint()),
            *demo_routes(),
            *families.routes(socket_endpoint),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    ServerState(settings, families, family_settings, runtime, Lifecycle(settings.shutdown_deadline_s),
                Admission(runtime, settings)).install(app)
    return app
