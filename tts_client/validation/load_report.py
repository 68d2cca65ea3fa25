"""The load stage's results: a table for people, JSON for everything else, JUnit for CI.

JUnit has one test case per level, failed with the budget's misses, its figures as
properties: a CodeBuild report group keeps them for failed runs too.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import asdict
from pathlib import Path

from .load import Budget

COLUMNS = ("sessions", "responses", "ttfa_p50_ms", "ttfa_p95_ms", "ttfa_p99_ms", "audio_s_per_s", "sheds", "errors")


def document(target: str, budget: Budget, plan: dict, levels: list[dict], exit_code: int,
             unreachable: str | None = None) -> dict:
    report = {"benchmark": "load-stage", "target": target, "budget": asdict(budget), "plan": plan,
              "levels": levels, "passed": exit_code == 0, "exit_code": exit_code}
    return report | ({"unreachable": unreachable} if unreachable else {})


def table(report: dict) -> str:
    lines = ["  ".join(f"{name:>13}" for name in COLUMNS) + "  RESULT"]
    for level in report["levels"]:
        cells = ["-" if level[name] is None else f"{level[name]:g}" for name in COLUMNS]
        verdict = "MISS: " + "; ".join(level["misses"]) if level["misses"] else "within budget"
        lines.append("  ".join(f"{cell:>13}" for cell in cells) + "  " + verdict)
    budget = report["budget"]
    lines.append(f"budget: TTFA p95 <= {budget['ttfa_p95_ms']:g} ms, p99 <= {budget['ttfa_p99_ms']:g} ms, no shed up to "
                 f"{budget['shed_free_sessions']} sessions, no error: {'PASSED' if report['passed'] else 'FAILED'}")
    return "\n".join(lines)


def write_json(path: Path, report: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")


def write_junit(path: Path, report: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    levels = report["levels"]
    failures = sum(1 for level in levels if level["misses"]) + (1 if "unreachable" in report else 0)
    seconds = sum(level["seconds"] for level in levels)
    suite = ET.Element("testsuite", name="load-stage", tests=str(max(len(levels), failures)), failures=str(failures),
                       errors="0", skipped="0", time=f"{seconds:.3f}")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="target", value=report["target"])
    for name, value in report["budget"].items():
        ET.SubElement(properties, "property", name=f"budget.{name}", value=str(value))
    if "unreachable" in report:
        ET.SubElement(ET.SubElement(suite, "testcase", classname="load", name="load.connect", time="0"), "failure",
                      message=f"cannot reach the target: {report['unreachable']}")
    for level in levels:
        case = ET.SubElement(suite, "testcase", classname="load", name=f"load.sessions_{level['sessions']}",
                             time=f"{level['seconds']:.3f}")
        figures = ET.SubElement(case, "properties")
        for name in COLUMNS:
            ET.SubElement(figures, "property", name=name, value=str(level[name]))
        if level["misses"]:
            ET.SubElement(case, "failure", message="; ".join(level["misses"])).text = json.dumps(level, indent=2)
        ET.SubElement(case, "system-out").text = json.dumps({k: level[k] for k in COLUMNS})
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
