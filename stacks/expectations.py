"""What a deploy asked for, as the options of the checks that run after it.

The delivery pipeline writes these options into its validation and load steps at synth; the
GitHub workflow, which deploys with `make deploy`, asks for the same from cdk.json:

  python -m stacks.expectations validate [-c key=value ...]   # scripts/validate_endpoint.py's
  python -m stacks.expectations load     [-c key=value ...]   # scripts/load_stage.py's

so both gate on the device, the user and the queue bound the deploy set, and the load stage
on the deploy's budget (stacks/load_budget.py), from one function each.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from stacks.config import ConfigError, DeploymentConfig

CDK_JSON = Path(__file__).resolve().parents[1] / "cdk.json"


def validator_arguments(config: DeploymentConfig) -> list[str]:
    """The device (cuda on GPU types: a CPU fallback fails), the uid and the queue bound."""
    return ["--expect-device", config.device, "--expect-uid", str(config.container_uid),
            "--max-pending", str(config.ws_max_pending_responses)]


def load_arguments(config: DeploymentConfig) -> list[str]:
    return config.load_budget.arguments()


def context(overrides: list[str]) -> dict[str, object]:
    """cdk.json's context with `-c key=value` overrides, as the CDK CLI merges them."""
    values = dict(json.loads(CDK_JSON.read_text())["context"])
    for override in overrides:
        key, separator, value = override.partition("=")
        if not separator:
            raise ConfigError(f"-c {override}: expected key=value")
        values[key] = value
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("check", choices=("validate", "load"))
    parser.add_argument("-c", "--context", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    try:
        config = DeploymentConfig.from_context(context(args.context).get)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    print(" ".join(validator_arguments(config) if args.check == "validate" else load_arguments(config)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
