#!/usr/bin/env python3
"""CDK app for the Kokoro streaming TTS endpoint: `make synth`, `make diff`, `make deploy`
(the product's stage), or with `-c pipeline=true` the delivery pipeline (`make synth-pipeline`,
`make deploy-pipeline`).

Configuration comes from cdk.json's context, overridable with `-c key=value`; see the
docs/cdk-context.md and docs/pipeline.md for the keys. cdk-nag's AwsSolutions
checks run on every synth.
"""

import sys

from aws_cdk import App

from stacks.app import build
from stacks.config import ConfigError

app = App()
try:
    build(app)
except ConfigError as error:
    sys.exit(str(error))
app.synth()
