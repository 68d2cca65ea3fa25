"""The text decides its language where the protocol names none, on every surface and both engines:
a Japanese text spoken with an English voice's alias or default (OpenAI's `nova`, the blog's
`af_heart`, ElevenLabs' Rachel, a Deepgram model of a language the engine lacks) lasts what it lasts with the language named, never the 4.7x of
English G2P reading Japanese; and a text that yields no speech in the language named is a
client error naming the language and the field to set, never a success with no audio."""

import asyncio
import base64
import io
import json
import wave

import httpx
import pytest
import websockets

README_TEXT = "こんにちは。今日はいい天気ですね。"  # the README's OpenAI example
SHORT = "こんにちは。"
SILENT_IN_ENGLISH = "こんにちは、今日はいい天気ですね。"  # English G2P finds nothing to say in it
RACHEL = "21m00Tcm4TlvDq8ikWAM"
KATIE = "f786b574-daa5-4673-aa0c-cbe3e8534c02"  # a Cartesia voice id


def cartesia(text: str, language: str | None) -> dict:
    return {"model_id": "sonic-3", "transcript": text, "voice": {"mode": "id", "id": KATIE}, "context_id": "c",
            "output_format": {"container": "raw", "encoding": "pcm_s16le", "sample_rate": 24000}} | (
        {"language": language} if language else {})
# The negotiation is one for every surface: each surface runs on the embedded engine, and the
# PyTorch engine (slow on a CPU) speaks the README's example, one voice, one socket, and refuses.
BOTH = ["speech_server", "torch_server"]
EMBEDDED = ["speech_server"]


@pytest.fixture
def server(request):
    return request.getfixturevalue(request.param)


def on(engines):
    """Parametrize over engines: the `server` fixture picks each one's server."""
    return pytest.mark.parametrize("server", engines, indirect=True)


def post(server, path: str, body: dict, **params) -> httpx.Response:
    return httpx.post(server.http_url + path, json=body, params=params, timeout=240)


def pcm_ms(reply: httpx.Response) -> float:
    assert reply.status_code == 200, reply.text
    return len(reply.content) / 2 / 24000 * 1000


def wav_ms(data: bytes) -> float:
    with wave.open(io.BytesIO(data)) as audio:
        return audio.getnframes() / audio.getframerate() * 1000


def deepgram_model(language: str | None) -> str:
    """A Deepgram model names its language; a German one (a language the engine lacks) leaves it to the text."""
    return f"aura-2-thalia-{language.split('-')[0]}" if language else "aura-2-julius-de"


# Each HTTP surface: (path, body for a text and a language or None, how long its reply plays, its language field)
HTTP = {
    "openai": ("/v1/audio/speech", lambda t, lang: {"model": "tts-1", "input": t, "voice": "nova", "response_format": "pcm"}
               | ({"lang_code": lang} if lang else {}), pcm_ms, "lang_code"),
    "openai on /invocations": ("/invocations", lambda t, lang: {"input": t, "voice": "onyx", "response_format": "pcm"}
                               | ({"lang_code": lang} if lang else {}), pcm_ms, "lang_code"),
    "canonical": ("/invocations", lambda t, lang: {"text": t, "format": "pcm_16", "stream": True}
                  | ({"language": lang} if lang else {}), pcm_ms, "language"),
    "blog": ("/invocations", lambda t, lang: {"text": t, "voice": "af_heart", "format": "wav", "stream": False}
             | ({"language": lang} if lang else {}), lambda r: wav_ms(r.content), "language"),
    "bulbul": ("/text-to-speech", lambda t, lang: {"text": t, "speaker": "anushka", "output_audio_codec": "wav"}
               | ({"target_language_code": lang} if lang else {}),
               lambda r: wav_ms(base64.b64decode(r.json()["audios"][0])), "target_language_code"),
    "elevenlabs": (f"/v1/text-to-speech/{RACHEL}/stream?output_format=pcm_24000",
                   lambda t, lang: {"text": t} | ({"language_code": lang} if lang else {}), pcm_ms, "language_code"),
    "deepgram on /invocations": ("/invocations", lambda t, lang: {"text": t, "model": deepgram_model(lang),
                                                                  "encoding": "linear16", "container": "none"},
                                 pcm_ms, "the model's language (aura-2-<voice>-<language>)"),
    "cartesia": ("/tts/bytes", cartesia, pcm_ms, "language"),
}


def http_ms(server, surface: str, text: str, language: str | None) -> float:
    path, body, played, _ = HTTP[surface]
    reply = post(server, path, body(text, language))
    assert reply.status_code == 200, reply.text
    return played(reply)


@on(BOTH)
def test_the_readme_openai_example_speaks_its_sentence_in_its_length(server):
    guessed, named = http_ms(server, "openai", README_TEXT, None), http_ms(server, "openai", README_TEXT, "ja")
    assert abs(guessed - named) <= 0.2 * named


@pytest.mark.parametrize("server, voice", [("speech_server", "alloy"), ("speech_server", "echo"),
                                           ("speech_server", "onyx"), ("torch_server", "echo")], indirect=["server"])
def test_openais_voices_speak_japanese_with_a_comma(server, voice):
    body = {"model": "tts-1", "input": SILENT_IN_ENGLISH, "voice": voice, "response_format": "pcm"}
    assert pcm_ms(post(server, "/v1/audio/speech", body)) > 1000


@on(EMBEDDED)
@pytest.mark.parametrize("surface", [s for s in HTTP if s != "openai"])
def test_every_http_surface_reads_the_text_in_its_own_language(server, surface):
    guessed, named = http_ms(server, surface, SHORT, None), http_ms(server, surface, SHORT, "ja")
    assert abs(guessed - named) <= 0.2 * named


@on(BOTH)
@pytest.mark.parametrize("surface", list(HTTP))
def test_no_speech_in_the_language_named_is_a_400_naming_it_and_the_field(server, surface):
    path, body, _, field = HTTP[surface]
    reply = post(server, path, body(SILENT_IN_ENGLISH, "en-US"))
    assert reply.status_code == 400, reply.text
    assert "yields no speech in 'en-US'" in reply.text and f"set {field} to it" in reply.text


async def socket_ms(url: str, messages: list[dict], audio_of, done_when) -> tuple[float, list[dict]]:
    """Send `messages`, then gather audio (`audio_of(frame)` -> ms) until `done_when(event)`."""
    played, events = 0.0, []
    async with websockets.connect(url) as ws:
        for message in messages:
            await ws.send(json.dumps(message))
        while True:
            frame = await asyncio.wait_for(ws.recv(), 240)
            event = json.loads(frame) if isinstance(frame, str) else None
            played += audio_of(frame, event)
            if event is not None:
                events.append(event)
                if done_when(event):
                    return played, events


def b64_pcm_ms(data: str | None) -> float:
    return len(base64.b64decode(data or "")) / 2 / 24000 * 1000


async def canonical_ms(server, text, language):
    first = {"type": "open", "format": "pcm_16"} | ({"language": language} if language else {})
    return await socket_ms(server.ws_url, [first, {"type": "response.create", "text": text}],
                           lambda f, e: b64_pcm_ms(e.get("audio")) if e and e["type"] == "audio.chunk" else 0,
                           lambda e: e["type"] in ("response.done", "error"))


async def blog_ms(server, text, language):
    message = {"text": text, "voice": "af_heart"} | ({"language": language} if language else {})
    return await socket_ms(server.ws_url, [message], lambda f, e: len(f) / 2 / 24000 * 1000 if e is None else 0,
                           lambda e: e["type"] in ("synthesis_complete", "error"))


async def bulbul_ms(server, text, language):
    config = {"type": "config", "data": {"speaker": "anushka", "output_audio_codec": "linear16", "speech_sample_rate": 24000}
              | ({"target_language_code": language} if language else {})}
    return await socket_ms(server.ws_url, [config, {"type": "text", "data": {"text": text}}, {"type": "flush"}],
                           lambda f, e: b64_pcm_ms(e["data"]["audio"]) if e and e["type"] == "audio" else 0,
                           lambda e: e["type"] in ("event", "error"))


async def elevenlabs_ms(server, text, language):
    query = "output_format=pcm_24000" + (f"&language_code={language}" if language else "")
    url = f"ws://127.0.0.1:{server.port}/v1/text-to-speech/{RACHEL}/stream-input?{query}"
    return await socket_ms(url, [{"text": " "}, {"text": text}, {"text": ""}],
                           lambda f, e: b64_pcm_ms(e.get("audio")) if e else 0, lambda e: e.get("isFinal") or "error" in e)


async def deepgram_ms(server, text, language):
    url = f"ws://127.0.0.1:{server.port}/v1/speak?model={deepgram_model(language)}&encoding=linear16&sample_rate=24000"
    return await socket_ms(url, [{"type": "Speak", "text": text}, {"type": "Flush"}],
                           lambda f, e: len(f) / 2 / 24000 * 1000 if e is None else 0,
                           lambda e: e["type"] in ("Flushed", "Warning"))


async def cartesia_ms(server, text, language):
    return await socket_ms(f"ws://127.0.0.1:{server.port}/tts/websocket", [cartesia(text, language)],
                           lambda f, e: b64_pcm_ms(e.get("data")) if e and e["type"] == "chunk" else 0,
                           lambda e: e["type"] in ("done", "error"))


SOCKETS = {"canonical": canonical_ms, "blog": blog_ms, "bulbul": bulbul_ms, "elevenlabs": elevenlabs_ms,
           "deepgram": deepgram_ms, "cartesia": cartesia_ms}


@pytest.mark.parametrize("server, surface", [*(("speech_server", s) for s in SOCKETS), ("torch_server", "blog")],
                         indirect=["server"])
async def test_every_socket_reads_the_text_in_its_own_language(server, surface):
    (guessed, _), (named, _) = await SOCKETS[surface](server, SHORT, None), await SOCKETS[surface](server, SHORT, "ja")
    assert named > 500 and abs(guessed - named) <= 0.2 * named


@on(BOTH)
@pytest.mark.parametrize("surface", list(SOCKETS))
async def test_no_speech_on_a_socket_is_an_error_naming_the_language(server, surface):
    played, events = await SOCKETS[surface](server, SILENT_IN_ENGLISH, "en-US")
    assert played == 0 and "yields no speech in 'en-US'" in json.dumps(events[-1])
