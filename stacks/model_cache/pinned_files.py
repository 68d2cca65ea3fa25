"""Which files make up the model, with which digests: the pinned manifest, or a local dir."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

MANIFEST = Path(__file__).with_name("kokoro_manifest.json")


def hub_files(model_id: str, revision: str) -> list[dict[str, str]]:
    """Custom-resource `Files`: every file of the manifest, pinned digests when they apply.

    The pins belong to one model and revision; for another revision the layout is the
    same but the digests are not, so the handler falls back to the Hub's own digests.
    """
    manifest = json.loads(MANIFEST.read_text())
    pinned = (manifest["model"], manifest["revision"]) == (model_id, revision)
    return [
        {"Path": item["path"], "Sha256": item.get("sha256", "") if pinned else ""}
        for item in manifest["files"]
    ]


def local_sums(directory: Path) -> str:
    """SHA256SUMS (sha256sum's format) of every file below `directory`, sorted by path."""
    lines = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        lines.append(f"{digest.hexdigest()}  {path.relative_to(directory).as_posix()}\n")
    return "".join(lines)


def local_revision(sums: str) -> str:
    """A revision label for a local directory: new content, new prefix, never overwritten."""
    return "local-" + hashlib.sha256(sums.encode()).hexdigest()[:16]
