"""The local SageMaker gateway, in the test's event loop, in front of the real server."""

import pytest_asyncio

from sagemaker_gateway.server import start_gateway

# Small enough that every audio frame comes back as several PARTIAL payload parts.
SMALL_PARTS = 1500


@pytest_asyncio.fixture(scope="session")
async def gateway(speech_server, tmp_path_factory):
    running = await start_gateway(speech_server.http_url, tmp_path_factory.mktemp("gateway-certs"), port=0,
                                  max_part_bytes=SMALL_PARTS)
    yield running
    await running.close()
