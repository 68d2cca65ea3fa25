"""The demo page in headless Chromium against the real server and model: what a person
using it would notice (audio plays, words light up as heard, TTFA shows, Stop stops,
pipelining queues, errors read as the server wrote them)."""

from __future__ import annotations

import math
import re

from demo_page import set_range, speak, wait_finished, wait_until
from tts_text.chunker import SentenceChunker
from tts_client.events import ErrorEvent
from tts_client.session import Session

TWO_SENTENCES = "こんにちは。今日はいい天気ですね。"
LONG = ("本日はご来店いただき、誠にありがとうございます。ただいま春の新商品を多数取り揃えております。"
        "気になる商品がございましたら、お気軽にスタッフまでお声がけください。")


async def test_the_voice_list_comes_from_the_servers_session(speech_server, open_page):
    page = await open_page(speech_server.http_url + "/")
    async with await Session.websocket(speech_server.ws_url) as session:
        created = await session.open()
    assert await page.evaluate("demoState.speakers") == created.speakers
    options = await page.eval_on_selector_all("#speakers option", "els => els.map(e => e.value)")
    assert options == created.speakers and "jf_alpha" in options


async def test_speaking_schedules_the_audio_and_lights_every_word_in_order_as_it_is_heard(speech_server, open_page):
    page = await open_page(speech_server.http_url + "/")
    await speak(page, TWO_SENTENCES)
    response = (await wait_finished(page, "r1"))["r1"]
    assert response["status"] == "completed"
    # Every sample the server sent was scheduled, in chunks, back to back.
    assert response["chunks"] >= 2
    assert abs(response["audioMs"] - response["usageAudioMs"]) < 1
    words = [w for w in await page.evaluate("demoState.highlighted") if w["response_id"] == "r1"]
    # The alignments cover the text, so the lit words in order spell it out.
    assert "".join(w["text"] for w in words) == TWO_SENTENCES
    assert [w["start_char"] for w in words] == sorted({w["start_char"] for w in words})
    # Each word lit up once the audio clock reached it, in the order heard.
    assert all(w["at"] >= w["due"] for w in words)
    assert [w["due"] for w in words] == sorted(w["due"] for w in words)
    lit = await page.eval_on_selector_all("li[data-response-id=r1] .word.spoken, li[data-response-id=r1] .word.current",
                                          "els => els.length")
    assert lit == len(words)
    shown_ttfa = await page.text_content("li[data-response-id=r1] .ttfa")
    # Math.round: halves up (Python's round takes them to even)
    assert re.fullmatch(r"\d+ ms", shown_ttfa) and int(shown_ttfa.split()[0]) == math.floor(response["ttfaMs"] + 0.5)
    assert re.fullmatch(r"\d+\.\d\d", await page.text_content("li[data-response-id=r1] .rtf"))


async def test_speaking_again_while_speaking_queues_and_plays_after(speech_server, open_page):
    page = await open_page(speech_server.http_url + "/")
    await speak(page, TWO_SENTENCES)
    await speak(page, "さようなら。")
    responses = await wait_finished(page, "r1", "r2")
    first, second = responses["r1"], responses["r2"]
    assert first["status"] == second["status"] == "completed"
    assert second["history"][:3] == ["sent", "queued", "speaking"]
    # One session, and the second response's audio starts after the first's has ended.
    assert await page.evaluate("demoState.sessionsOpened") == 1
    assert second["firstStart"] >= first["lastEnd"] - 1e-6


async def test_stop_cancels_the_active_and_the_queued_response_and_silences_the_page(speech_server, open_page):
    page = await open_page(speech_server.http_url + "/")
    await speak(page, LONG)
    await speak(page, TWO_SENTENCES)
    await wait_until(page, "demoState.responses.r1.chunks >= 1")
    await page.click("#stop")
    assert await page.evaluate("demoState.playing") == 0
    scheduled = await page.evaluate("demoState.chunksScheduled")
    responses = await wait_finished(page, "r1", "r2")
    assert responses["r1"]["status"] == "cancelled" and responses["r2"]["status"] == "cancelled"
    assert "speaking" not in responses["r2"]["history"]
    # Nothing that arrived after Stop was played, and the server had nothing to complain about.
    assert await page.evaluate("demoState.chunksScheduled") == scheduled
    assert await page.evaluate("demoState.errors") == []
    # The session goes on.
    await speak(page, "はい。")
    assert (await wait_finished(page, "r3"))["r3"]["status"] == "completed"


async def test_a_bad_voice_shows_the_servers_error_as_written_and_the_session_goes_on(speech_server, open_page):
    async with await Session.websocket(speech_server.ws_url) as session:
        await session.open()
        await session.send({"type": "response.create", "text": "はい。", "speaker_id": "nobody", "response_id": "x"})
        expected = (await session.wait_for(lambda e: isinstance(e, ErrorEvent), 30)).error
    page = await open_page(speech_server.http_url + "/")
    await page.fill("#voice", "nobody")
    await speak(page, "はい。")
    errors = await wait_until(page, "demoState.errors.length > 0 && demoState.errors")
    assert errors == [{"code": expected.code, "message": expected.message, "response_id": "r1"}]
    shown = await page.text_content("#errors li")
    assert expected.message in shown and expected.code in shown
    assert await page.evaluate("demoState.responses.r1.status") == "rejected"
    await page.fill("#voice", "jf_nezumi")
    await speak(page, "はい。")
    assert (await wait_finished(page, "r2"))["r2"]["status"] == "completed"


async def test_agent_mode_sends_each_sentence_while_the_llm_is_still_writing(speech_server, open_page):
    page = await open_page(speech_server.http_url + "/")
    await page.check("#agent")
    await set_range(page, "#rate", 40)
    answer = "はい、わかりました。明日は晴れです。傘はいりません。"
    await speak(page, answer)
    agent = await wait_until(page, "demoState.agent && demoState.agent.llmDoneMs !== null && demoState.agent")
    await wait_finished(page, *[f"r{i}" for i in range(1, len(agent["sentences"]) + 1)])
    # The same cuts a Python voice agent's chunker makes on the same two-character tokens.
    chunker = SentenceChunker()
    expected = [s for i in range(0, len(answer), 2) for s in chunker.feed(answer[i:i + 2])] + chunker.flush()
    assert agent["sentences"] == expected == ["はい、わかりました。", "明日は晴れです。", "傘はいりません。"]
    assert agent["sentAtMs"][0] < agent["llmDoneMs"]  # streamed, not waited for
    agent = await page.evaluate("demoState.agent")
    assert agent["firstAudioMs"] is not None

    await page.check("#agent-batch")
    await speak(page, answer)
    agent = await wait_until(page, "demoState.agent.mode === 'batch' && demoState.agent.llmDoneMs !== null && demoState.agent")
    assert agent["sentences"] == [answer] and agent["sentAtMs"][0] >= agent["llmDoneMs"]
