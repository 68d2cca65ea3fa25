"""Fixtures for the stack tests; the synthesis helpers live in stack_synth.py."""

import pytest
from stack_synth import Synth, synthesize


@pytest.fixture(scope="session")
def synth():
    """`synth(**context)` -> Synth; cached, so each distinct context synthesizes once."""
    return synthesize


@pytest.fixture(scope="session")
def default() -> Synth:
    return synthesize()
