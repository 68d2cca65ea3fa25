"""Reads container/Dockerfile (no Docker engine here): instructions, stages, ENV, USER."""

from __future__ import annotations

import re
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


def arg_defaults(instructions_: list[tuple[str, str]]) -> dict[str, str]:
    """NAME -> default of the ARG instructions among these ('' for an ARG without one)."""
    pairs = (arg.partition("=") for name, arg in instructions_ if name == "ARG")
    return {key: value for key, _, value in pairs}


def global_args() -> dict[str, str]:
    """The ARGs before the first FROM: the only ones a FROM line may use."""
    found = instructions()
    first_from = next(i for i, (name, _) in enumerate(found) if name == "FROM")
    return arg_defaults(found[:first_from])


def resolve(text: str, values: dict[str, str]) -> str:
    """`${NAME}` and `$NAME` replaced by their values, as the builder does."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values[m.group(1) or m.group(2)], text)


def stages(build_args: dict[str, str] | None = None) -> dict[str, list[tuple[str, str]]]:
    """Instructions per build stage, by stage name; the last (unnamed) stage is "final". The
    FROM lines' images are resolved with the global ARGs' defaults and `build_args`."""
    values = global_args() | (build_args or {})
    found: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] = []
    for name, arg in instructions():
        if name == "FROM":
            words = arg.split()
            current = found.setdefault(words[2] if len(words) == 3 else "final", [("FROM", resolve(words[0], values))])
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


def runtime_user(build_args: dict[str, str] | None = None) -> dict[str, str]:
    """The final USER (its ARG resolved with `build_args` over the defaults): its name and uid,
    and for the image's own user the gid and home its useradd gave it."""
    [user] = args("USER", "final")
    user = resolve(user, arg_defaults(stages()["final"]) | (build_args or {}))
    if user == "root":
        return {"name": "root", "uid": "0", "gid": "0", "home": "/root"}
    [useradd] = [cmd for run in args("RUN", "final") for cmd in run.split("&&") if "useradd" in cmd]
    words = useradd.split()
    assert words[-1] == user
    with_value = {"--uid", "--gid", "--home-dir", "--shell"}
    options = {w: words[i + 1] for i, w in enumerate(words[:-1]) if w in with_value}
    return {"name": user, "uid": options["--uid"], "gid": options["--gid"], "home": options["--home-dir"]}
