"""The bridge's OpenAI speech surface: `/v1/audio/speech` in front of a deployed endpoint.

Behind SageMaker only `/invocations` is reachable, and the container answers OpenAI's speech
body there as on its own `/v1/audio/speech`. So the bridge passes the body on through
InvokeEndpointWithResponseStream (signed with your AWS credentials) and streams the audio
back as it arrives; the endpoint's errors come back with their status and OpenAI's envelope.
The lists (`/v1/models`, `/v1/audio/models`, `/v1/audio/voices`) are answered here: what every
endpoint accepts (OpenAI's model ids and voice names).
"""

from __future__ import annotations

import asyncio
import json

from starlette.concurrency import iterate_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tts_client.errors import ServiceError
from tts_client.http import SageMakerHTTP
from tts_server.families.openai.fields import MODELS, VOICES


def openai_routes(endpoint: SageMakerHTTP) -> list[Route]:
    async def speech(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError as error:
            return _error(400, "invalid_request_error", f"body: Invalid JSON: {error}")
        try:
            reply = await asyncio.to_thread(endpoint.invoke, body, stream=True)
            chunks = reply.chunks
            first = await asyncio.to_thread(next, chunks, b"")  # an error before any audio is still a reply
        except ServiceError as error:
            if error.body:
                return Response(error.body, status_code=error.status, media_type="application/json")
            return _error(error.status, error.code, error.message)

        def audio():
            yield first
            yield from chunks

        return StreamingResponse(iterate_in_threadpool(audio()), media_type=reply.content_type or "audio/mpeg")

    async def models(_: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": m, "object": "model", "created": 0,
                                                         "owned_by": "kokoro-streaming-tts"} for m in MODELS]})

    async def audio_models(_: Request) -> JSONResponse:
        return JSONResponse({"models": [{"id": m} for m in MODELS]})

    async def voices(_: Request) -> JSONResponse:
        return JSONResponse({"voices": [{"id": name, "name": f"{name} ({voice})"} for name, voice in VOICES.items()]})

    return [Route("/v1/audio/speech", speech, methods=["POST"]), Route("/v1/models", models, methods=["GET"]),
            Route("/v1/audio/models", audio_models, methods=["GET"]), Route("/v1/audio/voices", voices, methods=["GET"])]


def _error(status: int, code: str, message: str) -> JSONResponse:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}}, status_code=status)
