"""CDK stacks for the Kokoro streaming TTS product: foundation, model cache, endpoint."""
