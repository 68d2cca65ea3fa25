"""POST /invocations two ways with one interface: straight to a container, or through
SageMaker's InvokeEndpoint / InvokeEndpointWithResponseStream (boto3).

Both return an `HTTPReply` whose `chunks` are the delivery chunks as they came (an SSE
reader must not assume they align with events) and raise `ServiceError` on failure, the
SageMaker 424 ModelError already unwrapped into the container's status and envelope.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import ServiceError, from_model_error, service_error


@dataclass
class HTTPReply:
    status: int
    content_type: str
    chunks: Iterator[bytes]

    def read(self) -> bytes:
        return b"".join(self.chunks)

    def json(self):
        return json.loads(self.read())


class DirectHTTP:
    def __init__(self, base_url: str, timeout: float = 120):
        self.url = base_url.rstrip("/") + "/invocations"
        self.timeout = timeout

    def invoke(self, body: dict | bytes, *, accept: str | None = None) -> HTTPReply:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"} | ({"Accept": accept} if accept else {})
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            reply = urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as error:
            raise service_error(error.code, error.read(), dict(error.headers)) from None
        return HTTPReply(reply.status, reply.headers.get("Content-Type", ""), _read_chunks(reply))


def _read_chunks(reply) -> Iterator[bytes]:
    with reply:
        while chunk := reply.read1(65536):
            yield chunk


class SageMakerHTTP:
    def __init__(self, endpoint_name: str, *, region: str | None = None, endpoint_url: str | None = None,
                 ca_file: str | None = None, credentials=None):
        import boto3
        from botocore.config import Config

        from .transports.sagemaker import default_credentials

        credentials = credentials or default_credentials(endpoint_url)
        keys = {}
        if credentials:
            keys = {"aws_access_key_id": credentials.access_key_id,
                    "aws_secret_access_key": credentials.secret_access_key,
                    "aws_session_token": credentials.session_token}
        self.endpoint_name = endpoint_name
        self._client = boto3.client(
            "sagemaker-runtime", region_name=region, endpoint_url=endpoint_url,
            verify=ca_file if ca_file else None, config=Config(retries={"max_attempts": 1}), **keys,
        )

    def invoke(self, body: dict | bytes, *, accept: str | None = None, stream: bool | None = None) -> HTTPReply:
        """`stream` (default: the body's `stream` field): InvokeEndpointWithResponseStream."""
        from botocore.exceptions import ClientError

        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        streaming = stream if stream is not None else isinstance(body, dict) and bool(body.get("stream"))
        options = {"EndpointName": self.endpoint_name, "Body": data, "ContentType": "application/json"}
        if accept:
            options["Accept"] = accept
        try:
            if streaming:
                reply = self._client.invoke_endpoint_with_response_stream(**options)
                return HTTPReply(200, reply.get("ContentType", ""), self._payload_parts(reply["Body"]))
            reply = self._client.invoke_endpoint(**options)
            return HTTPReply(200, reply.get("ContentType", ""), iter([reply["Body"].read()]))
        except ClientError as error:
            raise _unwrap_botocore(error) from None

    @staticmethod
    def _payload_parts(stream) -> Iterator[bytes]:
        from botocore.exceptions import ClientError

        try:
            for event in stream:
                if "PayloadPart" in event:
                    yield event["PayloadPart"]["Bytes"]
        except ClientError as error:  # EventStreamError (a ModelStreamError mid-stream) is one
            raise _unwrap_botocore(error) from None


def _unwrap_botocore(error) -> ServiceError:
    """A botocore ClientError as the ServiceError the container (or SageMaker) meant."""
    fields = error.response
    if "OriginalStatusCode" in fields:
        return from_model_error(fields)
    details = fields.get("Error", {})
    status = fields.get("ResponseMetadata", {}).get("HTTPStatusCode") or 500
    return ServiceError(int(status), details.get("Code", "ClientError"), details.get("Message", str(error)))
