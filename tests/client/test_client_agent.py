"""run_bidi speaks while the LLM is still writing; run_batch waits for the whole answer."""

import asyncio

from tts_client.agent import AgentFinished, AudioOut, SentenceDone, SentenceSent, run_batch, run_bidi
from tts_client.audio import duration_ms
from tts_client.session import Session

ANSWER = "はい。明日は晴れます。傘はいりません。"
SECONDS_PER_TOKEN = 0.25


async def slow_llm():
    """Two characters per token, four tokens a second: about 2.5 s for the whole answer."""
    for start in range(0, len(ANSWER), 2):
        await asyncio.sleep(SECONDS_PER_TOKEN)
        yield ANSWER[start:start + 2]


async def speak(mode, url: str) -> list:
    session = await Session.websocket(url)
    try:
        await session.open(format="pcm_16")
        events = [event async for event in mode(slow_llm(), session)]
        await session.close()
    finally:
        await session.abort()
    return events


async def test_bidi_sends_each_sentence_as_it_completes_and_hears_audio_before_the_answer_ends(speech_server):
    events = await speak(run_bidi, speech_server.ws_url)
    sent = [e for e in events if isinstance(e, SentenceSent)]
    generation_ends = len(range(0, len(ANSWER), 2)) * SECONDS_PER_TOKEN
    assert [e.text for e in sent] == ["はい。", "明日は晴れます。", "傘はいりません。"]
    assert sent[0].at < generation_ends / 2  # "はい。" went out after its second token, not at the end
    first_audio = next(e for e in events if isinstance(e, AudioOut))
    assert first_audio.chunk.response_id == sent[0].response_id
    assert [e.at for e in events] == sorted(e.at for e in events)  # true arrival order
    assert isinstance(events[-1], AgentFinished)
    assert {e.done.response_id for e in events if isinstance(e, SentenceDone)} == {e.response_id for e in sent}


async def test_batch_sends_the_whole_answer_once_and_the_audio_lasts_as_long(speech_server):
    bidi, batch = await speak(run_bidi, speech_server.ws_url), await speak(run_batch, speech_server.ws_url)
    [sent] = [e for e in batch if isinstance(e, SentenceSent)]
    assert sent.text == ANSWER
    assert sent.at >= len(range(0, len(ANSWER), 2)) * SECONDS_PER_TOKEN
    first_audio = {name: next(e.at for e in events if isinstance(e, AudioOut)) for name, events in (("bidi", bidi), ("batch", batch))}
    assert first_audio["bidi"] < first_audio["batch"]

    def spoken_ms(events):
        return duration_ms("pcm_16", 24000, b"".join(e.chunk.audio for e in events if isinstance(e, AudioOut)))

    # Same words either way: the sentence-by-sentence audio lasts about as long as the whole.
    assert abs(spoken_ms(bidi) - spoken_ms(batch)) < 0.25 * spoken_ms(batch)
