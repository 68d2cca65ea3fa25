"""POST /invocations's client errors on the real server: the envelope, the status, a message
that names the field (as the client spelt it) and the accepted values, and a request id."""

import re

import httpx
import pytest

REQUEST_ID = re.compile(r"^\d{8}_[0-9a-f-]{36}$")
TEXT = "こんにちは。"


def assert_envelope(reply: httpx.Response, status: int, code: str, *words: str) -> dict:
    assert reply.status_code == status, reply.text[:300]
    assert reply.headers["content-type"] == "application/json"
    error = reply.json()["error"]
    assert error["code"] == code
    assert REQUEST_ID.match(error["request_id"])
    assert "Traceback" not in error["message"]
    for word in words:
        assert word in error["message"], (word, error["message"])
    return error


@pytest.fixture
async def http(speech_server):
    async with httpx.AsyncClient(base_url=speech_server.http_url, timeout=60) as client:
        yield client


@pytest.mark.parametrize(
    "body, words",
    [
        ({"text": TEXT, "model": "bulbul:v1"}, ["Validation Error(s):\n- model: Input should be 'kokoro-82m', 'bulbul:v3', 'bulbul:v2' or 'bulbul:v4-flash'"]),
        ({}, ["- text: Field required"]),
        ({"text": ""}, ["- text: String should have at least 1 character"]),
        ({"text": " \n "}, ["- text: String should contain a character that is not whitespace"]),
        ({"text": "あ" * 3501}, ["- text: String should have at most 3500 characters"]),
        ({"text": TEXT, "sample_rate": 44101}, ["- sample_rate: Input should be 8000, 11025, 16000, 22050, 24000, 32000, 44100 or 48000"]),
        ({"text": TEXT, "speech_sample_rate": 12000}, ["- speech_sample_rate: Input should be 8000, 11025, 16000, 22050, 24000, 32000, 44100 or 48000"]),
        ({"text": TEXT, "output_audio_codec": "ogg"},
         ["- output_audio_codec: Input should be 'pcm_f32'", "'aac' or 'linear16'"]),
        ({"text": TEXT, "speaker": "nobody"}, ["- speaker: Input should be 'default', 'woman-1'", "jf_alpha:0.7", "got 'nobody'"]),
        ({"text": TEXT, "target_language_code": "ko-KR"},
         ["- target_language_code: Input should be ", "'ja'", "(or an alias such as 'en', 'pt', 'hi-IN'), got 'ko-KR'"]),
        ({"text": TEXT, "pace": 3}, ["- pace: Input should be less than or equal to 2"]),
        ({"text": TEXT, "speed": 0.1}, ["- speed: Input should be greater than or equal to 0.5"]),
        ({"text": TEXT, "stream": "maybe"}, ["- stream: Input should be a valid boolean"]),
        ({"text": 5, "model": "v2"}, ["- model: Input should be 'kokoro-82m'", "- text: Input should be a valid string"]),
    ],
)
async def test_invalid_fields_are_400_naming_the_field(http, body, words):
    reply = await http.post("/invocations", json=body)
    assert_envelope(reply, 400, "invalid_request_error", *words)


async def test_error_envelope_matches_the_seed_exactly(http):
    reply = await http.post("/invocations", json={"text": TEXT, "model": "bulbul:v1"})
    error = reply.json()["error"]
    assert set(error) == {"message", "code", "request_id"}
    assert error["message"] == "Validation Error(s):\n- model: Input should be 'kokoro-82m', 'bulbul:v3', 'bulbul:v2' or 'bulbul:v4-flash'"


@pytest.mark.parametrize(
    "content, words",
    [
        (b"{not json", ["- body: Invalid JSON"]),
        (b'["a list"]', ["- body: Input should be a JSON object, got list"]),
        (b"\xff\xfe{}", ["- body: Input should be UTF-8 encoded JSON"]),
        (b"", ["- body: Invalid JSON"]),
    ],
)
async def test_malformed_json_is_400(http, content, words):
    reply = await http.post("/invocations", content=content, headers={"Content-Type": "application/json"})
    assert_envelope(reply, 400, "invalid_request_error", *words)


async def test_wrong_content_type_is_400_naming_the_accepted_one(http):
    reply = await http.post("/invocations", content=b"text=hello", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert_envelope(reply, 400, "invalid_request_error",
                    "- content-type: Input should be 'application/json', got 'application/x-www-form-urlencoded'")


async def test_oversized_body_is_413(http):
    body = b'{"text": "' + b"a" * (2 << 20) + b'"}'
    reply = await http.post("/invocations", content=body, headers={"Content-Type": "application/json"})
    assert_envelope(reply, 413, "request_too_large", "at most 1048576 bytes", "MAX_REQUEST_BYTES")


async def test_unknown_route_and_method_get_the_envelope(http):
    assert_envelope(await http.get("/nowhere"), 404, "not_found")
    reply = await http.get("/invocations")
    assert_envelope(reply, 405, "method_not_allowed")
    assert reply.headers["allow"] == "POST"


async def test_errors_do_not_disturb_the_next_request(http):
    for _ in range(3):
        await http.post("/invocations", content=b"{", headers={"Content-Type": "application/json"})
    reply = await http.post("/invocations", json={"text": TEXT})
    assert reply.status_code == 200
    ping = (await http.get("/ping")).json()
    assert ping["load"]["syntheses"] == 0, "every request gave its synthesis slot back"
