"""A local stand-in for SageMaker's runtime front door, for tests and development.

It speaks what the AWS SDKs speak (HTTP/2 + TLS for InvokeEndpointWithBidirectionalStream,
HTTP/1.1 for InvokeEndpoint and InvokeEndpointWithResponseStream) on 127.0.0.1 and relays
to a container the way SageMaker does: client payloads become *binary* WebSocket frames,
container frames come back as ResponsePayloadPart events (text -> UTF8, binary -> BINARY,
long or fragmented frames as PARTIAL ... COMPLETE), and a container's non-2xx HTTP reply
turns into a 424 ModelError.

Not a security boundary: requests must be SigV4-signed, but signatures are not verified.
"""
