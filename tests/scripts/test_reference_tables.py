"""The CDK context and error code references (docs/cdk-context.md, docs/errors.md) are generated
from the code (stacks/config.py and cdk.json; wire/errors.py): up to date, and a change to the
source they come from makes the check fail until they are regenerated."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

import cdk_context_table  # noqa: E402
import error_codes_table  # noqa: E402


@pytest.mark.parametrize("script", ["cdk_context_table.py", "error_codes_table.py"])
def test_the_reference_is_up_to_date(script):
    result = subprocess.run([sys.executable, str(SCRIPTS / script), "--check"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def check(module) -> int:
    return module.generate(module.TABLE, module.FILES, module.REPO, "x", ["--check"])


def test_a_changed_cdk_default_or_field_makes_the_check_fail(tmp_path, monkeypatch):
    assert check(cdk_context_table) == 0
    cdk = json.loads(cdk_context_table.CDK_JSON.read_text())
    cdk["context"]["maxInstanceCount"] = 7
    (tmp_path / "cdk.json").write_text(json.dumps(cdk))
    monkeypatch.setattr(cdk_context_table, "CDK_JSON", tmp_path / "cdk.json")
    assert check(cdk_context_table) == 1
    assert "| `maxInstanceCount` | `7` |" in cdk_context_table.table()
    monkeypatch.undo()
    field = cdk_context_table.DeploymentConfig.model_fields["max_instance_count"]
    monkeypatch.setattr(field, "description", "a meaning added in stacks/config.py")
    assert check(cdk_context_table) == 1


def test_a_changed_error_code_makes_the_check_fail(monkeypatch):
    assert check(error_codes_table) == 0
    monkeypatch.setitem(error_codes_table.HTTP_STATUS, error_codes_table.ErrorCode.REQUEST_STALE, 410)
    assert check(error_codes_table) == 1
    assert "| `request_stale` | 410 |" in error_codes_table.table()


def test_every_key_cdk_json_sets_is_in_the_reference():
    page = (SCRIPTS.parent / "docs" / "cdk-context.md").read_text()
    keys = [k for k in json.loads(cdk_context_table.CDK_JSON.read_text())["context"] if not k.startswith("@")]
    assert [k for k in keys if f"`{k}`" not in page] == []
