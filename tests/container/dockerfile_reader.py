"""Reads container/Dockerfile (no Docker engine here): instructions, stages, ENV, USER."""

from __future__ import annotations

import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "container" / "Dockerfile"
REQUIREMENTS = REPO / "container" / "requirements.txt"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    logical, pending = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1].strip()) for text in logical]


def stages() -> dict[str, list[tuple[str, str]]]:
    """Instructions per build stage, by stage name; the last (unnamed) stage is "final"."""
    found: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] = []
    for name, arg in instructions():
        if name == "FROM":
            words = arg.split()
            current = found.setdefault(words[2] if len(words) == 3 else "final", [("FROM", words[0])])
            continue
        current.append((name, arg))
    return found


def args(name: str, stage: str | None = None) -> list[str]:
    return [a for i, a in (stages()[stage] if stage else instructions()) if i == name]


def image_stages() -> list[str]:
    """The stages the final image is made of: final and the ones it is FROM."""
    chain, stage = ["final"], stages()["final"][0][1]
    while stage in stages():
        chain.append(stage)
        stage = stages()[stage][0][1]
    return chain


def image_args(name: str) -> list[str]:
    return [a for stage in image_stages() for a in args(name, stage)]


def env(stage: str = "final") -> dict[str, str]:
    values = {}
    for stage_name in reversed(image_stages() if stage == "final" else [stage]):
        for arg in args("ENV", stage_name):
            for pair in shlex.split(arg):
                key, _, value = pair.partition("=")
                values[key] = value
    return values


def runtime_user() -> dict[str, str]:
    """The final USER and the useradd options that created it."""
    [user] = args("USER", "final")
    [useradd] = [cmd for run in args("RUN", "final") for cmd in run.split("&&") if "useradd" in cmd]
    words = useradd.split()
    assert words[-1] == user
    with_value = {"--uid", "--gid", "--home-dir", "--shell"}
    options = {w: words[i + 1] for i, w in enumerate(words[:-1]) if w in with_value}
    return {"name": user, "uid": options["--uid"], "gid": options["--gid"], "home": options["--home-dir"]}
