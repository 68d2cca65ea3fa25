"""A session the server ends (SPEC §10) costs neither integration a sentence: a server of its
own with a 1 s idle timeout and a pause longer than that, and a relay that ends the session
as a sentence crosses it."""

import asyncio
import json

import pytest

from broken_servers import Breakage, broken_server, is_event
from running_server import start_server, stop_server
from tts_client.integrations.endpoint import Endpoint

IDLE_S = 1.0


@pytest.fixture(scope="module")
def impatient_server():
    server = start_server({"ENGINE": "onnx", "SESSION_IDLE_TIMEOUT_S": str(IDLE_S)}, languages="ja")
    yield server
    stop_server(server)


async def test_pipecat_reopens_the_session_for_the_turn_after_an_idle_pause(impatient_server):
    pytest.importorskip("pipecat")
    from pipecat.frames.frames import TTSAudioRawFrame, TTSStoppedFrame
    from pipecat.tests.utils import SleepFrame, run_test
    from test_pipecat_service import llm_turn, params, speaking

    tts, done = speaking(Endpoint.websocket(impatient_server.ws_url))
    frames = [*llm_turn("はい。"), SleepFrame(sleep=IDLE_S * 3), *llm_turn("いいえ。")]
    down, _ = await run_test(tts, frames_to_send=frames, pipeline_params=params(16000))
    assert [d.status for d in done] == ["completed", "completed"]
    stopped = [f.context_id for f in down if isinstance(f, TTSStoppedFrame)]
    spoke = {f.context_id for f in down if isinstance(f, TTSAudioRawFrame)}
    assert len(stopped) == 2 and spoke == set(stopped)  # both turns spoke, each to its end


async def test_livekit_replaces_a_pooled_session_the_server_closed(impatient_server):
    pytest.importorskip("livekit.agents")
    from test_livekit_plugin import utterance

    from tts_client.integrations.livekit import KokoroStreamingTTS

    plugin = KokoroStreamingTTS(endpoint=Endpoint.websocket(impatient_server.ws_url), sample_rate=16000)
    try:
        first, _ = await utterance(plugin, "はい。")
        await asyncio.sleep(IDLE_S * 3)  # the server ends the pooled session meanwhile
        second, events = await utterance(plugin, "いいえ。")
    finally:
        await plugin.aclose()
    assert first.session_id != second.session_id and events


class EndsAsTheSecondSentenceArrives(Breakage):
    """The crossing, made certain: the first session's server never takes up the second
    sentence (it was ending), then says it ends the session and closes it."""

    sessions, dropped = 0, False  # counted over the test's relay (reset by the test)

    def __init__(self):
        type(self).sessions += 1
        self.breaks, self.creates = type(self).sessions == 1, 0

    def to_server(self, frame):
        if self.breaks and is_event(frame, "response.create"):
            self.creates += 1
            if self.creates == 2:
                type(self).dropped = True
                return []
        return [frame]

    def hold_s(self, frame):  # the second sentence reaches the relay before the first is done
        return 1.0 if self.breaks and is_event(frame, "response.done") else 0.0

    def to_client(self, frame):
        if not (self.breaks and is_event(frame, "response.done")):
            return [frame]
        self.hang_up = True
        ending = {"type": "error", "error": {"code": "server_shutting_down", "message": "the server is shutting down"}}
        return [frame, json.dumps(ending)]


async def test_pipecat_sends_a_sentence_the_ending_session_never_took_up_to_a_new_one(speech_server):
    pytest.importorskip("pipecat")
    from pipecat.frames.frames import ErrorFrame, TTSStoppedFrame
    from pipecat.tests.utils import run_test
    from test_pipecat_service import llm_turn, params, speaking

    EndsAsTheSecondSentenceArrives.sessions, EndsAsTheSecondSentenceArrives.dropped = 0, False
    async with broken_server(speech_server.http_url, EndsAsTheSecondSentenceArrives) as url:
        tts, done = speaking(Endpoint.websocket(url))
        down, up = await run_test(tts, frames_to_send=llm_turn("はい。いいえ。"), pipeline_params=params(16000))
    assert EndsAsTheSecondSentenceArrives.dropped  # the second sentence did cross the ending session
    assert EndsAsTheSecondSentenceArrives.sessions == 2  # and opened a new one
    assert [d.status for d in done] == ["completed", "completed"]
    assert not [f for f in [*down, *up] if isinstance(f, ErrorFrame)]
    assert len([f for f in down if isinstance(f, TTSStoppedFrame)]) == 1  # the turn ends, once
