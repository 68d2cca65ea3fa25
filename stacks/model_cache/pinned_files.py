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


def local_files(directory: Path) -> list[dict[str, str]]:
    """Every file below `directory` with its sha256, computed now (at synth): pins. A SHA256SUMS
    there (`make model-dir` writes one) is not a model file: the stack writes its own."""
    files = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.relative_to(directory).as_posix() != "SHA256SUMS"):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        files.append({"Path": path.relative_to(directory).as_posix(), "Sha256": digest.hexdigest()})
    return files


def local_revision(files: list[dict[str, str]]) -> str:
    """A revision label for a local directory: new content, new prefix, never overwritten."""
    sums = "".join(f"{f['Sha256']}  {f['Path']}\n" for f in files)
    return "local-" + hashlib.sha256(sums.encode()).hexdigest()[:16]
