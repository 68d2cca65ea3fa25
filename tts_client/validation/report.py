"""The results three ways: a table for people, JUnit XML for CI, JSON for everything else."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from .runner import FAIL, PASS, SKIP, CheckResult

_LABELS = {PASS: "PASS", FAIL: "FAIL", SKIP: "SKIP"}


def summary(results: list[CheckResult]) -> dict[str, int]:
    return {status: sum(r.status == status for r in results) for status in (PASS, FAIL, SKIP)}


def table(results: list[CheckResult], seconds: float) -> str:
    width = max([len(r.name) for r in results] + [5])
    lines = [f"{'CHECK':<{width}}  RESULT  {'TIME':>6}  DETAIL"]
    lines += [f"{r.name:<{width}}  {_LABELS[r.status]:<6}  {r.seconds:5.1f}s  {r.detail}" for r in results]
    counts = summary(results)
    lines.append(f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[SKIP]} skipped in {seconds:.1f} s")
    failed = [r.name for r in results if r.status == FAIL]
    if failed:
        lines.append("FAILED: " + ", ".join(failed))
    return "\n".join(lines)


def write_json(path: Path, target: str, results: list[CheckResult], seconds: float, exit_code: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "target": target,
        "seconds": round(seconds, 3),
        "exit_code": exit_code,
        "summary": summary(results),
        "checks": [
            {"name": r.name, "status": r.status, "seconds": round(r.seconds, 3), "detail": r.detail, "description": r.description}
            for r in results
        ],
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def write_junit(path: Path, target: str, results: list[CheckResult], seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    counts = summary(results)
    suite = ET.Element("testsuite", name="endpoint-validation", tests=str(len(results)), failures=str(counts[FAIL]),
                       errors="0", skipped=str(counts[SKIP]), time=f"{seconds:.3f}")
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="target", value=target)
    for result in results:
        case = ET.SubElement(suite, "testcase", classname="endpoint." + result.name.split(".")[0],
                             name=result.name, time=f"{result.seconds:.3f}")
        if result.status == FAIL:
            ET.SubElement(case, "failure", message=result.detail).text = result.description
        elif result.status == SKIP:
            ET.SubElement(case, "skipped", message=result.detail)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
