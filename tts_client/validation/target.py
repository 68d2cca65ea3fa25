"""Where the checks run: a WebSocket URL, or a SageMaker endpoint (real or the local gateway)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..http import DirectHTTP, SageMakerHTTP
from ..session import Session
from ..transports.sagemaker import Credentials


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
