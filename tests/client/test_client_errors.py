"""A container's error reads the same whether it came directly or inside SageMaker's 424."""

import json

from tts_client.errors import from_model_error, service_error

ENVELOPE = {"error": {"message": "Validation Error(s):\n- sample_rate: Input should be 8000, 16000 or 24000",
                      "code": "invalid_request_error", "request_id": "20261130_abc"}}


def test_direct_error_envelope():
    error = service_error(400, json.dumps(ENVELOPE).encode())
    assert (error.status, error.code, error.request_id) == (400, "invalid_request_error", "20261130_abc")
    assert "sample_rate" in error.message and not error.via_model_error


def test_sagemaker_424_model_error_is_unwrapped_to_the_container_status_and_envelope():
    wrapped = {"ErrorCode": "CLIENT_ERROR_FROM_MODEL", "OriginalStatusCode": 400,
               "OriginalMessage": json.dumps(ENVELOPE), "Message": "Received client error (400) from primary ..."}
    error = service_error(424, json.dumps(wrapped))
    assert (error.status, error.code) == (400, "invalid_request_error")
    assert error.via_model_error and "sample_rate" in error.message


def test_botocore_model_error_fields_unwrap_the_same_way():
    error = from_model_error({"OriginalStatusCode": 503, "OriginalMessage": json.dumps(
        {"error": {"message": "server at capacity, retry later", "code": "service_overloaded", "retry_after": 5}})})
    assert (error.status, error.code, error.retry_after) == (503, "service_overloaded", 5)


def test_a_body_that_is_not_the_envelope_still_gives_status_and_text():
    error = service_error(404, b"Not Found", {"Retry-After": "3"})
    assert (error.status, error.code, error.message, error.retry_after) == (404, "http_404", "Not Found", 3.0)
