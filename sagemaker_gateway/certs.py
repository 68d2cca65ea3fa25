"""TLS for the gateway from a locally generated CA (trustme): nothing leaves the machine.

The AWS SDK negotiates HTTP/2 only over TLS with ALPN (an http:// URL falls back to
HTTP/1.1, on which the bidirectional call hangs), so the gateway needs a certificate its
clients can be told to trust: they get the CA file's path.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import trustme


@dataclass(frozen=True)
class GatewayTLS:
    ca_file: Path
    context: ssl.SSLContext


def issue(directory: Path) -> GatewayTLS:
    directory.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA(organization_name="tts local SageMaker gateway")
    server = ca.issue_cert("127.0.0.1", "localhost")
    ca_file = directory / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    chain, key = directory / "server-chain.pem", directory / "server-key.pem"
    with chain.open("wb") as out:
        for blob in server.cert_chain_pems:
            out.write(blob.bytes())
    server.private_key_pem.write_to_path(str(key))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(chain), str(key))
    context.set_alpn_protocols(["h2", "http/1.1"])
    return GatewayTLS(ca_file, context)
