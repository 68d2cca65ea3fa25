"""SPEC §10 backpressure: a client that stops reading holds a bounded amount of audio in the
server, and synthesis for it pauses instead of running ahead; once it reads again, every byte
arrives. On the real application with an engine double that makes 256 KiB of audio per
sentence at once (the real model is far too slow to ever outrun a reader), over loopback
sockets with small kernel buffers, so what is held is the server's own doing."""

import asyncio
import json
import socket

import httpx
from server.robustness.inprocess import SMALL_SOCKET_BUFFER, CountingSynthesizer, RawWebSocket, serving, wait_until_still

SAMPLES = 131072  # per sentence: 256 KiB of pcm_16
CHUNK = SAMPLES * 2
SENTENCES = 100  # 25 MiB in all, if nothing held it back
TEXT = "あ。" * SENTENCES
BOUND = 4 << 20  # what may be synthesized ahead of a reader that reads nothing


def test_websocket_reader_that_stops_pauses_synthesis():
    synthesizer = CountingSynthesizer(SAMPLES)
    with serving(synthesizer) as server:
        client = RawWebSocket(server.port)
        client.send({"type": "open", "format": "pcm_16", "audio_frames": "binary"})
        assert json.loads(client.next_frame())["type"] == "session.created"
        client.send({"type": "response.create", "text": TEXT, "response_id": "flood"})
        ahead = wait_until_still(lambda: synthesizer.sentences)  # reading nothing now
        assert ahead * CHUNK <= BOUND, f"{ahead} sentences synthesized for a reader that stopped"
        audio, done = 0, None
        while done is None:  # reading again: everything arrives
            frame = client.next_frame()
            if isinstance(frame, bytes):
                audio += len(frame)
            elif json.loads(frame)["type"] == "response.done":
                done = json.loads(frame)
        assert done["status"] == "completed"
        assert audio == SENTENCES * CHUNK
        client.close()


async def test_http_stream_reader_that_stops_pauses_synthesis():
    synthesizer = CountingSynthesizer(SAMPLES)
    with serving(synthesizer, stream_buffer_bytes=512 << 10) as server:
        options = [(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_SOCKET_BUFFER)]
        transport = httpx.AsyncHTTPTransport(socket_options=options)
        async with httpx.AsyncClient(transport=transport, timeout=60) as client:
            body = {"text": TEXT, "stream": True, "format": "pcm_16"}
            async with client.stream("POST", f"http://127.0.0.1:{server.port}/invocations", json=body) as reply:
                received = 0
                stream = reply.aiter_raw()
                received += len(await anext(stream))
                ahead = await asyncio.to_thread(wait_until_still, lambda: synthesizer.sentences)
                assert ahead * CHUNK <= BOUND, f"{ahead} sentences synthesized for a reader that stopped"
                async for chunk in stream:
                    received += len(chunk)
            assert received == SENTENCES * CHUNK
            load = (await client.get(f"http://127.0.0.1:{server.port}/ping")).json()["load"]
            assert load["syntheses"] == 0
