#!/usr/bin/env python3
"""The container image's size by part, measured without Docker.

Installs container/requirements.txt into a scratch venv the way container/Dockerfile's build
stage does (its `pip ...` and `python -c ...` commands, run in order), then reports what the
image is made of: the base layer (from its publisher's documentation: no registry is reached),
the venv by package, and the server's code.

    python scripts/image_budget.py [--prefix .cache/image-budget] [--json reports/image-budget.json]
    python scripts/image_budget.py --venv /opt/venv       # measure a venv that is already there

The package table is what the venv layer weighs uncompressed (file sizes from each
distribution's RECORD); registries store layers gzip-compressed, which for shared libraries
saves roughly half.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCKERFILE = REPO / "container" / "Dockerfile"
REQUIREMENTS = REPO / "container" / "requirements.txt"
CODE = ["container/tts_server", "tts_client", "container/serve"]
MB = 1e6
# What each base image brings, as its publisher documents it (no registry is reached). The CUDA
# runtime image is ubuntu:24.04 plus NVIDIA's CUDA 13.0 runtime packages (its Dockerfile in
# gitlab.com/nvidia/container-images/cuda: cuda-libraries-13-0, libnpp, cuda-nvtx, libcusparse,
# libcublas, libnccl2): the libraries the torch wheel brings again in nvidia/ (DUPLICATED below),
# whose size there stands for theirs (a lower bound: NPP and nvJPEG are not counted).
UBUNTU_MB = 78  # Canonical's ubuntu:24.04 on Docker Hub: ~78 MB uncompressed, ~29 MB pulled
BASES = {
    "ubuntu:24.04": "Canonical's ubuntu:24.04 (Python 3.12 from its archive)",
    "public.ecr.aws/docker/library/ubuntu:24.04": "Canonical's ubuntu:24.04 (Python 3.12 from its archive), "
                                                  "from ECR Public's mirror of the Docker official images",
    "nvidia/cuda:13.0.1-runtime-ubuntu24.04": "ubuntu:24.04 + NVIDIA's CUDA 13.0 runtime libraries (cudart, cuBLAS, "
                                              "cuFFT, cuRAND, cuSOLVER, cuSPARSE, NVRTC, nvJitLink, cuFile, NCCL, "
                                              "NPP, nvJPEG, NVTX)",
}
# The wheel's CUDA libraries that NVIDIA's runtime image also installs under /usr/local/cuda.
DUPLICATED = ("nvidia-cublas", "nvidia-cuda-runtime", "nvidia-cufft", "nvidia-curand", "nvidia-cusolver",
              "nvidia-cusparse", "nvidia-cuda-nvrtc", "nvidia-nvjitlink", "nvidia-cufile", "nvidia-nccl-cu13",
              "nvidia-nvtx")


def build_commands(dockerfile: Path = DOCKERFILE) -> list[list[str]]:
    """The build stage's pip and python commands, in order, with the COPY'd file's real path."""
    text = dockerfile.read_text().replace("\\\n", " ")
    commands, stage = [], None
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["FROM"]:
            stage = words[3] if len(words) == 4 else None
        elif words[:1] == ["RUN"] and stage == "build":
            for command in line.split(None, 1)[1].split("&&"):
                argv = shlex.split(command)
                if argv and argv[0] in ("pip", "python"):
                    commands.append([str(REQUIREMENTS) if a == "/tmp/requirements.txt" else a for a in argv])
    return commands


def base_image(dockerfile: Path = DOCKERFILE) -> str:
    """The first FROM's image, a `${NAME}` in it read from the ARG default before it."""
    lines = dockerfile.read_text().splitlines()
    defaults = dict(line.split(None, 1)[1].partition("=")[::2] for line in lines if line.startswith("ARG ") and "=" in line)
    image = next(line.split()[1] for line in lines if line.startswith("FROM "))
    return re.sub(r"\$\{(\w+)\}", lambda m: defaults[m.group(1)], image)


def install(venv: Path, dockerfile: Path = DOCKERFILE) -> None:
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    environment = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    environment.pop("PYTHONPATH", None)
    for argv in build_commands(dockerfile):
        print("+", shlex.join(argv), flush=True)
        subprocess.run(argv, check=True, env=environment)


def packages(venv: Path) -> dict[str, int]:
    """Distribution name -> bytes of its installed files (RECORD, with the bytecode pip compiled)."""
    probe = ("import json, importlib.metadata as m; print(json.dumps({d.metadata['Name'].lower(): sum("
             "(p.stat().st_size if p.is_file() else 0) for p in (d.locate_file(f) for f in d.files or ())) "
             "for d in m.distributions()}))")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", probe], check=True, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    return json.loads(out.stdout)


def directory_bytes(path: Path, skip: tuple[str, ...] = ()) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()
               and not set(p.parts) & set(skip))


def interpreter_mb() -> float:
    """CPython's standard library here (the image's apt python3 is the same 3.12 stdlib) without what
    Ubuntu's python3 leaves to other packages (tests, IDLE, Tk, ensurepip, the static library)."""
    stdlib = Path(subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip())
    left_out = {"site-packages", "test", "idlelib", "tkinter", "ensurepip", "__pycache__", "config-3.12-x86_64-linux-gnu"}
    total = sum(p.stat().st_size for p in stdlib.rglob("*") if p.is_file() and not set(p.parts) & left_out)
    return round(total / MB)


def report(venv: Path, dockerfile: Path = DOCKERFILE) -> dict:
    sizes = packages(venv)
    venv_total = directory_bytes(venv)
    nvidia = {n: s for n, s in sizes.items() if n.startswith("nvidia-") or n.startswith("cuda-")}
    named = {n: s for n, s in sizes.items() if n not in nvidia}
    top = dict(sorted(named.items(), key=lambda item: -item[1])[:14])
    base = base_image(dockerfile)
    duplicated = sum(s for n, s in nvidia.items() if n.startswith(DUPLICATED))
    return {
        "benchmark": "image-budget",
        "base": {"image": base, "note": BASES.get(base, "not documented in scripts/image_budget.py"),
                 "ubuntu_mb": UBUNTU_MB, "cuda_libraries_mb": round(duplicated / MB) if "cuda" in base else 0},
        "python_stdlib_mb": interpreter_mb(),
        "venv_mb": round(venv_total / MB),
        "packages_mb": {**{n: round(s / MB, 1) for n, s in top.items()},
                        "nvidia-* and cuda-* (CUDA libraries of the torch wheel)": round(sum(nvidia.values()) / MB, 1),
                        f"{len(named) - len(top)} other packages": round((sum(named.values()) - sum(top.values())) / MB, 1)},
        "cuda_packages_mb": {n: round(s / MB, 1) for n, s in sorted(nvidia.items(), key=lambda item: -item[1])},
        "code_mb": round(sum(directory_bytes(REPO / part, ("__pycache__",)) for part in CODE) / MB, 2),  # .dockerignore
    }


def print_table(data: dict) -> None:
    base = data["base"]
    print(f"\nbase layer   {base['image']}: {base['note']}")
    print(f"  ubuntu:24.04 {base['ubuntu_mb']:>7} MB (as published)")
    if base["cuda_libraries_mb"]:
        print(f"  CUDA         {base['cuda_libraries_mb']:>7} MB at least: the same libraries as the venv's nvidia/ (twice)")
    print(f"python3      {data['python_stdlib_mb']:>7} MB (the 3.12 standard library)")
    print(f"venv         {data['venv_mb']:>7} MB")
    for name, mb in data["packages_mb"].items():
        print(f"  {name:<52} {mb:>9.1f} MB")
    print(f"code         {data['code_mb']:>7} MB (container/tts_server, tts_client, serve)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", type=Path, default=REPO / ".cache" / "image-budget",
                        help="scratch folder: the venv is built in PREFIX/venv")
    parser.add_argument("--venv", type=Path, help="measure this venv instead of installing one")
    parser.add_argument("--dockerfile", type=Path, default=DOCKERFILE,
                        help="another Dockerfile's build (an older commit's, to measure a change)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    venv = args.venv or args.prefix / "venv"
    if not args.venv:
        install(venv, args.dockerfile)
    data = report(venv, args.dockerfile)
    print_table(data)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
