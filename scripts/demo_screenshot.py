#!/usr/bin/env python3
"""The docs' picture of the demo page (docs/images/demo.png), taken in headless Chromium.

Starts the speech server (container/serve) on a free loopback port unless --url is given,
speaks two responses and takes the picture while the second one is being heard, a word lit.
Uses Debian's chromium (no browser is downloaded); Japanese text needs a CJK font
(Debian: fonts-ipafont-gothic or fonts-noto-cjk), else it shows as boxes.

    .venv/bin/python scripts/demo_screenshot.py --out docs/images/demo.png
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.async_api import async_playwright

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--autoplay-policy=no-user-gesture-required"]
FIRST = "こんにちは。今日はいい天気ですね。"
SECOND = "本日はご来店いただき、誠にありがとうございます。ただいま春の新商品を多数取り揃えております。"


def start_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(REPO / "container" / "serve")],
                               env=os.environ | {"HOST": "127.0.0.1", "PORT": str(port)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/ping", timeout=2) as reply:
                if reply.status == 200:
                    return process, url
        except OSError:
            time.sleep(0.3)
    process.terminate()
    raise TimeoutError("the server did not become ready")


async def take(url: str, out: Path, chromium: str) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = await browser.new_page(viewport={"width": 1100, "height": 820}, device_scale_factor=1)
        await page.goto(url + "/")
        await page.wait_for_function("window.demoState && demoState.ready", timeout=60_000)
        await page.fill("#text", FIRST)
        await page.click("#speak")
        await page.wait_for_function("demoState.responses.r1?.status === 'completed' && demoState.playing === 0",
                                     timeout=180_000)
        await page.fill("#text", SECOND)
        await page.click("#speak")
        await page.wait_for_function("demoState.highlighted.filter(w => w.response_id === 'r2').length >= 6",
                                     timeout=180_000, polling=20)
        out.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(out), full_page=True)
        await browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running server (default: start one)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "demo.png")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args()
    process, url = (None, args.url.rstrip("/")) if args.url else start_server()
    try:
        asyncio.run(take(url, args.out, args.chromium))
    finally:
        if process:
            process.terminate()
            process.wait(10)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
