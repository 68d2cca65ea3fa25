"""Shared fixtures. The server helpers live in running_server.py."""

import pytest
from converted_model import convert_model_dir
from running_server import start_server, stop_server


@pytest.fixture(scope="session")
def speech_server():
    """The real server on the embedded Kokoro model, shared by every test of the run."""
    server = start_server({"ENGINE": "onnx"})
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def converted_model_dir(tmp_path_factory):
    """`make model-dir`'s output (config.json, kokoro-v1_0.pth, voices/, SHA256SUMS), once per run,
    in a directory of its own: the conversion tests rewrite it."""
    directory = tmp_path_factory.mktemp("model-dir")
    convert_model_dir(directory)
    return directory


@pytest.fixture(scope="session")
def model_dir(converted_model_dir):
    """The converted weights the PyTorch engine's tests serve from (read only): this run's own
    conversion, the one the conversion tests check (a second, cached copy cost a conversion a run)."""
    return converted_model_dir


@pytest.fixture(scope="session")
def torch_server(model_dir):
    """The real server on the PyTorch engine (CPU) from the converted weights."""
    server = start_server({"MODEL_DIR": str(model_dir)})
    yield server
    stop_server(server)
