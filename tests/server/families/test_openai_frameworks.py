"""Agent frameworks' own OpenAI TTS plugins, unmodified, pointed at the local server's
`/v1/audio/speech`: Pipecat's OpenAITTSService (which only takes OpenAI's voice names) and
LiveKit's openai.TTS. Both speak, and the audio decodes to what the server says it spoke."""

import httpx
import pytest

pytest.importorskip("pipecat")
pytest.importorskip("livekit.plugins.openai")

from pipecat.frames.frames import TTSAudioRawFrame, TTSSpeakFrame, TTSStartedFrame, TTSStoppedFrame
from pipecat.pipeline.worker import PipelineParams
from pipecat.services.openai.tts import OpenAITTSService
from pipecat.tests.utils import run_test

TEXT = "こんにちは。"  # one sentence: that they speak, and as long as the server says


def spoken_ms(server, voice: str) -> float:
    """The same request's duration as the server speaks it (PCM16 at 24 kHz)."""
    body = {"model": "tts-1", "input": TEXT, "voice": voice, "response_format": "pcm"}
    reply = httpx.post(f"{server.http_url}/v1/audio/speech", json=body, timeout=180)
    return len(reply.content) / 2 / 24000 * 1000


async def test_pipecats_openai_tts_service_speaks_through_it(speech_server):
    tts = OpenAITTSService(api_key="unused", base_url=f"{speech_server.http_url}/v1", sample_rate=24000,
                           settings=OpenAITTSService.Settings(voice="nova"))
    down, _ = await run_test(tts, frames_to_send=[TTSSpeakFrame(TEXT)],
                             pipeline_params=PipelineParams(audio_out_sample_rate=24000))
    kinds = [type(f) for f in down if isinstance(f, TTSStartedFrame | TTSAudioRawFrame | TTSStoppedFrame)]
    assert kinds[0] is TTSStartedFrame and kinds[-1] is TTSStoppedFrame and TTSAudioRawFrame in kinds
    audio = b"".join(f.audio for f in down if isinstance(f, TTSAudioRawFrame))
    assert len(audio) / 2 / 24000 * 1000 == pytest.approx(spoken_ms(speech_server, "nova"), abs=30)


async def test_livekits_openai_tts_speaks_through_it(speech_server):
    from livekit.plugins import openai as livekit_openai

    tts = livekit_openai.TTS(base_url=f"{speech_server.http_url}/v1", api_key="unused", model="tts-1", voice="alloy")
    try:
        frames = [event.frame async for event in tts.synthesize(TEXT)]
    finally:
        await tts.aclose()
    assert {(f.sample_rate, f.num_channels) for f in frames} == {(24000, 1)}
    samples = sum(f.samples_per_channel for f in frames)
    assert samples / 24000 * 1000 == pytest.approx(spoken_ms(speech_server, "alloy"), abs=60)
