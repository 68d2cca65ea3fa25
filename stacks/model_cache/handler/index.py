"""Copy a pinned model revision into S3, verified and idempotent.

A CloudFormation custom resource handler for AWS Lambda (stdlib + boto3 only). For each
file it streams the source into `s3://{bucket}/{model}/{revision}/{path}` in parts,
hashing as it goes, and completes the upload only when the digest matches; then it
writes `SHA256SUMS` beside the files. The source is either the Hugging Face Hub
(`{hub}/{model}/resolve/{revision}/{path}`) or a zip archive in S3: a local model
directory that CDK uploaded as an asset, with every digest pinned at synth.

Which digest a file must match, in order: the sha256 pinned in the resource properties;
else the sha256 the Hub announces for LFS files (X-Linked-Etag); else, for small
non-LFS files, the git blob sha1 the Hub sends as ETag. No digest, no copy.

Idempotent: an object already at its key carrying a verified `sha256` metadata entry
(equal to the pin, when there is one) is not fetched again, so a re-run with the same
revision copies nothing, and a run cut short resumes where it stopped. What exists is
learnt by listing the revision's prefix, the only listing the Lambda's role allows.
Delete keeps the weights: older revisions stay available for rollback.

Progress goes to the log as one JSON line per event: `copying` (file n of N), `progress`
(bytes uploaded of the file's total after each part), `copied`, then `synced`.
"""

from __future__ import annotations

import hashlib
import http.client
import math
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import boto3
from botocore.exceptions import ClientError

try:  # in the Lambda the asset's root is on the path; in tests this is a package
    from .cfn_response import log, respond
except ImportError:
    from cfn_response import log, respond

PART_SIZE = 16 * 1024 * 1024  # S3 parts are >= 5 MiB; the Hub keeps files > 10 MB in LFS
ATTEMPTS = 3
BACKOFF_SECONDS = 2.0
HTTP_TIMEOUT_SECONDS = 60
RESERVE_MS = 60_000  # stop starting new work this close to the Lambda timeout
MANIFEST = "SHA256SUMS"
USER_AGENT = "kokoro-tts-model-cache/1"


class CopyError(Exception):
    """A failure worth reporting to CloudFormation as is."""


class TransientError(CopyError):
    """A failure that another attempt may not repeat (5xx, 429, cut connection)."""


@dataclass(frozen=True)
class FileSpec:
    path: str
    sha256: str | None


@dataclass(frozen=True)
class CopySpec:
    bucket: str
    model_id: str
    revision: str
    files: tuple[FileSpec, ...]
    hub: str | None = None
    archive: tuple[str, str] | None = None  # (bucket, key) of a zip in S3

    @property
    def prefix(self) -> str:
        return f"{self.model_id}/{self.revision}/"

    @classmethod
    def from_properties(cls, props: dict) -> CopySpec:
        files = tuple(
            FileSpec(path=_safe_path(item["Path"]), sha256=(item.get("Sha256") or None))
            for item in props["Files"]
        )
        if not files:
            raise CopyError("Files is empty: nothing to copy")
        archive = props.get("Archive")
        if bool(archive) == bool(props.get("HubEndpoint")):
            raise CopyError("set exactly one source: HubEndpoint or Archive")
        return cls(
            bucket=props["Bucket"],
            model_id=props["ModelId"],
            revision=props["Revision"],
            files=files,
            hub=props.get("HubEndpoint", "").rstrip("/") or None,
            archive=(archive["Bucket"], archive["Key"]) if archive else None,
        )


def handler(event: dict, context) -> None:
    """Lambda entry point: do the work, then always answer CloudFormation."""
    physical_id = event.get("PhysicalResourceId")
    try:
        physical_id, data = on_event(event, remaining_ms=context.get_remaining_time_in_millis)
        respond(event, "SUCCESS", physical_id, data=data)
    except Exception as error:  # noqa: BLE001 - any failure must reach CloudFormation
        log("failed", error=str(error))
        respond(event, "FAILED", physical_id or "model-cache-failed", reason=str(error))


def on_event(event: dict, *, s3=None, remaining_ms=lambda: 10**9) -> tuple[str, dict]:
    if event["RequestType"] == "Delete":
        # Keep the weights (rollback reads them) and never fail: a failing Delete would
        # leave the stack stuck, even after a Create that failed on bad properties.
        return event.get("PhysicalResourceId") or "model-cache", {}
    spec = CopySpec.from_properties(event["ResourceProperties"])
    physical_id = f"s3://{spec.bucket}/{spec.prefix}"
    return physical_id, sync(spec, s3 or boto3.client("s3"), remaining_ms=remaining_ms)


def sync(spec: CopySpec, s3, *, remaining_ms=lambda: 10**9) -> dict:
    digests: dict[str, str] = {}
    copied = 0
    present = _listed_keys(s3, spec.bucket, spec.prefix)
    with _source(spec, s3) as fetch:
        for number, file in enumerate(spec.files, start=1):
            key = spec.prefix + file.path
            existing = _stored_sha256(s3, spec.bucket, key) if key in present else None
            if existing and file.sha256 in (None, existing):
                digests[file.path] = existing
                continue
            if remaining_ms() < RESERVE_MS:
                raise CopyError(f"Lambda time ran out before {file.path}; deploy again to resume")
            log("copying", path=file.path, file=number, files=len(spec.files))
            started = time.monotonic()
            digests[file.path], size = _copy_with_retries(fetch, file, s3, spec.bucket, key, remaining_ms)
            log("copied", path=file.path, bytes=size, seconds=round(time.monotonic() - started, 1))
            copied += 1
    manifest = "".join(f"{digests[path]}  {path}\n" for path in sorted(digests))
    listed = spec.prefix + MANIFEST in present
    if not listed or _read_text(s3, spec.bucket, spec.prefix + MANIFEST) != manifest:
        s3.put_object(Bucket=spec.bucket, Key=spec.prefix + MANIFEST, Body=manifest.encode(),
                      ContentType="text/plain")
    log("synced", prefix=spec.prefix, copied=copied, reused=len(spec.files) - copied)
    return {"S3Uri": f"s3://{spec.bucket}/{spec.prefix}", "Prefix": spec.prefix,
            "Copied": str(copied), "Reused": str(len(spec.files) - copied)}


# fetch(file) -> (readable response, its length or None, the source's announced digest)
Fetch = Callable[["FileSpec"], tuple]


@contextmanager
def _source(spec: CopySpec, s3) -> Iterator[Fetch]:
    if spec.hub:
        def from_hub(file: FileSpec) -> tuple:
            path = urllib.parse.quote(file.path)
            return _open(f"{spec.hub}/{spec.model_id}/resolve/{spec.revision}/{path}")

        yield from_hub
        return
    with tempfile.TemporaryFile() as spool:
        archive: list[zipfile.ZipFile] = []  # fetched on first use: a re-run may need nothing

        def from_archive(file: FileSpec) -> tuple:
            if not archive:
                s3.download_fileobj(spec.archive[0], spec.archive[1], spool)
                archive.append(zipfile.ZipFile(spool))
            try:
                info = archive[0].getinfo(file.path)
            except KeyError:
                raise CopyError(f"{file.path}: not in the uploaded model archive") from None
            return archive[0].open(info), info.file_size, None

        yield from_archive


def _copy_with_retries(fetch: Fetch, file: FileSpec, s3, bucket: str, key: str, remaining_ms) -> tuple[str, int]:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return _copy(fetch, file, s3, bucket, key, remaining_ms)
        except TransientError as error:
            log("retry", path=file.path, attempt=attempt, error=str(error))
            if attempt == ATTEMPTS:
                raise CopyError(f"{file.path}: download failed after {ATTEMPTS} attempts: {error}") from None
            time.sleep(BACKOFF_SECONDS * attempt)
    raise AssertionError("unreachable")


def _copy(fetch: Fetch, file: FileSpec, s3, bucket: str, key: str, remaining_ms) -> tuple[str, int]:
    """Copy one file; return its sha256 and its size in bytes."""
    response, length, announced = fetch(file)
    with response:
        expected = _expected_digest(file, announced, length)
        hashers = {"sha256": hashlib.sha256()}
        if expected[0] == "git-sha1":
            hashers["git-sha1"] = hashlib.sha1(f"blob {length}\0".encode(), usedforsecurity=False)
        parts = _parts(response, hashers.values(), length)
        first = next(parts, b"")
        second = next(parts, None)
        if second is None:  # fits one request: verify, then put
            _verify(file.path, expected, hashers)
            digest = hashers["sha256"].hexdigest()
            s3.put_object(Bucket=bucket, Key=key, Body=first, Metadata={"sha256": digest})
            return digest, len(first)
        if expected[0] != "sha256":
            raise CopyError(f"{file.path}: larger than one part but no sha256 to verify it against")

        def progress(uploaded: int) -> None:
            log("progress", path=file.path, bytes=uploaded, total=length,
                 percent=math.floor(1000 * uploaded / length) / 10 if length else None)

        size = _multipart(s3, bucket, key, expected[1], [first, second], parts, remaining_ms,
                          lambda: _verify(file.path, expected, hashers), progress)
        return expected[1], size


def _multipart(s3, bucket, key, sha256, head, rest, remaining_ms, verify, progress) -> int:
    """Upload parts; complete only after `verify` passes, so no bad object ever appears."""
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key=key, Metadata={"sha256": sha256})["UploadId"]
    try:
        done, uploaded = [], 0
        for number, body in enumerate(_chain(head, rest), start=1):
            if remaining_ms() < RESERVE_MS:
                raise CopyError(f"Lambda time ran out while uploading {key}; deploy again to resume")
            etag = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id,
                                  PartNumber=number, Body=body)["ETag"]
            done.append({"ETag": etag, "PartNumber": number})
            uploaded += len(body)
            progress(uploaded)
        verify()
        s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id,
                                     MultipartUpload={"Parts": done})
        return uploaded
    except BaseException:
        s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        raise


def _chain(head, rest):
    yield from head
    yield from rest


def _parts(response, hashers, length):
    total = 0
    while True:
        try:
            part = _read_exactly(response, PART_SIZE)
        except (OSError, http.client.HTTPException) as error:
            raise TransientError(f"connection broke after {total} bytes: {error!r}") from None
        if not part:
            break
        for hasher in hashers:
            hasher.update(part)
        total += len(part)
        yield part
    if length is not None and total != length:
        raise TransientError(f"got {total} of {length} bytes")


def _read_exactly(response, size: int) -> bytes:
    chunks, missing = [], size
    while missing:
        chunk = response.read(min(missing, 1024 * 1024))
        if not chunk:
            break
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def _expected_digest(file: FileSpec, announced: str | None, length: int | None) -> tuple[str, str]:
    etag = (announced or "").strip()
    if file.sha256:
        if _is_hex(etag, 64) and etag != file.sha256:
            raise CopyError(f"{file.path}: checksum mismatch: pinned sha256 {file.sha256}, "
                            f"the Hub announces {etag}")
        return ("sha256", file.sha256)
    if _is_hex(etag, 64):
        return ("sha256", etag)
    if _is_hex(etag, 40) and length is not None:
        return ("git-sha1", etag)
    raise CopyError(f"{file.path}: no pinned sha256 and the source announced no digest to verify against")


def _verify(path: str, expected: tuple[str, str], hashers: dict) -> None:
    kind, want = expected
    got = hashers[kind].hexdigest()
    if got != want:
        raise CopyError(f"{path}: checksum mismatch: expected {kind} {want}, downloaded {got}")


class _RecordRedirects(urllib.request.HTTPRedirectHandler):
    def __init__(self) -> None:
        self.hops: list = []

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        self.hops.append(headers)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _open(url: str) -> tuple:
    """GET `url` following redirects; return the response, its length, the Hub's digest.

    The digest comes from X-Linked-Etag on any hop, else from the first hop's ETag: later
    hops are CDN or storage hosts whose ETags are not content digests.
    """
    recorder = _RecordRedirects()
    opener = urllib.request.build_opener(recorder)
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"})
    try:
        response = opener.open(request, timeout=HTTP_TIMEOUT_SECONDS)
    except urllib.error.HTTPError as error:
        message = f"GET {url}: HTTP {error.code} {error.reason}"
        if error.code >= 500 or error.code == 429:
            raise TransientError(message) from None
        raise CopyError(message) from None
    except (OSError, http.client.HTTPException) as error:
        raise TransientError(f"GET {url}: {error!r}") from None
    hops = [*recorder.hops, response.headers]
    linked = next((h["X-Linked-Etag"] for h in hops if h.get("X-Linked-Etag")), None)
    length = response.headers.get("Content-Length")
    return response, int(length) if length is not None else None, _unquote_etag(linked or hops[0].get("ETag"))


def _unquote_etag(value: str | None) -> str | None:
    if value is None:
        return None
    return value.removeprefix("W/").strip('"')


def _is_hex(value: str, length: int) -> bool:
    return len(value) == length and all(c in "0123456789abcdef" for c in value)


def _listed_keys(s3, bucket: str, prefix: str) -> set[str]:
    """Every key under `prefix` (the role may list this prefix and no other)."""
    keys: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.update(item["Key"] for item in page.get("Contents", []))
    return keys


def _stored_sha256(s3, bucket: str, key: str) -> str | None:
    try:
        head = s3.head_object(Bucket=bucket, Key=key)
    except ClientError as error:
        if error.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
            return None
        raise
    return head.get("Metadata", {}).get("sha256")


def _read_text(s3, bucket: str, key: str) -> str | None:
    try:
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
    except ClientError as error:
        if error.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
            return None
        raise


def _safe_path(path: str) -> str:
    parts = path.split("/")
    if path.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise CopyError(f"unsafe file path {path!r}")
    return path
