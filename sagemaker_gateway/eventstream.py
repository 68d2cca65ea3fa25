"""The event-stream framing of the SageMaker runtime APIs, on smithy-aws-event-stream's codec.

Client -> gateway: each event is a signed envelope (`:date`, `:chunk-signature` headers)
whose payload is the real event message; an envelope with an empty payload ends the
stream. Gateway -> client: unsigned event messages.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

from smithy_aws_event_stream.events import Event, EventMessage

# Prelude (12 bytes) is total length, headers length, prelude CRC.
_PRELUDE_BYTES = 12


class EnvelopeError(ValueError):
    pass


@dataclass(frozen=True)
class PayloadPart:
    data: bytes
    data_type: str | None
    completion_state: str | None


class EnvelopeDecoder:
    """HTTP/2 DATA in (cut anywhere), the payload parts inside the envelopes out."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.ended = False  # the client's empty envelope arrived

    def feed(self, data: bytes) -> list[PayloadPart]:
        self._buffer += data
        parts = []
        while (envelope := self._next_message()) is not None:
            if not envelope.headers.get(":chunk-signature") or ":date" not in envelope.headers:
                raise EnvelopeError("event envelope is not signed (no :chunk-signature/:date header)")
            if not envelope.payload:
                self.ended = True
                continue
            inner = Event.decode(io.BytesIO(envelope.payload))
            if inner is None:
                raise EnvelopeError("empty event inside a signed envelope")
            headers = inner.message.headers
            if headers.get(":event-type") != "PayloadPart":
                raise EnvelopeError(f"unexpected event type {headers.get(':event-type')!r}")
            parts.append(PayloadPart(inner.message.payload, headers.get("DataType"), headers.get("CompletionState")))
        return parts

    def _next_message(self) -> EventMessage | None:
        if len(self._buffer) < _PRELUDE_BYTES:
            return None
        total = int.from_bytes(self._buffer[:4], "big")
        if len(self._buffer) < total:
            return None
        event = Event.decode(io.BytesIO(bytes(self._buffer[:total])))
        del self._buffer[:total]
        return event.message


def payload_part(data: bytes, data_type: str, completion_state: str) -> bytes:
    return EventMessage(
        headers={
            ":message-type": "event",
            ":event-type": "PayloadPart",
            ":content-type": "application/octet-stream",
            "DataType": data_type,
            "CompletionState": completion_state,
        },
        payload=data,
    ).encode()


def response_payload(data: bytes) -> bytes:
    """A PayloadPart of InvokeEndpointWithResponseStream (no data type, no completion)."""
    return EventMessage(
        headers={":message-type": "event", ":event-type": "PayloadPart", ":content-type": "application/octet-stream"},
        payload=data,
    ).encode()


def model_stream_error(message: str, error_code: str = "ModelStreamError") -> bytes:
    return EventMessage(
        headers={":message-type": "exception", ":exception-type": "ModelStreamError", ":content-type": "application/json"},
        payload=json.dumps({"Message": message, "ErrorCode": error_code}).encode(),
    ).encode()
