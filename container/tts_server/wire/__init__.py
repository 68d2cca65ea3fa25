"""The wire-neutral layer: errors, frames, field types and the Sink every adapter writes to.

It imports nothing else of the server, so every layer above may use it.
"""
