"""A voice agent's turn through a Pipecat TTS service pointed at the real server: what the
ElevenLabs, Cartesia and Deepgram services' tests (tests/server/families) and the client
library's own service (tests/client/integrations) share. Import it as
`from pipecat_turns import ...` (tests/ is on the path)."""

from __future__ import annotations

from pipecat.frames.frames import (
    InterruptionFrame, LLMFullResponseEndFrame, LLMFullResponseStartFrame, LLMTextFrame, TTSAudioRawFrame,
    TTSSpeakFrame, TTSStartedFrame, TTSStoppedFrame, TTSTextFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.tests.utils import SleepFrame, run_test

RATE = 24000
TEXT = "Hello there. How are you today?"  # an agent's turn, and a long one (a barge-in cuts it)
LONG = "Once upon a time there was a small village. Every morning the people went out to work. At night they sang."
PARAMS = PipelineParams(audio_out_sample_rate=RATE)
# Pipecat ends a context that stays silent for stop_frame_timeout_s (3 s): the embedded engine's
# first audio on a busy CPU may take longer (docs/compatibility.md).
STOP_FRAME_TIMEOUT_S = 20


def near(measured_ms: float, expected_ms: float) -> bool:
    """Sentences spoken as separate responses keep their pauses; a frame's rounding at most."""
    return abs(measured_ms - expected_ms) <= max(150, 0.05 * expected_ms)


def audio_ms(frames: list) -> float:
    return sum(len(f.audio) for f in frames if isinstance(f, TTSAudioRawFrame)) / 2 / RATE * 1000


def llm_turn(text: str) -> list:
    """An LLM reply as Pipecat's LLM services stream it: a few characters per token."""
    tokens = [LLMTextFrame(text[i:i + 4]) for i in range(0, len(text), 4)]
    return [LLMFullResponseStartFrame(), *tokens, LLMFullResponseEndFrame()]


async def spoken_turn(service, text: str) -> list:
    """An LLM turn of `text` through a streaming service: its TTS frames, in order, checked to open
    with TTSStartedFrame and to end with the turn's one TTSStoppedFrame."""
    down, _ = await run_test(service, frames_to_send=llm_turn(text), pipeline_params=PARAMS)
    spoken = [f for f in down if isinstance(f, TTSStartedFrame | TTSAudioRawFrame | TTSTextFrame | TTSStoppedFrame)]
    assert isinstance(spoken[0], TTSStartedFrame) and isinstance(spoken[-1], TTSStoppedFrame)
    assert sum(isinstance(f, TTSStoppedFrame) for f in spoken) == 1, "the turn ends once"
    return spoken


def words_in_order(frames: list, text: str) -> bool:
    """The turn's word frames are its words, in order, with their times in order."""
    words = [f for f in frames if isinstance(f, TTSTextFrame)]
    return [w.text for w in words] == text.split() and [w.pts for w in words] == sorted(w.pts for w in words)


async def spoken_over_http(service_class, server, voice: str, text: str) -> list:
    """A TTSSpeakFrame through a vendor's HTTP service (`base_url` the server): what it pushed."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        tts = service_class(api_key="unused", base_url=server.http_url, aiohttp_session=session, sample_rate=RATE,
                            settings=service_class.Settings(voice=voice), stop_frame_timeout_s=STOP_FRAME_TIMEOUT_S)
        down, _ = await run_test(tts, frames_to_send=[TTSSpeakFrame(text)], pipeline_params=PARAMS)
    return down


class BargeInAtFirstAudio(FrameProcessor):
    """The user speaks as soon as the bot does: an interruption at the turn's first audio."""

    def __init__(self):
        super().__init__()
        self.interrupted_context = None

    async def process_frame(self, frame, direction):
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame) and self.interrupted_context is None:
            self.interrupted_context = frame.context_id
            await self.broadcast_interruption()


def until_interrupted(barge_in: BargeInAtFirstAudio, frames: list):
    """The frames, then nothing until the barge-in and a second after it, as in a live call (a
    service that queues an EndFrame behind the turn's audio would otherwise end the turn first)."""
    yield from frames
    while barge_in.interrupted_context is None:
        yield SleepFrame(sleep=0.2)
    yield SleepFrame(sleep=1.0)


async def heard_ms_with_a_barge_in(service, text: str, hold: bool = False) -> float:
    """A turn of `text` through `service`, the user cutting in at its first audio: how much was heard.
    `hold`: the input stays open until the barge-in (until_interrupted)."""
    barge_in = BargeInAtFirstAudio()
    frames = until_interrupted(barge_in, llm_turn(text)) if hold else llm_turn(text)
    down, _ = await run_test(Pipeline([service, barge_in]), frames_to_send=frames, pipeline_params=PARAMS)
    assert any(isinstance(f, InterruptionFrame) for f in down)
    return audio_ms(down)
