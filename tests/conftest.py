"""Shared fixtures. The server helpers live in running_server.py."""

import pytest
from running_server import start_server, stop_server


@pytest.fixture(scope="session")
def speech_server():
    """The real server on the embedded Kokoro model, shared by every test of the run."""
    server = start_server()
    yield server
    stop_server(server)
