"""Shared fixtures. The server helpers live in running_server.py."""

import os

import pytest
from converted_model import convert_model_dir
from cores import ENGINE_THREADS
from filelock import FileLock
from running_server import start_server, stop_server

# Every engine of the run takes its share of the cores (cores.py): the servers through their
# setting, the PyTorch engine in process through torch's default (read when torch loads).
# Set, not defaulted: xdist's workers inherit the environment of the process that counted no workers.
os.environ["INFERENCE_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(ENGINE_THREADS)


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` with the PyTorch server's files as one unit (worker_groups.py)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from worker_groups import TorchServerFilesTogether

    return TorchServerFilesTogether(config, log)


@pytest.fixture(scope="session")
def speech_server():
    """The real server on the embedded Kokoro model, shared by every test of the run."""
    server = start_server({"ENGINE": "onnx"})
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def converted_model_dir(tmp_path_factory):
    """`make model-dir`'s output (config.json, kokoro-v1_0.pth, voices/, SHA256SUMS), once per run
    however many workers the run has: the first to need it converts, under a lock, into the
    run's shared temporary directory. Read only: a test that rewrites it copies it first."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the workers' basetemps are siblings in the run's own directory
    directory = shared / "model-dir"
    with FileLock(str(shared / "model-dir.lock")):
        if not (directory / "SHA256SUMS").is_file():
            convert_model_dir(directory)
    return directory


@pytest.fixture(scope="session")
def model_dir(converted_model_dir):
    """The converted weights the PyTorch engine's tests serve from: this run's own conversion,
    the one the conversion tests check (a second, cached copy cost a conversion a run)."""
    return converted_model_dir


@pytest.fixture(scope="session")
def torch_server(model_dir):
    """The real server on the PyTorch engine (CPU) from the converted weights."""
    server = start_server({"MODEL_DIR": str(model_dir)})
    yield server
    stop_server(server)
