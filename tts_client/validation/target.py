"""Where the checks run: a WebSocket URL, or a SageMaker endpoint (real or the local gateway)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..http import DirectHTTP, SageMakerHTTP
from ..session import Session
from ..transports.sagemaker import Credentials

EXIT_UNREACHABLE = 2  # both validators' exit status for a target not reached or malformed


@dataclass
class Target:
    description: str
    kind: str  # "websocket" | "sagemaker"
    options: dict[str, Any]
    http: DirectHTTP | SageMakerHTTP | None

    async def session(self, binary: bool = True) -> Session:
        """A new session; `binary` sends client events as binary frames, as SageMaker delivers them.

        Through SageMaker the front door decides the frame type, so `binary` has no say there.
        """
        if self.kind == "websocket":
            return await Session.websocket(self.options["url"], binary=binary)
        return await Session.sagemaker(self.options["endpoint_name"], **self.options["sagemaker"])


def websocket_target(url: str, http_url: str | None = None) -> Target:
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise ValueError(f"--url: expected ws:// or wss://, got {url!r}")
    http_url = http_url or f"{'https' if parts.scheme == 'wss' else 'http'}://{parts.netloc}"
    return Target(url, "websocket", {"url": url}, DirectHTTP(http_url))


def sagemaker_target(endpoint_name: str, region: str | None, endpoint_url: str | None = None,
                     ca_file: str | None = None, credentials: Credentials | None = None) -> Target:
    """`credentials`: None for the SDK's chain (or a local gateway's, for a loopback URL)."""
    options = {"region": region, "endpoint_url": endpoint_url, "ca_file": ca_file, "credentials": credentials}
    where = f" via {endpoint_url}" if endpoint_url else ""
    http = SageMakerHTTP(endpoint_name, region=region, endpoint_url=endpoint_url, ca_file=ca_file,
                         credentials=credentials)
    return Target(f"SageMaker endpoint {endpoint_name} ({region}){where}", "sagemaker",
                  {"endpoint_name": endpoint_name, "sagemaker": options}, http)


def assumed_credentials(role_arn: str, region: str | None, session_name: str) -> Credentials:
    """Credentials of `role_arn` (sts:AssumeRole with the caller's own), held by this process only:
    a pipeline step that validates another account's endpoint runs one command, not a shell
    that carries keys from one command to the next. One hour: the longest a role chained from
    CodeBuild's may last, and more than a validation or a load stage takes."""
    import boto3

    sts = boto3.client("sts", region_name=region)
    granted = sts.assume_role(RoleArn=role_arn, RoleSessionName=session_name, DurationSeconds=3600)["Credentials"]
    return Credentials(granted["AccessKeyId"], granted["SecretAccessKey"], granted["SessionToken"])


def target_for(args, session_name: str) -> Target:
    """The target of a script's --url (with --http-url) or --endpoint (with --region,
    --endpoint-url, --ca-file, --role-arn): scripts/validate_endpoint.py and scripts/load_stage.py."""
    if args.url:
        return websocket_target(args.url, getattr(args, "http_url", None))
    credentials = assumed_credentials(args.role_arn, args.region, session_name) if args.role_arn else None
    return sagemaker_target(args.endpoint, args.region, args.endpoint_url, args.ca_file, credentials)


def add_target_arguments(parser) -> None:
    """--url, or --endpoint with --region, --endpoint-url, --ca-file and --role-arn."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", help="WebSocket URL of a local or reachable server")
    where.add_argument("--endpoint", help="SageMaker endpoint name")
    parser.add_argument("--region", help="AWS region of the endpoint (default: the SDK's configuration)")
    parser.add_argument("--endpoint-url", help="override the SageMaker runtime URL (the local gateway)")
    parser.add_argument("--ca-file", help="CA bundle to trust for --endpoint-url (default: $AWS_CA_BUNDLE)")
    parser.add_argument("--role-arn", help="with --endpoint: assume this role first (sts:AssumeRole) and invoke "
                                           "with its credentials, held by this process only")


def check_target_arguments(parser, args) -> None:
    if not (args.url or args.endpoint):
        parser.error("one of --url or --endpoint is required")
    if args.role_arn and not args.endpoint:
        parser.error("--role-arn goes with --endpoint")


async def reach(args, session_name: str, timeout: float) -> tuple[Target | None, str | None]:
    """(the target, None) once a session connects to it, else (the target or None, why not): the
    role could not be assumed, or no session opened. A malformed argument raises ValueError."""
    try:
        target = target_for(args, session_name)
    except ValueError:
        raise
    except Exception as error:  # noqa: BLE001 - the role could not be assumed: as unreachable as a wrong name
        return None, f"{type(error).__name__}: {error}"
    try:
        session = await asyncio.wait_for(target.session(), timeout)
    except Exception as error:  # noqa: BLE001 - whatever stops a session is the reason reported
        return target, f"{type(error).__name__}: {error}"
    await session.abort()
    return target, None


def run_against_target(main: Coroutine[Any, Any, int]) -> int:
    """A validator's main coroutine to its exit status; a malformed target argument, found only
    while the target is built, is said on stderr and exits EXIT_UNREACHABLE."""
    try:
        return asyncio.run(main)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_UNREACHABLE
