"""Where the checks run: a WebSocket URL, or a SageMaker endpoint (real or the local gateway)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..http import DirectHTTP, SageMakerHTTP
from ..session import Session


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
                     ca_file: str | None = None) -> Target:
    options = {"region": region, "endpoint_url": endpoint_url, "ca_file": ca_file}
    where = f" via {endpoint_url}" if endpoint_url else ""
    http = SageMakerHTTP(endpoint_name, region=region, endpoint_url=endpoint_url, ca_file=ca_file)
    return Target(f"SageMaker endpoint {endpoint_name} ({region}){where}", "sagemaker",
                  {"endpoint_name": endpoint_name, "sagemaker": options}, http)
