"""run_bidi sends each sentence while the LLM is still writing; run_batch waits for the whole answer."""

import asyncio

from tts_client.agent import AgentFinished, AudioOut, SentenceDone, SentenceSent, run_batch, run_bidi
from tts_client.audio import duration_ms
from tts_client.session import Session

ANSWER = "はい。明日は晴れます。傘はいりません。"
SECONDS_PER_TOKEN = 0.25


async def slow_llm(session: Session, sent_before: list[int]):
    """Two characters per token, four tokens a second. Before each token it notes how many
    response.create the session had sent: what the agent did with the text so far."""
    for start in range(0, len(ANSWER), 2):
        await asyncio.sleep(SECONDS_PER_TOKEN)  # the LLM's pace, not a wait for anything
        sent_before.append(len(session.responses))
        yield ANSWER[start:start + 2]


async def speak(mode, url: str) -> tuple[list, list[int]]:
    session = await Session.websocket(url)
    sent_before: list[int] = []
    try:
        await session.open(format="pcm_16")
        events = [event async for event in mode(slow_llm(session, sent_before), session)]
        await session.close()
    finally:
        await session.abort()
    return events, sent_before


def complete_sentences_before_each_token() -> list[int]:
    return [ANSWER[:start].count("。") for start in range(0, len(ANSWER), 2)]


async def test_bidi_sends_each_sentence_as_it_completes_and_its_audio_comes_first(speech_server):
    events, sent_before = await speak(run_bidi, speech_server.ws_url)
    sent = [e for e in events if isinstance(e, SentenceSent)]
    assert [e.text for e in sent] == ["はい。", "明日は晴れます。", "傘はいりません。"]
    # Each sentence went out before the LLM wrote its next token, not at the end of the answer.
    assert sent_before == complete_sentences_before_each_token()
    first_audio = next(e for e in events if isinstance(e, AudioOut))
    assert first_audio.chunk.response_id == sent[0].response_id
    assert [e.at for e in events] == sorted(e.at for e in events)  # true arrival order
    assert isinstance(events[-1], AgentFinished)
    assert {e.done.response_id for e in events if isinstance(e, SentenceDone)} == {e.response_id for e in sent}


async def test_batch_sends_the_whole_answer_once_and_the_audio_lasts_as_long(speech_server):
    (bidi, _), (batch, sent_before) = await speak(run_bidi, speech_server.ws_url), await speak(run_batch, speech_server.ws_url)
    [sent] = [e for e in batch if isinstance(e, SentenceSent)]
    assert sent.text == ANSWER
    assert sent_before == [0] * len(sent_before), "nothing is sent before the whole answer exists"
    # How much sooner bidi is heard is a figure of `make bench-agent`, not a pass/fail limit.

    def spoken_ms(events):
        return duration_ms("pcm_16", 24000, b"".join(e.chunk.audio for e in events if isinstance(e, AudioOut)))

    # Same words either way: the sentence-by-sentence audio lasts about as long as the whole.
    assert abs(spoken_ms(bidi) - spoken_ms(batch)) < 0.25 * spoken_ms(batch)
