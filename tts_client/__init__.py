"""Client library for the Kokoro streaming speech service.

Sentence splitting lives in the shared `tts_text` package (the server uses it too).
"""
