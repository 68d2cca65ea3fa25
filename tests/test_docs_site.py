"""The docs site (mkdocs.yml over docs/) builds with --strict, and strict means it: a broken
link, a missing anchor or a page the nav names but docs/ lacks each stop the build."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

mkdocs_build = pytest.importorskip("mkdocs.commands.build")
from mkdocs.config import load_config  # noqa: E402
from mkdocs.exceptions import Abort  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # the theme's end-of-life notice


def build(site: Path, docs: Path | None = None) -> None:
    options = {"docs_dir": str(docs)} if docs else {}
    mkdocs_build.build(load_config(str(REPO / "mkdocs.yml"), strict=True, site_dir=str(site), **options))


def test_the_site_builds_strictly_with_the_generated_references(tmp_path):
    build(tmp_path / "site")
    api = (tmp_path / "site" / "client-api" / "index.html").read_text()
    assert 'id="tts_client.session.Session.create"' in api  # mkdocstrings read the docstrings
    assert "invalid_request_error" in (tmp_path / "site" / "errors" / "index.html").read_text()
    assert "namePrefix" in (tmp_path / "site" / "cdk-context" / "index.html").read_text()


FAULTS = {
    "a link to a page that does not exist": ("deploy.md", "[scaling](scaling.md)", "[scaling](scalin.md)"),
    "a link to an anchor that does not exist": ("pipeline.md", "cdk-context.md#stages-and-the-pipeline",
                                                "cdk-context.md#stages"),
    "a page the nav names, missing": ("costs.md", None, None),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_broken_link_or_a_missing_page_stops_the_build(tmp_path, fault):
    page, good, bad = FAULTS[fault]
    docs = shutil.copytree(REPO / "docs", tmp_path / "docs")
    if good is None:
        (docs / page).unlink()
    else:
        text = (docs / page).read_text()
        assert good in text
        (docs / page).write_text(text.replace(good, bad))
    with pytest.raises(Abort):
        build(tmp_path / "site", docs)
