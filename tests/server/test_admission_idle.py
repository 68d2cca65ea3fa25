"""Idle sessions cost a connection slot only (SPEC §7): fifty open, silent sessions do not stop
a new one from being served on the default, derived capacity."""

import asyncio

from server.wire import Peer


async def test_fifty_idle_sessions_do_not_lock_out_a_speaker(speech_server):
    idle = [await Peer.connect(speech_server.ws_url) for _ in range(50)]
    try:
        created = await asyncio.gather(*(peer.open() for peer in idle))
        assert all(event["type"] == "session.created" for event in created)
        speaker = await Peer.connect(speech_server.ws_url)
        assert (await speaker.open(format="pcm_16"))["type"] == "session.created"
        await speaker.send({"type": "response.create", "text": "こんにちは。", "response_id": "r"})
        (done,) = await speaker.until_done("r")
        assert done["status"] == "completed" and len(speaker.audio_of("r")) > 0
        await speaker.close()
    finally:
        await asyncio.gather(*(peer.close() for peer in idle))
