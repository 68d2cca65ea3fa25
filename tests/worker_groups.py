"""Which test files share a worker under `--dist loadfile` (tests/conftest.py's scheduler).

The PyTorch server costs a worker ~20-30 s to start (weights, every language's G2P, warm-up):
the files that use it go to one worker as one unit, so that a run starts it once. xdist's own
loadgroup groups single tests, which would split every other file's module fixtures across
the workers. test_worker_groups.py keeps the list whole.
"""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling

TORCH_SERVER_FILES = frozenset({
    "tests/container/test_device.py",
    "tests/scripts/test_validate_torch_engine.py",
    "tests/server/engine/test_engine_selection.py",
    "tests/server/families/test_language_from_text.py",
    "tests/server/transport/test_session_silence.py",
})


def scope(nodeid: str) -> str:
    """The unit a test is sent to a worker in: its file, or the group its file is in."""
    file = nodeid.split("::", 1)[0]
    return "torch_server" if file in TORCH_SERVER_FILES else file


class TorchServerFilesTogether(LoadFileScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return scope(nodeid)
