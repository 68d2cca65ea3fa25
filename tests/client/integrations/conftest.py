"""Both integrations run over both ways to the endpoint: the local WebSocket, and SageMaker's
HTTP/2 SDK through the local gateway, each in front of the real server."""

import pytest
import pytest_asyncio

from sagemaker_gateway.server import start_gateway
from tts_client.integrations.endpoint import Endpoint


@pytest_asyncio.fixture(scope="session")
async def agents_gateway(speech_server, tmp_path_factory):
    running = await start_gateway(speech_server.http_url, tmp_path_factory.mktemp("agents-gateway-certs"), port=0)
    yield running
    await running.close()


@pytest.fixture(params=["websocket", "sagemaker"])
def endpoint(request, speech_server) -> Endpoint:
    if request.param == "websocket":
        return Endpoint.websocket(speech_server.ws_url)
    gateway = request.getfixturevalue("agents_gateway")
    return Endpoint.sagemaker("local-kokoro", region="us-east-1", endpoint_url=gateway.endpoint_url,
                              ca_file=str(gateway.ca_file))
