"""The deployed weights directory (MODEL_DIR, /opt/ml/model in the image): what it must hold.

The model-cache stack copies `config.json`, `kokoro-v1_0.pth`, `voices/*.pt` and a
`SHA256SUMS` manifest ("<sha256>  <relative path>" per line) under one prefix, and SageMaker
mounts it read-only. A directory holding none of the weight files means "no weights": the
embedded engine serves. One holding some of them is meant to serve and must be whole; what is
wrong is told in one line naming the file (ModelDirError), so /ping stays 503 with a reason.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

CONFIG = "config.json"
WEIGHTS = "kokoro-v1_0.pth"
VOICES = "voices"
MANIFEST = "SHA256SUMS"
_CHUNK = 1 << 20


class ModelDirError(RuntimeError):
    """The weights directory cannot serve; str() is the one-line reason, naming the file."""


@dataclass(frozen=True)
class ModelDir:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / CONFIG

    @property
    def weights(self) -> Path:
        return self.root / WEIGHTS

    @property
    def voice_files(self) -> list[Path]:
        return sorted((self.root / VOICES).glob("*.pt"))

    def holds_weights(self) -> bool:
        """Anything of the deployed layout present (then it must be complete)."""
        return self.config.exists() or self.weights.exists() or (self.root / VOICES).is_dir()

    def check(self) -> None:
        """Raise ModelDirError for a missing file or a checksum that disagrees with SHA256SUMS."""
        for path in (self.config, self.weights):
            if not path.is_file():
                raise ModelDirError(f"{path}: missing (MODEL_DIR must hold {CONFIG}, {WEIGHTS} and {VOICES}/*.pt)")
        if not self.voice_files:
            raise ModelDirError(f"{self.root / VOICES}: no voice files (*.pt)")
        manifest = self.root / MANIFEST
        if manifest.is_file():
            self._verify(manifest)

    def _verify(self, manifest: Path) -> None:
        for number, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            expected, _, name = line.partition("  ")
            if not name or len(expected) != 64:
                raise ModelDirError(f"{manifest}: line {number} should read '<sha256>  <path>', got {line!r}")
            if name == MANIFEST:
                continue  # a manifest cannot vouch for itself
            path = self.root / name
            if not path.is_file():
                raise ModelDirError(f"{path}: missing (listed in {MANIFEST})")
            actual = sha256_of(path)
            if actual != expected.lower():
                raise ModelDirError(f"{path}: SHA-256 {actual} disagrees with {MANIFEST} ({expected})")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
