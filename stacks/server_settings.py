"""The server settings a deploy may set (context key `serverSettings`), checked at synth.

The server declares every setting once, as a field of `Settings` in
container/tts_server/settings.py or of a client family's `FamilySettings` subclass in
families/<name>/settings.py (its environment variable is the field's name upper-cased).
The stacks do not import the server (its packages are not in the pipeline's synth venv), so
the names are read from those files' syntax trees: a setting added there can be set here at
once, and a name that is not a setting stops the synth instead of starting an endpoint that
ignores it. Values are checked by the server itself when it starts (`Settings.from_env`,
which names the variable); a value that does not fit keeps /ping at 503, and the deploy fails.

A few variables belong to the deploy, not to a person: they follow from other context keys
(RESERVED says which), so setting them here is refused with the key to use instead.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "container" / "tts_server"
SETTINGS_FILE = SERVER / "settings.py"
SETTINGS_CLASS = "Settings"
FAMILY_SETTINGS_BASE = "FamilySettings"
# variable -> why a deploy may not set it through serverSettings
RESERVED = {
    "HOST": "SageMaker's container contract: every interface (the image sets 0.0.0.0)",
    "PORT": "SageMaker's container contract: 8080",
    "MODEL_DIR": "the deploy mounts the weights at /opt/ml/model",
    "ENGINE": "set by instanceType and cpuEngine",
    "DEVICE": "set by instanceType (cuda on GPU types, cpu on CPU types)",
    "WS_MAX_PENDING_RESPONSES": "set by wsMaxPendingResponses (the validator is told the same)",
    "TTS_LOAD_GATE": "tests only",
}


@cache
def setting_names() -> tuple[str, ...]:
    """The environment variable of every field of Settings, then of each family's settings."""
    names = _fields(SETTINGS_FILE, lambda node: node.name == SETTINGS_CLASS)
    for path in sorted(SERVER.glob("families/*/settings.py")):
        names += _fields(path, lambda node: any(isinstance(b, ast.Name) and b.id == FAMILY_SETTINGS_BASE
                                                for b in node.bases))
    return tuple(dict.fromkeys(field.upper() for field in names))


def _fields(path: Path, wanted) -> tuple[str, ...]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return tuple(node.target.id for cls in tree.body if isinstance(cls, ast.ClassDef) and wanted(cls)
                 for node in cls.body
                 if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                 and not node.target.id.startswith("_") and node.target.id != "model_config")


def settable() -> tuple[str, ...]:
    return tuple(name for name in setting_names() if name not in RESERVED)


def check(settings: dict[str, object]) -> dict[str, str]:
    """The environment a deploy adds to the container, as strings; ValueError names each bad entry."""
    problems, environment = [], {}
    for name, value in settings.items():
        if name in RESERVED:
            problems.append(f"{name}: not settable here ({RESERVED[name]})")
        elif name not in setting_names():
            near = [s for s in settable() if s.lower() == str(name).lower()]
            hint = f" (did you mean {near[0]}?)" if near else ""
            problems.append(f"{name}: not a server setting{hint}")
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            environment[name] = str(value)
        else:  # true/false mean nothing to the server: its switches are 'on'/'off'
            problems.append(f"{name}: expected a string or a number as the server reads it, got {value!r}")
    if problems:
        raise ValueError("; ".join(problems) + "; a deploy may set: " + ", ".join(settable()))
    return environment
