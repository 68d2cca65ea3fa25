"""Every repository path that the docs, comments, docstrings and build files cite exists (and a
cited test, `path.py::name`, is defined there), so a move or a rename cannot leave a stale
pointer behind.

What counts as a cited path, so that real ones are caught without false alarms:
- a run of slash-separated names not inside a URL or an absolute path;
- whose first name is a top-level directory of the repository (`tests/conftest.py`,
  `docs/benchmarks/*.json`), or a directory name found in the repository with a file name or a
  trailing slash at its end (`families/openai/fields.py`, read from `container/tts_server/`);
  MIME types (`audio/mpeg`) and third-party paths (`kokoro/istftnet.py`) are neither;
- outputs the repository ignores (`reports/bench.json`, `cdk.out/`) and paths outside it
  (`../shared/GPU.md`) are left out.
Python files are read whole (a path in a string literal is cited too), as are the docs and the
build files. A relative one may be read from the repository root, `container/`, `container/tts_server/`,
`tests/`, `tests/server/` (the layouts the docs and comments use) or the citing file's folder.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCANNED = (".py", ".md", ".mk", ".txt", ".toml", ".yml", ".js", ".html", ".sh", ".json")
SCANNED_NAMES = {"Makefile", "Dockerfile", "serve", "run", "find-python"}
# Data, not prose; and this file, whose examples are stale on purpose.
NOT_SCANNED = ("docs/benchmarks/", "package-lock.json", "package.json", "tests/test_cited_paths.py")
ANCHORS = ("", "container", "container/tts_server", "tests", "tests/server")
CANDIDATE = re.compile(r"(?<![\w./:@$-])((?:\.\.?/)*[\w.-]+(?:/[\w.*-]+)+/?)(?:::(\w+))?")
FILE_NAME = re.compile(r"\.[a-z]{1,5}$|^(Makefile|Dockerfile)$")


def tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()


def ignored(paths: list[str]) -> set[str]:
    result = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=REPO, input="\n".join(paths),
                            capture_output=True, text=True)
    return set(result.stdout.split())


class Layout:
    """The repository's directories: which names start a cited path, and where one resolves."""

    def __init__(self, root: Path, files: list[str]):
        self.root = root
        self.top = {f.split("/")[0] for f in files if "/" in f}
        self.dirs = {part for f in files for part in f.split("/")[:-1]}

    def cited(self, text: str):
        """(path, test name or None, line) for each string in text that looks like a repository path."""
        for match in CANDIDATE.finditer(text):
            path, name = match.group(1).rstrip("."), match.group(2)
            parts = path.split("/")
            first = next(p for p in parts if p not in (".", ".."))
            if parts[0] == "..":
                if not (self.root / path).resolve().is_relative_to(self.root):
                    continue  # outside the repository
            elif first in self.top:
                pass
            elif not (first in self.dirs and (FILE_NAME.search(parts[-1]) or path.endswith("/"))):
                continue
            yield path, name, text.count("\n", 0, match.start()) + 1

    def resolves(self, path: str, citing: Path) -> Path | None:
        bases = [self.root / a for a in ANCHORS] + [citing.parent]
        for base in bases:
            if "*" in path:
                if next(iter(base.glob(path)), None):
                    return base
            elif (base / path).exists():
                return base / path
        return None

    def stale(self, texts: dict[Path, str]) -> list[str]:
        """What each citing file (its text) cites that does not exist."""
        cited = [(citing, *c) for citing, text in texts.items() for c in self.cited(text)]
        outputs = ignored(sorted({path for _, path, _, _ in cited}))
        found = []
        for citing, path, name, line in cited:
            if path in outputs:
                continue
            where = f"{citing.relative_to(self.root)}:{line}"
            target = self.resolves(path, citing)
            if target is None:
                found.append(f"{where}: {path} does not exist")
            elif name and target.is_file() and not re.search(rf"^\s*(async def|def|class) {name}\b",
                                                             target.read_text(), re.M):
                found.append(f"{where}: {path} defines no {name}")
        return found


def scanned(files: list[str]) -> list[str]:
    return [f for f in files if (f.endswith(SCANNED) or f.split("/")[-1] in SCANNED_NAMES)
            and not f.startswith(NOT_SCANNED)]


def test_every_cited_path_exists():
    files = tracked()
    layout = Layout(REPO, files)
    texts = {REPO / f: (REPO / f).read_text() for f in scanned(files)}
    assert sum(1 for text in texts.values() for _ in layout.cited(text)) > 300  # the extraction finds them (437 today)
    stale = layout.stale(texts)
    assert not stale, "\n".join(stale)


@pytest.fixture
def layout() -> Layout:
    return Layout(REPO, tracked())


@pytest.mark.parametrize("text", [
    "see families/openai/fields.py",  # read from container/tts_server/
    "tests/conftest.py holds speech_server",
    "(tests/server/families/test_bulbul_sdk.py)",
    "scripts/settings_tables.py --check",
    "docs/benchmarks/*.json",
    "tests/server/families/test_blog_http.py::test_mp3_is_a_bare_frame_stream",
    "the [protocol](protocol.md) and [images](images/demo.png)",
])
def test_real_paths_resolve(layout, text):
    assert list(layout.cited(text)) and not layout.stale({REPO / "docs" / "index.md": text})


@pytest.mark.parametrize("text", [
    "tests/server/test_bulbul_sdk.py",  # moved to tests/server/families/
    "container/tts_server/engine/nothing.py",
    "families/openai/voice_map.py",
    "docs/benchmarks/*.csv",
    "tests/server/families/test_blog_http.py::test_that_was_renamed",
    "mk/nothing.mk",
])
def test_a_stale_path_is_found(layout, text):
    assert layout.stale({REPO / "README.md": text})


@pytest.mark.parametrize("text", [
    "Content-Type: audio/mpeg or audio/L16",  # MIME types
    "kokoro/istftnet.py upstream",  # another project's file
    "https://github.com/hexgrad/kokoro/blob/main/docs/x.md",
    "/opt/ml/model/model-dir and $(VENV)/bin/python",
    "reports/bench.json and cdk.out/validation-report.json",  # ignored outputs
    "../shared/GPU.md",  # beside the repository, not in it
    "read/write and input/output, 1/2",
])
def test_what_is_not_a_repository_path_is_left_alone(layout, text):
    assert not layout.stale({REPO / "scripts" / "bench.py": text})
