"""A session endpoint through SageMaker's HTTP/2 bidirectional stream (port 8443).

Uses the AWS SDK (`aws-sdk-sagemaker-runtime-http2`) on the `awscrt` transport: the SDK's
default aiohttp transport cannot do duplex streams. Every message goes out as a
RequestPayloadPart; SageMaker may cut one container frame into several response parts
(CompletionState PARTIAL ... COMPLETE), which are put back together here.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

PARTIAL = "PARTIAL"
UTF8 = "UTF8"
BINARY = "BINARY"


@dataclass(frozen=True)
class Credentials:
    access_key_id: str
    secret_access_key: str
    session_token: str | None = None


# Credentials for a local gateway, which checks that requests are signed but not by whom.
LOCAL_CREDENTIALS = Credentials("AKIDLOCALGATEWAY", "local-gateway-secret")


def default_credentials(endpoint_url: str | None) -> Credentials | None:
    """Static local credentials for a loopback endpoint URL, else None (the SDK's chain)."""
    host = urlsplit(endpoint_url).hostname if endpoint_url else None
    return LOCAL_CREDENTIALS if host in ("127.0.0.1", "localhost", "::1") else None


def _trusting_crt_client(ca_file: str | None):
    """An AWSCRTHTTPClient that also trusts `ca_file` (a local gateway's CA)."""
    from awscrt import io as crt_io
    from smithy_http.aio.crt import AWSCRTHTTPClient

    class TrustingCRTHTTPClient(AWSCRTHTTPClient):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            if ca_file:
                options = crt_io.TlsContextOptions()
                options.override_default_trust_store_from_path(ca_filepath=ca_file)
                self._tls_ctx = crt_io.ClientTlsContext(options)

        async def send(self, request, *, request_config=None):
            response = await super().send(request, request_config=request_config)
            # awscrt writes the request body in a task of its own. When the reply ends first
            # (the container closed the session), that task fails writing the end of the
            # request, and nobody awaits it: take its outcome here instead of leaving
            # "Task exception was never retrieved" on stderr.
            writer = getattr(getattr(response, "_stream", None), "_writer", None)
            if isinstance(writer, asyncio.Task):
                writer.add_done_callback(_note_writer_outcome)
            return response

        def __deepcopy__(self, memo):
            # The SDK deep-copies its config (and so this transport) per client.
            return TrustingCRTHTTPClient(eventloop=self._eventloop, client_config=copy.deepcopy(self._config, memo))

    return TrustingCRTHTTPClient()


def _note_writer_outcome(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("request body writer ended: %s", task.exception())


async def _sdk_config(options: dict):
    """The client config on either SDK line: 0.10 and later resolve it (environment, profile,
    the credential chain); 0.9, the newest that `pipecat-ai[sagemaker]` allows, takes a plain
    `Config` with an explicit credentials resolver."""
    try:
        from aws_sdk_sagemaker_runtime_http2.config import AsyncSageMakerRuntimeHTTP2Config
    except ImportError:
        return await _config_before_0_10(dict(options))
    return await AsyncSageMakerRuntimeHTTP2Config.resolve(**options)


async def _config_before_0_10(options: dict):
    from aws_sdk_sagemaker_runtime_http2.config import Config
    from smithy_aws_core.identity import AWSCredentialsIdentity, IdentityChain, StaticCredentialsResolver

    key_id, secret = options.pop("aws_access_key_id", None), options.pop("aws_secret_access_key", None)
    token = options.pop("aws_session_token", None)
    options.setdefault("region", os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"))
    if key_id:
        identity = AWSCredentialsIdentity(access_key_id=key_id, secret_access_key=secret, session_token=token)
        resolver = StaticCredentialsResolver(identity)
    else:
        resolver = await IdentityChain.create(AWSCredentialsIdentity, region_override=options["region"])
    return Config(aws_credentials_identity_resolver=resolver, **options)


class SageMakerTransport:
    def __init__(self, client, stream, receiver):
        self._client = client
        self._stream = stream
        self._receiver = receiver
        self._parts: list[bytes] = []
        self._output_ended = False
        self._closed = False
        self.close_code: int | None = None
        self.close_reason = ""

    @classmethod
    async def connect(
        cls,
        endpoint_name: str,
        *,
        region: str | None = None,
        endpoint_url: str | None = None,
        ca_file: str | None = None,
        credentials: Credentials | None = None,
        model_query_string: str | None = None,
        target_variant: str | None = None,
    ) -> SageMakerTransport:
        """ca_file defaults to $AWS_CA_BUNDLE; credentials to local ones for a loopback
        endpoint_url, else to the SDK's default chain (environment, profile, role)."""
        from aws_sdk_sagemaker_runtime_http2.client import AsyncSageMakerRuntimeHTTP2Client
        from aws_sdk_sagemaker_runtime_http2.models import InvokeEndpointWithBidirectionalStreamInput

        options: dict = {"transport": _trusting_crt_client(ca_file or os.environ.get("AWS_CA_BUNDLE"))}
        if region:
            options["region"] = region
        if endpoint_url:
            options["endpoint_uri"] = endpoint_url
        credentials = credentials or default_credentials(endpoint_url)
        if credentials:
            options["aws_access_key_id"] = credentials.access_key_id
            options["aws_secret_access_key"] = credentials.secret_access_key
            if credentials.session_token:
                options["aws_session_token"] = credentials.session_token
        config = await _sdk_config(options)
        client = AsyncSageMakerRuntimeHTTP2Client(config=config)
        stream = await client.invoke_endpoint_with_bidirectional_stream(
            InvokeEndpointWithBidirectionalStreamInput(
                endpoint_name=endpoint_name, model_query_string=model_query_string, target_variant=target_variant
            )
        )
        # The response headers arrive once the endpoint accepted the stream.
        _, receiver = await stream.await_output()
        return cls(client, stream, receiver)

    async def send(self, frame: str | bytes) -> None:
        from aws_sdk_sagemaker_runtime_http2.models import RequestPayloadPart, RequestStreamEventPayloadPart

        if isinstance(frame, str):
            part = RequestPayloadPart(bytes_=frame.encode("utf-8"), data_type=UTF8)
        else:
            part = RequestPayloadPart(bytes_=frame, data_type=BINARY)
        await self._stream.input_stream.send(RequestStreamEventPayloadPart(value=part))

    async def receive(self) -> str | bytes | None:
        from aws_sdk_sagemaker_runtime_http2.models import ResponseStreamEventPayloadPart

        while True:
            try:
                event = await self._receiver.receive()
            except Exception as error:  # noqa: BLE001 - ModelStreamError, InternalStreamFailure, a dropped connection
                self._output_ended = True
                self.close_reason = f"{type(error).__name__}: {getattr(error, 'message', None) or error}"
                return None
            if event is None:
                self.close_code = self.close_code or 1000
                self._output_ended = True
                return None
            if not isinstance(event, ResponseStreamEventPayloadPart):
                continue  # an event type newer than this SDK
            part = event.value
            self._parts.append(part.bytes_ or b"")
            if part.completion_state == PARTIAL:
                continue
            data, self._parts = b"".join(self._parts), []
            return data.decode("utf-8") if part.data_type == UTF8 else data

    async def finish_sending(self) -> None:
        """Ends the request stream (a signed empty frame); replies may still come. Once the reply
        stream has ended, only releases the SDK's writer of the request body."""
        if not self._output_ended:
            await self._stream.input_stream.close()
            return
        # The reply stream, and with it the event stream, has ended: no end frame. awscrt's writer
        # of the request body still waits for one (until garbage collection, whose end of the
        # request then fails as "Exception ignored" on stderr): with its buffer closed unflushed,
        # which never blocks, it ends the HTTP/2 request now.
        body = getattr(self._stream.input_stream, "_writer", None)
        if hasattr(body, "close"):
            await body.close(flush=False)

    async def close(self) -> None:
        if self._closed:  # a session's close, then its `async with` exit
            return
        self._closed = True
        try:
            await self.finish_sending()
            await self._receiver.close()
        finally:
            if hasattr(self._client, "close"):  # SDK 0.9's client holds nothing to release
                await self._client.close()
