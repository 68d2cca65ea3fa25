"""The README routes a newcomer: its paths table is on the first screen, and its local
quickstarts work as written (`make say` as make expands it, and each Python block marked
`<!-- quickstart: local -->`, run against the real server)."""

import ast
import re
import shlex
import subprocess
import sys
import wave
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
LOCAL = "127.0.0.1:8080"  # where the README's `make run` serves


def test_the_paths_table_is_on_the_first_screen_with_a_first_command_for_each_path():
    screen = README.splitlines()[:40]
    rows = [line for line in screen if line.startswith("| ") and not line.startswith("| you want to")]
    paths = [row.split(" | ")[0].removeprefix("| ") for row in rows]
    assert len(paths) >= 6 and any("locally" in p for p in paths) and any("deploy" in p for p in paths), paths
    assert all("`" in row.split(" | ")[1] for row in rows), "each path names its first command"
    assert len(README.splitlines()) < 400


def local_quickstarts(server) -> list[str]:
    blocks = re.findall(r"<!-- quickstart: local -->\n```python\n(.*?)```", README, re.S)
    assert len(blocks) >= 2
    return [block.replace(f"ws://{LOCAL}", server.ws_url.rsplit("/", 1)[0]).replace(f"http://{LOCAL}", server.http_url)
            for block in blocks]


async def test_the_client_library_quickstart_speaks(speech_server, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code = next(block for block in local_quickstarts(speech_server) if "Session.websocket" in block)
    namespace: dict = {}
    await eval(compile(code, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), namespace)
    seconds = len(namespace["pcm"]) / 2 / 24000  # 16-bit mono at 24 kHz, as the comment says
    assert seconds > 1.5, seconds  # both sentences


def test_the_openai_sdk_quickstart_writes_a_playable_file(speech_server, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code = next(block for block in local_quickstarts(speech_server) if "OpenAI(" in block)
    exec(compile(code, "README.md", "exec"), {})
    with wave.open(str(tmp_path / "hello.wav")) as audio:
        assert audio.getnframes() / audio.getframerate() > 0.5


def test_make_say_as_written_writes_the_sentence(speech_server, tmp_path):
    line = next(line for line in README.splitlines() if line.startswith("make say "))
    args = shlex.split(line.split("#")[0])[2:]  # TEXT=... OUT=...
    out = tmp_path / "hello.wav"
    args = [f"OUT={out}" if arg.startswith("OUT=") else arg for arg in args]
    port = speech_server.http_url.rsplit(":", 1)[1]
    venv = Path(sys.executable).parent.parent
    # make -n: the command `make say` runs (its setup prerequisite is `make setup`'s, not this test's)
    recipe = subprocess.run(["make", "-n", "say", *args, f"PORT={port}", f"VENV={venv}"], cwd=REPO,
                            capture_output=True, text=True, timeout=60, check=True).stdout
    command = next(line for line in recipe.splitlines() if "scripts/say.py" in line)
    result = subprocess.run(command, shell=True, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    with wave.open(str(out)) as audio:
        assert audio.getnframes() / audio.getframerate() > 1.5  # こんにちは、今日はいい天気ですね。
