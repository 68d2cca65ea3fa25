"""Reading the synthesized pipeline: stages and actions in order, the CodeBuild projects."""

from __future__ import annotations

import json


def stages(synth) -> list[dict]:
    return synth.one("Pipeline", "AWS::CodePipeline::Pipeline")["Stages"]


def stage_names(synth) -> list[str]:
    return [s["Name"] for s in stages(synth)]


def actions(synth, stage: str) -> list[dict]:
    """The stage's actions in run order."""
    [found] = [s for s in stages(synth) if s["Name"] == stage]
    return sorted(found["Actions"], key=lambda a: a["RunOrder"])


def project(synth, action: dict) -> dict:
    """The CodeBuild project a CodeBuild action runs."""
    return synth.templates["Pipeline"]["Resources"][action["Configuration"]["ProjectName"]["Ref"]]["Properties"]


def _joined(value, token: str = "<token>") -> str:
    """A string, or an Fn::Join of strings and tokens, with each token written as `token`."""
    if isinstance(value, str):
        return value
    return "".join(p if isinstance(p, str) else token for p in value["Fn::Join"][1])


def raw_buildspec(synth, action: dict):
    return project(synth, action)["Source"]["BuildSpec"]


def buildspec(synth, action: dict) -> dict:
    """The project's buildspec, parsed; CloudFormation tokens in it read "<token>"."""
    return json.loads(_joined(raw_buildspec(synth, action)))


def action_env(action: dict) -> dict[str, dict]:
    """The environment variables a CodeBuild action passes, by name."""
    raw = action["Configuration"].get("EnvironmentVariables")
    if raw is None:
        return {}
    return {v["name"]: v for v in json.loads(_joined(raw))}
