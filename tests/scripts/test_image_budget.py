"""scripts/image_budget.py: the image's size by part without Docker, installing the way the
Dockerfile's build stage does."""

from __future__ import annotations

import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from image_budget import REQUIREMENTS, base_image, build_commands, report  # noqa: E402


def test_it_runs_the_build_stages_own_install_commands_in_order():
    commands = build_commands()
    assert commands[0] == ["pip", "install", "--no-cache-dir", "--upgrade", "pip"]
    assert ["pip", "install", "--no-cache-dir", "-r", str(REQUIREMENTS)] in commands  # the COPY'd file, here
    assert ["pip", "uninstall", "--yes", "triton"] in commands
    assert commands[-1] == ["pip", "uninstall", "--yes", "pip"]
    assert any(c[:2] == ["python", "-c"] and "import torch" in c[2] for c in commands)


def fake_distribution(site: Path, name: str, files: dict[str, int]) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    for path, size in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(b"\0" * size)
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in files))


def test_the_report_splits_the_venv_by_package_and_names_the_base(tmp_path):
    venv.create(tmp_path / "venv", with_pip=False)
    [site] = (tmp_path / "venv" / "lib").glob("python3.*/site-packages")
    fake_distribution(site, "torch", {"torch/lib/libtorch_cpu.so": 3_000_000, "torch/__init__.py": 500_000})
    fake_distribution(site, "nvidia-cublas", {"nvidia/cu13/lib/libcublas.so.13": 2_000_000})
    fake_distribution(site, "soxr", {"soxr/__init__.py": 100_000})
    data = report(tmp_path / "venv")
    assert data["packages_mb"]["torch"] == 3.5 and data["packages_mb"]["soxr"] == 0.1
    assert data["cuda_packages_mb"] == {"nvidia-cublas": 2.0}
    assert data["packages_mb"]["nvidia-* and cuda-* (CUDA libraries of the torch wheel)"] == 2.0
    assert data["venv_mb"] >= 5  # every file of the venv, bytecode included
    assert data["base"]["image"] == base_image() == "public.ecr.aws/docker/library/ubuntu:24.04"
    assert data["base"]["cuda_libraries_mb"] == 0  # a CUDA base would count the wheel's copies twice
    assert 0 < data["code_mb"] < 5
