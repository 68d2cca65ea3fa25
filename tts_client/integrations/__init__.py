"""Agent-framework integrations: `tts_client.integrations.pipecat` (the `[pipecat]` extra) and
`tts_client.integrations.livekit` (the `[livekit]` extra).

Nothing is imported here, so importing one integration never pulls in the other framework.
"""
