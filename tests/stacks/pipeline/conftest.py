import pytest
from stack_synth import synthesize_pipeline


@pytest.fixture(scope="session")
def pipeline():
    """The pipeline stack with placeholder accounts (staging, prod, tooling all different)."""
    return synthesize_pipeline()
