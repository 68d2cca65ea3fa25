"""The Pipecat service in Pipecat's own test harness (`run_test`), against the real server over
the WebSocket and through the local SageMaker gateway: a streamed LLM turn, and a barge-in."""

from itertools import chain

import pytest

pytest.importorskip("pipecat")

from pipecat.frames.frames import (
    InterruptionFrame, TTSAudioRawFrame,
    TTSStartedFrame, TTSStoppedFrame, TTSTextFrame,
)
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams
from pipecat.tests.utils import SleepFrame, run_test
from pipecat_turns import BargeInAtFirstAudio, llm_turn

from tts_client.integrations.pipecat import KokoroStreamingTTSService

ANSWER = "こんにちは。今日はいい天気ですね。"
LONG_ANSWER = "昔々、ある山の中に小さな村がありました。村の人々は毎朝早く起きて畑で働きました。夕方になると皆で集まって歌を歌いました。"



def speaking(endpoint, **options) -> tuple[KokoroStreamingTTSService, list]:
    tts = KokoroStreamingTTSService(endpoint=endpoint, **options)
    done = []

    @tts.event_handler("on_response_done")
    async def on_response_done(service, response_done):
        done.append(response_done)

    return tts, done


def params(rate: int) -> PipelineParams:
    return PipelineParams(audio_out_sample_rate=rate)


@pytest.mark.parametrize("rate", [16000])
async def test_a_streamed_llm_turn_is_spoken_sentence_by_sentence_with_word_frames(endpoint, rate):
    tts, done = speaking(endpoint)
    down, _ = await run_test(tts, frames_to_send=llm_turn(ANSWER), pipeline_params=params(rate))

    spoken = [f for f in down if isinstance(f, TTSStartedFrame | TTSAudioRawFrame | TTSTextFrame | TTSStoppedFrame)]
    assert isinstance(spoken[0], TTSStartedFrame) and isinstance(spoken[-1], TTSStoppedFrame)
    assert [type(f) for f in spoken].count(TTSStartedFrame) == 1  # one context for the whole turn
    # One response.create per sentence, each completed; the audio is what the server says it sent.
    assert [d.status for d in done] == ["completed", "completed"]
    audio = [f for f in spoken if isinstance(f, TTSAudioRawFrame)]
    assert {(f.sample_rate, f.num_channels) for f in audio} == {(rate, 1)}
    assert sum(len(f.audio) for f in audio) / 2 / rate * 1000 == sum(d.audio_ms for d in done)
    # Per-word frames, in order, covering the text, timed inside the turn's audio.
    words = [f for f in spoken if isinstance(f, TTSTextFrame)]
    assert len(words) > 4 and "".join(w.text for w in words) == ANSWER
    times = [w.pts for w in words]
    assert times == sorted(times) and 0 < (times[-1] - times[0]) / 1e9 < sum(d.audio_ms for d in done) / 1000
    # The EndFrame closed the session the graceful way: session.closed, then the connection's end.
    assert tts.closed is not None and tts.closed.code == 1000


async def test_an_unsupported_pipeline_rate_is_resampled_from_the_model_rate(speech_server):
    from tts_client.integrations.endpoint import Endpoint

    tts, done = speaking(Endpoint.websocket(speech_server.ws_url))
    down, _ = await run_test(tts, frames_to_send=llm_turn("はい。"), pipeline_params=params(12000))
    audio = [f for f in down if isinstance(f, TTSAudioRawFrame)]
    assert {f.sample_rate for f in audio} == {12000}
    seconds = sum(len(f.audio) for f in audio) / 2 / 12000
    assert seconds * 1000 == pytest.approx(done[0].audio_ms, abs=1)  # each response's resampler is flushed


def sleep_until(happened, settle_s: float = 2.0, limit_s: float = 120.0):
    """SleepFrames until happened() (run_test takes the frames one by one), then settle_s more."""
    waited = 0.0
    while not happened() and waited < limit_s:
        yield SleepFrame(sleep=0.1)
        waited += 0.1
    yield SleepFrame(sleep=settle_s)


class PushedBy(BaseObserver):
    """What one processor pushed, in order."""

    def __init__(self, processor):
        super().__init__()
        self.processor, self.frames = processor, []

    async def on_push_frame(self, data: FramePushed):
        if data.source is self.processor:
            self.frames.append(data.frame)


async def test_barge_in_cancels_the_turn_and_none_of_its_audio_follows(endpoint):
    tts, done = speaking(endpoint)
    barge_in, pushed = BargeInAtFirstAudio(), PushedBy(tts)
    # The next turn (and the EndFrame) only once the barge-in is over, however long the first
    # audio takes on this machine: after a fixed 10 s, a loaded 2-core machine could send it
    # before the first audio, and the run then hung until the test's timeout.
    frames = chain(llm_turn(LONG_ANSWER), sleep_until(lambda: barge_in.interrupted_context is not None),
                   llm_turn("はい。"))
    down, _ = await run_test(Pipeline([tts, barge_in]), frames_to_send=frames, pipeline_params=params(16000),
                             observers=[pushed])

    interrupted = barge_in.interrupted_context
    # The service passes the interruption on once it has handled it; a frame it had pushed just
    # before may still be on its way downstream, but it pushes none of that turn's audio after.
    handled = next(i for i, f in enumerate(pushed.frames) if isinstance(f, InterruptionFrame))
    assert not [f for f in pushed.frames[handled:] if isinstance(f, TTSAudioRawFrame) and f.context_id == interrupted]
    cut = next(i for i, f in enumerate(down) if isinstance(f, InterruptionFrame))
    # The server was told: the turn's later sentences were cancelled, not synthesized.
    first_turn, second_turn = done[:3], done[3:]
    assert first_turn[-1].status == "cancelled" and first_turn[-1].audio_ms == 0
    # The session goes on: the next turn speaks in full.
    assert [d.status for d in second_turn] == ["completed"]
    # (A frame of the interrupted turn pushed just before the cut may still arrive after it.)
    after = [f for f in down[cut:] if isinstance(f, TTSAudioRawFrame) and f.context_id != interrupted]
    assert after
    assert sum(len(f.audio) for f in after) / 2 / 16000 * 1000 == second_turn[0].audio_ms
