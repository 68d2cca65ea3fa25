"""The deployed contract as runnable checks: what `scripts/validate_endpoint.py` runs.

Each check opens its own session (or HTTP call) against a Target, so one failure never
poisons the next, and reports pass, fail or skip with a one-line reason.
"""
