"""Shared fixtures. The server helpers live in running_server.py."""

import pytest
from converted_model import convert_model_dir
from running_server import start_server, stop_server


@pytest.fixture(scope="session")
def speech_server():
    """The real server on the embedded Kokoro model, shared by every test of the run."""
    server = start_server()
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def converted_model_dir(tmp_path_factory):
    """`make model-dir`'s output (config.json, kokoro-v1_0.pth, voices/, SHA256SUMS), once per run."""
    directory = tmp_path_factory.mktemp("model-dir")
    convert_model_dir(directory)
    return directory
