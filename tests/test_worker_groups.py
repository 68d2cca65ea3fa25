"""The PyTorch server's files are grouped on one worker: every one of them, and only they."""

import re
from pathlib import Path

from worker_groups import TORCH_SERVER_FILES, scope

REPO = Path(__file__).resolve().parent.parent


def test_every_file_that_uses_the_torch_server_is_in_its_group():
    users = {path.relative_to(REPO).as_posix() for path in (REPO / "tests").rglob("test_*.py")
             if path != Path(__file__).resolve() and re.search(r"\btorch_server\b", path.read_text(encoding="utf-8"))}
    assert users == TORCH_SERVER_FILES


def test_the_group_is_one_unit_and_other_files_stay_their_own():
    assert {scope(f"{file}::test_x[torch_server]") for file in TORCH_SERVER_FILES} == {"torch_server"}
    assert scope("tests/text/test_chunker.py::test_spans_index_the_fed_text") == "tests/text/test_chunker.py"
