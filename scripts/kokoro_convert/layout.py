"""The deployed layout as bytes, written only where they differ, and its SHA256SUMS.

Every file is rendered in memory first and compared with what is on disk, so a second
run with the same inputs rewrites nothing (mtimes stay), and a run cut short leaves no
half-written file behind (each write goes to a temporary file, then is renamed).
SHA256SUMS has the model-cache stack's format (stacks/model_cache/handler/index.py):
"<sha256>  <relative path>\n" per file, sorted by path, without itself.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

MANIFEST = "SHA256SUMS"
WEIGHTS = "kokoro-v1_0.pth"
CONFIG = "config.json"
VOICE_SHAPE = (510, 1, 256)  # the real voice packs: one 256-d style per token count


def render(config: dict, state: Mapping[str, Mapping[str, torch.Tensor]],
           voices: Mapping[str, np.ndarray]) -> dict[str, bytes]:
    files = {
        CONFIG: (json.dumps(config, ensure_ascii=False, indent=2) + "\n").encode(),
        WEIGHTS: _torch_bytes({part: dict(tensors) for part, tensors in state.items()}),
    }
    for name, pack in sorted(voices.items()):
        tensor = torch.from_numpy(np.ascontiguousarray(pack, dtype=np.float32).reshape(VOICE_SHAPE))
        files[f"voices/{name}.pt"] = _torch_bytes(tensor)
    files[MANIFEST] = manifest(files).encode()
    return files


def manifest(files: Mapping[str, bytes]) -> str:
    return "".join(f"{hashlib.sha256(files[path]).hexdigest()}  {path}\n"
                   for path in sorted(files) if path != MANIFEST)


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # files in the directory we did not make


def write(directory: Path, files: Mapping[str, bytes], force: bool = False) -> WriteResult:
    result = WriteResult()
    for path, data in files.items():
        target = directory / path
        if not force and target.is_file() and _sha256_file(target) == hashlib.sha256(data).hexdigest():
            result.unchanged.append(path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, target)
        result.written.append(path)
    result.extra = sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*")
                          if p.is_file() and p.relative_to(directory).as_posix() not in files)
    return result


def verify(directory: Path) -> list[str]:
    """Problems with `directory` against its SHA256SUMS: [] when every file matches."""
    sums = directory / MANIFEST
    if not sums.is_file():
        return [f"{sums}: missing"]
    problems = []
    for line in sums.read_text().splitlines():
        digest, _, path = line.partition("  ")
        target = directory / path
        if not target.is_file():
            problems.append(f"{path}: missing")
        elif _sha256_file(target) != digest:
            problems.append(f"{path}: sha256 differs from {MANIFEST}")
    return problems


def _torch_bytes(value) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
