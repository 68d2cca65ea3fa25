"""Helpers for the browser tests: conditions on window.demoState, awaited on the page."""

from __future__ import annotations

FINAL = "['completed', 'cancelled', 'failed', 'truncated', 'rejected', 'disconnected']"


async def wait_until(page, expression: str, timeout_s: float = 180):
    """Waits for a JavaScript condition, returns its value (the model runs on a shared CPU: be patient)."""
    await page.wait_for_function(expression, timeout=timeout_s * 1000, polling=50)
    return await page.evaluate(expression)


async def wait_finished(page, *response_ids: str) -> dict:
    """Waits until every response is final and all its audio has played; returns demoState.responses."""
    ids = ", ".join(f"'{rid}'" for rid in response_ids)
    await wait_until(page, f"[{ids}].every(id => demoState.responses[id] && {FINAL}.includes(demoState.responses[id].status))"
                           " && demoState.playing === 0")
    return await page.evaluate("demoState.responses")


async def speak(page, text: str) -> None:
    await page.fill("#text", text)
    await page.click("#speak")


async def set_range(page, selector: str, value) -> None:
    await page.eval_on_selector(selector, "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }", str(value))
