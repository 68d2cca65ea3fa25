"""Shared fixtures. The server helpers live in running_server.py."""

import pytest
from model_dir_fixture import converted_model_dir
from running_server import start_server, stop_server


@pytest.fixture(scope="session")
def speech_server():
    """The real server on the embedded Kokoro model, shared by every test of the run."""
    server = start_server({"ENGINE": "onnx"})
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def model_dir():
    return converted_model_dir()


@pytest.fixture(scope="session")
def torch_server(model_dir):
    """The real server on the PyTorch engine (CPU) from the converted weights."""
    server = start_server({"MODEL_DIR": str(model_dir)}, timeout=300)
    yield server
    stop_server(server)
