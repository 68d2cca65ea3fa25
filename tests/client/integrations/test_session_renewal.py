"""A session the server ends for idleness (SPEC §10) costs neither integration its next
utterance: a server of its own with a 1 s idle timeout, and a pause longer than that."""

import asyncio

import pytest

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
