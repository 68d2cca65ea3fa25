"""Client library for the Kokoro streaming speech service.

Kept import-light: the server imports `tts_client.chunker` and must not pull in
transports or the AWS SDK.
"""
