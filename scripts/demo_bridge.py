#!/usr/bin/env python3
"""`make demo ENDPOINT=name REGION=r`: the demo page, speaking to a deployed SageMaker endpoint.

A local web server on 127.0.0.1 serves the same page as the speech server's `GET /`, and its
WebSocket (`/invocations-bidirectional-stream`, the path the page uses) relays every frame,
unchanged, through the client library's SageMaker transport: SageMaker's HTTP/2
bidirectional stream, signed with your AWS credentials (the SDK's default chain). Each
browser session is one bidirectional stream to the endpoint. It also serves OpenAI's speech API
(`/v1/audio/speech`, bridge_openai.py), so Open WebUI, SillyTavern or an agent framework's
OpenAI plugin can speak through the deployed endpoint: base URL http://127.0.0.1:8090/v1.

    demo_bridge.py --endpoint kokoro-tts-endpoint --region us-east-1 [--port 8090]
    demo_bridge.py --endpoint local --region us-east-1 --endpoint-url https://127.0.0.1:8443 --ca-file ca.pem
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "container"), str(REPO)]  # the page (tts_server.demo) and tts_client
from bridge_openai import openai_routes  # noqa: E402
from tts_client.http import SageMakerHTTP  # noqa: E402
from tts_client.transports.sagemaker import SageMakerTransport  # noqa: E402
from tts_server.demo import routes as demo_routes  # noqa: E402

log = logging.getLogger("demo_bridge")
MAX_REASON_BYTES = 123  # a WebSocket close reason's limit


def close_reason(text: str) -> str:
    return text.encode("utf-8")[:MAX_REASON_BYTES].decode("utf-8", "ignore")


def create_bridge(endpoint: str, **connect_options) -> Starlette:
    """connect_options: region, endpoint_url, ca_file (SageMakerTransport.connect)."""

    async def relay(browser: WebSocket) -> None:
        await browser.accept()
        try:
            endpoint_stream = await SageMakerTransport.connect(endpoint, **connect_options)
        except Exception as error:  # noqa: BLE001 - no credentials, unknown endpoint, no route: say so on the page
            message = f"the bridge could not reach endpoint {endpoint!r}: {type(error).__name__}: {error}"
            log.warning(message)
            await browser.send_text(json.dumps({"type": "error", "error": {"code": "endpoint_unreachable", "message": message}}))
            await browser.close(1011, close_reason(message))
            return
        upstream = asyncio.create_task(_browser_to_endpoint(browser, endpoint_stream))
        downstream = asyncio.create_task(_endpoint_to_browser(endpoint_stream, browser))
        try:
            # The reply ends after the browser's `close` (or its leaving) has drained the session.
            await downstream
        finally:
            for task in (upstream, downstream):
                task.cancel()
            await asyncio.gather(upstream, downstream, return_exceptions=True)
            with contextlib.suppress(Exception):
                await endpoint_stream.close()

    speech = SageMakerHTTP(endpoint, **connect_options)
    return Starlette(routes=[*demo_routes(), WebSocketRoute("/invocations-bidirectional-stream", relay),
                             *openai_routes(speech)])


async def _browser_to_endpoint(browser: WebSocket, endpoint_stream: SageMakerTransport) -> None:
    """Until the browser sends `close` (then, like Session.close, end the request stream) or leaves."""
    while (message := await browser.receive())["type"] != "websocket.disconnect":
        frame = message.get("text")
        await endpoint_stream.send(frame if frame is not None else message.get("bytes") or b"")
        if frame is not None and _is_close(frame):
            await endpoint_stream.finish_sending()
            return
    # Gone without a goodbye (tab closed): ask the container to end the session, which ends
    # the reply stream (the request stream's end alone leaves an idle session open).
    with contextlib.suppress(Exception):
        await endpoint_stream.send(json.dumps({"type": "close"}))
        await endpoint_stream.finish_sending()


def _is_close(frame: str) -> bool:
    try:
        return json.loads(frame).get("type") == "close"
    except (ValueError, AttributeError):
        return False


async def _endpoint_to_browser(endpoint_stream: SageMakerTransport, browser: WebSocket) -> None:
    """Frames keep their kind: UTF8 parts become text frames, BINARY parts binary frames."""
    try:
        while (frame := await endpoint_stream.receive()) is not None:
            if isinstance(frame, str):
                await browser.send_text(frame)
            else:
                await browser.send_bytes(frame)
    except (WebSocketDisconnect, RuntimeError):
        return  # the browser is gone
    # The stream ended: a normal end is 1000; otherwise SageMaker's reason (it carries the
    # container's close code, e.g. "... 1008 ...") goes to the page as the close reason.
    code = 1000 if endpoint_stream.close_code == 1000 and not endpoint_stream.close_reason else 1011
    with contextlib.suppress(Exception):
        await browser.close(code, close_reason(endpoint_stream.close_reason))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoint", required=True, help="SageMaker endpoint name")
    parser.add_argument("--region", help="AWS region (default: the SDK's, e.g. $AWS_REGION)")
    parser.add_argument("--endpoint-url", help="another runtime URL, e.g. the local gateway https://127.0.0.1:8443")
    parser.add_argument("--ca-file", help="CA bundle to trust for --endpoint-url (the local gateway's ca.pem)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_bridge(args.endpoint, region=args.region, endpoint_url=args.endpoint_url, ca_file=args.ca_file)
    print(f"Demo page for SageMaker endpoint {args.endpoint!r}"
          f"{' in ' + args.region if args.region else ''}: open http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, ws="websockets-sansio", log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
