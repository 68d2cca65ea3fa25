"""The settings tables of docs/ are the settings model's own (generated, never edited)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "settings_tables.py"


def test_the_settings_tables_match_the_settings_model():
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_drifted_table_is_found(tmp_path, monkeypatch):
    sys.path.insert(0, str(SCRIPT.parent))
    import settings_tables

    readme = tmp_path / "page.md"
    readme.write_text("x\n<!-- settings:limits -->\n| stale |\n<!-- /settings -->\n")
    monkeypatch.setattr(settings_tables, "FILES", [readme])
    monkeypatch.setattr(settings_tables, "REPO", tmp_path)
    monkeypatch.setattr(sys, "argv", ["settings_tables.py", "--check"])
    assert settings_tables.main() == 1
    monkeypatch.setattr(sys, "argv", ["settings_tables.py"])
    settings_tables.main()
    assert "`WS_MAX_PENDING_RESPONSES` | `15`" in readme.read_text() and "| stale |" not in readme.read_text()
