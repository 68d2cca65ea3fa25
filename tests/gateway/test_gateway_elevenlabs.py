"""ElevenLabs' socket behind SageMaker: the real AWS SDK's bidirectional stream through the local
gateway, the socket's query in ModelQueryString (the voice in it, as the path cannot carry it)."""

import base64
import json

from tts_client.transports.sagemaker import SageMakerTransport

RACHEL = "21m00Tcm4TlvDq8ikWAM"


async def test_elevenlabs_speaks_through_the_bidirectional_stream(gateway):
    transport = await SageMakerTransport.connect(
        "local-kokoro", region="us-east-1", endpoint_url=gateway.endpoint_url, ca_file=str(gateway.ca_file),
        model_query_string=f"voice_id={RACHEL}&model_id=eleven_flash_v2_5&output_format=pcm_16000")
    try:
        for message in ({"text": " ", "voice_settings": {"speed": 1.0}}, {"text": "Hello there. "}, {"text": ""}):
            await transport.send(json.dumps(message))
        replies = []
        while (frame := await transport.receive()) is not None:
            replies.append(json.loads(frame))
    finally:
        await transport.close()
    audio = b"".join(base64.b64decode(r["audio"]) for r in replies if r.get("audio"))
    assert replies[-1] == {"isFinal": True} and len(audio) / 2 / 16000 > 0.5
    chars = [c for r in replies if r.get("alignment") for c in r["alignment"]["chars"]]
    assert "".join(chars) == "Hello there. "
