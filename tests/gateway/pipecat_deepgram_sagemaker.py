"""Pipecat's own DeepgramSageMakerTTSService speaking one turn through the local gateway, run by
test_gateway_deepgram.py in a process of its own: the service needs the SageMaker HTTP/2 SDK's
0.9 line (pipecat-ai[sagemaker] allows <0.10), which `make setup` puts in $VENV/pipecat-sagemaker
beside the venv's newer one. Nothing of the service is changed but what a deployed endpoint
differs in: the endpoint name, the runtime URL (Pipecat builds it from the region) and, for the
gateway's self-signed certificate, the CA it trusts.

Usage: python pipecat_deepgram_sagemaker.py GATEWAY_URL CA_FILE MODEL RATE TEXT; prints a JSON
line: the frames' kinds in order, the audio's length in bytes and the errors seen.
"""

import asyncio
import json
import sys


def point_at(gateway_url: str, ca_file: str) -> None:
    from awscrt import io as crt_io
    from pipecat.services.aws.sagemaker import bidi_client
    from smithy_http.aio import crt

    client_init = bidi_client.SageMakerBidiClient.__init__

    def at_gateway(self, *args, **kwargs):
        client_init(self, *args, **kwargs)
        self.bidi_endpoint = gateway_url

    transport_init = crt.AWSCRTHTTPClient.__init__

    def trusting(self, *args, **kwargs):
        transport_init(self, *args, **kwargs)
        options = crt_io.TlsContextOptions()
        options.override_default_trust_store_from_path(ca_filepath=ca_file)
        self._tls_ctx = crt_io.ClientTlsContext(options)

    bidi_client.SageMakerBidiClient.__init__ = at_gateway
    crt.AWSCRTHTTPClient.__init__ = trusting


async def speak(model: str, rate: int, text: str) -> dict:
    from pipecat.frames.frames import (
        ErrorFrame, LLMFullResponseEndFrame, LLMFullResponseStartFrame, LLMTextFrame, TTSAudioRawFrame,
        TTSStartedFrame, TTSStoppedFrame,
    )
    from pipecat.pipeline.worker import PipelineParams
    from pipecat.services.deepgram.sagemaker.tts import DeepgramSageMakerTTSService
    from pipecat.tests.utils import run_test

    tts = DeepgramSageMakerTTSService(endpoint_name="local-kokoro", region="us-east-1", sample_rate=rate,
                                      settings=DeepgramSageMakerTTSService.Settings(voice=model),
                                      stop_frame_timeout_s=20)  # the embedded engine's first audio on a busy CPU
    tokens = [LLMTextFrame(text[i:i + 4]) for i in range(0, len(text), 4)]
    down, _ = await run_test(tts, frames_to_send=[LLMFullResponseStartFrame(), *tokens, LLMFullResponseEndFrame()],
                             pipeline_params=PipelineParams(audio_out_sample_rate=rate))
    kinds = {TTSStartedFrame: "started", TTSAudioRawFrame: "audio", TTSStoppedFrame: "stopped"}
    frames = [kinds[type(f)] for f in down if type(f) in kinds]
    audio = sum(len(f.audio) for f in down if isinstance(f, TTSAudioRawFrame))
    errors = [f.error for f in down if isinstance(f, ErrorFrame)]
    return {"frames": [k for i, k in enumerate(frames) if i == 0 or k != frames[i - 1]], "audio_bytes": audio,
            "errors": errors}


if __name__ == "__main__":
    gateway_url, ca_file, model, rate, text = sys.argv[1:6]
    point_at(gateway_url, ca_file)
    print(json.dumps(asyncio.run(speak(model, int(rate), text))))
