"""A stand-in for the Hugging Face Hub on 127.0.0.1, speaking the parts the handler uses.

`/{model}/resolve/{revision}/{path}`: LFS files answer 302 with X-Linked-Etag (their
sha256) to `/cdn/...`, which serves the bytes under an unrelated ETag, as the real CDN
does; other files answer 200 with their git blob sha1 as ETag. Faults can be injected
per path. `PUT /cfn-response` records CloudFormation responses.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Fault:
    status: int | None = None  # answer with this HTTP status instead
    truncate: bool = False  # announce the full length, send half, close
    times: int = 10**9  # how many requests the fault affects


@dataclass
class HubFake:
    model: str
    revision: str
    files: dict[str, bytes]
    lfs: set[str] = field(default_factory=set)
    faults: dict[str, Fault] = field(default_factory=dict)
    lying_etag: dict[str, str] = field(default_factory=dict)  # path -> announced digest
    requests: list[str] = field(default_factory=list)
    cfn_responses: list[dict] = field(default_factory=list)
    url: str = ""

    def serve(self) -> HubFake:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                hub.requests.append(self.path)
                prefix = f"/{hub.model}/resolve/{hub.revision}/"
                if self.path.startswith("/cdn/"):
                    return self._send_file(self.path.removeprefix("/cdn/"), etag='"cdn-object-etag"')
                if not self.path.startswith(prefix):
                    return self._status(404)
                path = self.path.removeprefix(prefix)
                if path not in hub.files:
                    return self._status(404)
                if path in hub.lfs:
                    digest = hub.lying_etag.get(path, sha256(hub.files[path]))
                    self.send_response(302)
                    self.send_header("Location", f"/cdn/{path}")
                    self.send_header("X-Linked-Etag", f'"{digest}"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                digest = hub.lying_etag.get(path, git_blob_sha1(hub.files[path]))
                return self._send_file(path, etag=f'"{digest}"')

            def do_PUT(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hub.cfn_responses.append(json.loads(body))
                self._status(200)

            def _send_file(self, path: str, etag: str) -> None:
                data = hub.files.get(path)
                if data is None:
                    return self._status(404)
                fault = hub.faults.get(path)
                if fault and fault.times > 0:
                    fault.times -= 1
                    if fault.status:
                        return self._status(fault.status)
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", etag)
                self.end_headers()
                if fault and fault.truncate:
                    self.wfile.write(data[: len(data) // 2])
                    self.close_connection = True
                    return None
                self.wfile.write(data)
                return None

            def _status(self, code: int) -> None:
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
