"""Headless Chromium (Debian's `chromium`, driven by Playwright; nothing downloads a browser)
against the real server, and `make demo`'s bridge in front of the local SageMaker gateway."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import pytest_asyncio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))  # demo_bridge

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",  # Web Audio runs without a click
]


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"browser tests skipped: no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "browser tests skipped: the playwright package is not installed (make setup)"
    return None


def pytest_collection_modifyitems(config, items):
    # Skipped before any fixture runs: no server is started for a test that cannot run.
    reason = _missing()
    for item in items:
        if reason and "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest_asyncio.fixture(scope="session")
async def browser():
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        await launched.close()


@pytest_asyncio.fixture
async def open_page(browser):
    """open_page(url): a fresh page on the demo, once its session is open. Script errors fail the test."""
    pages, script_errors = [], []

    async def open_at(url: str):
        page = await browser.new_page()
        page.on("pageerror", lambda error: script_errors.append(error))
        pages.append(page)
        await page.goto(url)
        await page.wait_for_function("window.demoState && window.demoState.ready", timeout=60_000)
        return page

    yield open_at
    for page in pages:
        await page.close()
    assert not script_errors, f"script errors on the page: {script_errors}"
