"""The LiveKit Agents plugin against the real server, over the WebSocket and through the local
SageMaker gateway: streamed text, interruption by aclose(), pooled and renewed sessions."""

import pytest

pytest.importorskip("livekit.agents")

from livekit.agents.types import USERDATA_TIMED_TRANSCRIPT

from tts_client.integrations.livekit import KokoroStreamingTTS

RATE = 16000
ANSWER = "こんにちは。今日はいい天気ですね。"
LONG_ANSWER = "昔々、ある山の中に小さな村がありました。村の人々は毎朝早く起きて畑で働きました。夕方になると皆で集まって歌を歌いました。"


def push_like_an_llm(stream, text: str) -> None:
    for i in range(0, len(text), 3):
        stream.push_text(text[i:i + 3])


async def utterance(plugin: KokoroStreamingTTS, text: str):
    stream = plugin.stream()
    push_like_an_llm(stream, text)
    stream.flush()
    events = [event async for event in stream]
    await stream.aclose()
    return stream, events


def outcomes(plugin: KokoroStreamingTTS, stream) -> list:
    [session] = [s for s in plugin.open_sessions if s.created.session_id == stream.session_id]
    return [session.responses[response_id].done for response_id in stream.response_ids]


async def test_pushed_text_and_a_flush_give_audio_and_timed_transcripts(endpoint):
    plugin = KokoroStreamingTTS(endpoint=endpoint, sample_rate=RATE)
    try:
        stream, events = await utterance(plugin, ANSWER)
        done = outcomes(plugin, stream)
    finally:
        await plugin.aclose()
    # One response.create per sentence; all the audio the server sent, as one segment.
    assert [d.status for d in done] == ["completed", "completed"]
    assert {e.frame.sample_rate for e in events} == {RATE} and {e.segment_id for e in events} == {events[0].segment_id}
    assert [e.is_final for e in events].count(True) == 1 and events[-1].is_final
    seconds = sum(e.frame.samples_per_channel for e in events) / RATE
    assert seconds * 1000 == sum(d.audio_ms for d in done)
    # Word times that join up to the text, in order, inside the audio.
    words = [w for e in events for w in e.frame.userdata.get(USERDATA_TIMED_TRANSCRIPT, [])]
    assert len(words) > 4 and "".join(words) == ANSWER
    starts = [w.start_time for w in words]
    assert starts == sorted(starts) and all(w.start_time < w.end_time <= seconds for w in words)


async def test_aclose_mid_sentence_cancels_what_was_not_spoken(endpoint):
    plugin = KokoroStreamingTTS(endpoint=endpoint, sample_rate=RATE)
    try:
        stream = plugin.stream()
        push_like_an_llm(stream, LONG_ANSWER + "次の日")  # the LLM is still writing the fourth sentence
        first = await anext(aiter(stream))
        await stream.aclose()
        [session] = plugin.open_sessions  # back in the pool, still open
        done = [await session.responses[r].wait(60) for r in stream.response_ids]
    finally:
        await plugin.aclose()
    assert first.frame.samples_per_channel > 0
    assert len(done) == 3  # the unfinished sentence was never sent
    assert done[-1].status == "cancelled" and done[-1].audio_ms == 0


async def test_a_pool_reuses_one_session_for_two_utterances(endpoint):
    plugin = KokoroStreamingTTS(endpoint=endpoint, sample_rate=RATE)
    try:
        first, first_events = await utterance(plugin, "はい。")
        second, second_events = await utterance(plugin, "いいえ。")
        sessions = plugin.open_sessions
    finally:
        await plugin.aclose()
    assert first.session_id == second.session_id and len(sessions) == 1
    assert first_events and second_events
    assert plugin.open_sessions == []  # aclose() closed it


async def test_a_session_past_its_lifetime_is_renewed(speech_server):
    from tts_client.integrations.endpoint import Endpoint

    plugin = KokoroStreamingTTS(endpoint=Endpoint.websocket(speech_server.ws_url), sample_rate=RATE, max_session_s=0)
    try:
        first, _ = await utterance(plugin, "はい。")
        second, events = await utterance(plugin, "いいえ。")
        third, _ = await utterance(plugin, "またね。")
        sessions = plugin.open_sessions
    finally:
        await plugin.aclose()
    assert len({first.session_id, second.session_id, third.session_id}) == 3 and events
    # The pool closes an expired session at its next acquisition: only the first is gone by now.
    assert first.session_id not in [s.created.session_id for s in sessions]
    assert plugin.open_sessions == []


async def test_synthesize_speaks_a_whole_text_through_the_same_stream(speech_server):
    from tts_client.integrations.endpoint import Endpoint

    plugin = KokoroStreamingTTS(endpoint=Endpoint.websocket(speech_server.ws_url), sample_rate=RATE)
    try:
        frame = await plugin.synthesize(ANSWER).collect()
    finally:
        await plugin.aclose()
    assert frame.sample_rate == RATE and frame.duration > 2.0  # both sentences (the first alone is 1.2 s)
