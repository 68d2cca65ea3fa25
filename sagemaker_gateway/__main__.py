"""python -m sagemaker_gateway --upstream http://127.0.0.1:8080 --port 8443 --certs DIR"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
from pathlib import Path

from .server import start_gateway


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m sagemaker_gateway", description=__doc__)
    parser.add_argument("--upstream", default="http://127.0.0.1:8080", help="the container (default %(default)s)")
    parser.add_argument("--port", type=int, default=8443, help="listen port on 127.0.0.1; 0 picks a free one")
    parser.add_argument("--certs", type=Path, help="where to write the CA and server certificate (default: a temp dir)")
    parser.add_argument("--max-part-bytes", type=int, default=256 * 1024,
                        help="container frames longer than this return as PARTIAL payload parts")
    parser.add_argument("--utf8-as-text", action="store_true",
                        help="forward DataType=UTF8 parts as text frames (default: every part as a binary frame)")
    parser.add_argument("--drain-seconds", type=float, default=0,
                        help="after a client ends its input, let the container finish for this long "
                             "(default 0: tear its socket down at once, as SageMaker does)")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    certs = args.certs or Path(tempfile.mkdtemp(prefix="sagemaker-gateway-"))
    gateway = await start_gateway(args.upstream, certs, args.port, max_part_bytes=args.max_part_bytes,
                                  utf8_as_text=args.utf8_as_text, drain_seconds=args.drain_seconds)
    print(f"SageMaker gateway for {args.upstream}", flush=True)
    print(f"endpoint_url={gateway.endpoint_url}", flush=True)
    print(f"ca_file={gateway.ca_file}", flush=True)
    print(f"# export AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME_HTTP2={gateway.endpoint_url} AWS_CA_BUNDLE={gateway.ca_file}", flush=True)
    async with gateway.server:
        await gateway.server.serve_forever()


def main(argv=None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve(parse_args(argv)))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
