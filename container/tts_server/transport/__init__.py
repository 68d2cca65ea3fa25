"""Transports: the WebSocket session endpoint (and, with the HTTP dialects, /invocations)."""
