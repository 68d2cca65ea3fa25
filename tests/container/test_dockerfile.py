"""container/Dockerfile can't be built here (no Docker engine): check what it promises."""

from __future__ import annotations

import json
import re

import pytest

from dockerfile_reader import REPO, REQUIREMENTS, args, env, image_args, image_stages, instructions, runtime_user, stages

ECR_PUBLIC_UBUNTU = "public.ecr.aws/docker/library/ubuntu:24.04"


def test_plain_ubuntu_base_with_python_312_and_no_second_cuda():
    # The torch wheel brings the CUDA libraries it loads (nvidia/ in the venv, through its
    # RPATH): a CUDA base image would ship them twice (docs/benchmarks.md, "Image and cold start").
    bases = [s[0][1] for s in stages().values()]
    assert bases == [ECR_PUBLIC_UBUNTU, "runtime", "runtime"]  # 24.04 ships 3.12
    assert not any("cuda" in base for base in bases)
    assert any("apt-get install" in a and "python3" in a.split() for a in args("RUN", "runtime"))
    # What nvidia/cuda images told the NVIDIA container toolkit: mount the driver and the GPUs,
    # and only onto a driver of CUDA 13 or later (the wheel's +cu130).
    values = env()
    assert values["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert set(values["NVIDIA_DRIVER_CAPABILITIES"].split(",")) >= {"compute", "utility"}
    assert values["NVIDIA_REQUIRE_CUDA"] == "cuda>=13.0"


def test_the_base_comes_from_ecr_public_not_docker_hub_and_a_build_argument_overrides_it():
    """Docker Hub limits anonymous pulls per address, which CodeBuild's shared addresses reach
    (aws/aws-cdk#11774); ECR Public mirrors the Docker official images."""
    [first] = instructions()[:1]
    assert first == ("ARG", f"BASE_IMAGE={ECR_PUBLIC_UBUNTU}")  # before FROM: the only place FROM can read it
    assert stages()["runtime"][0] == ("FROM", ECR_PUBLIC_UBUNTU)
    mirror = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/docker-hub/library/ubuntu:24.04"
    assert stages({"BASE_IMAGE": mirror})["runtime"][0] == ("FROM", mirror)
    assert not [arg for name, arg in instructions() if name == "FROM" and arg.split()[0].startswith(("ubuntu", "docker.io"))]


def test_the_user_is_a_build_argument_tts_by_default_root_on_request():
    assert runtime_user()["name"] == "tts"
    assert runtime_user({"CONTAINER_USER": "root"}) == {"name": "root", "uid": "0", "gid": "0", "home": "/root"}
    # Anything else stops the build (a typo must not become a user that does not exist at run time).
    [guard] = [c for run in args("RUN", "final") for c in run.split("&&") if "CONTAINER_USER" in c]
    assert 'in tts|root) ;;' in guard and "exit 1" in guard


def test_the_stacks_know_the_uid_of_each_user_the_image_can_run_as():
    """The validator's --expect-uid comes from stacks/config.py's copy of these uids."""
    from stacks.config import CONTAINER_UIDS

    assert {user: int(runtime_user({"CONTAINER_USER": user})["uid"]) for user in CONTAINER_UIDS} == CONTAINER_UIDS


def test_the_image_holds_no_test_or_development_package():
    def names(path):
        return {re.split(r"[=<>\[ ]", line, maxsplit=1)[0].lower() for line in path.read_text().splitlines()
                if line.strip() and not line.startswith(("#", "-r"))}

    server, development = names(REQUIREMENTS), names(REPO / "requirements-dev.txt")
    for tool in ("pytest", "hypothesis", "matplotlib", "playwright", "moto", "tqdm", "httpx"):
        assert tool in development and tool not in server, tool
    assert not server & (development - {"websockets"}), server & development  # websockets: both need it
    # triton only compiles kernels for torch.compile, which the server never calls.
    uninstalled = [c.split()[3:] for run in args("RUN", "build") for c in run.split("&&") if "pip uninstall" in c]
    assert ["triton"] in uninstalled and uninstalled[-1] == ["pip"]


def test_layers_run_from_the_heaviest_and_stablest_to_the_code():
    """A code change re-pushes only the layers after the code's COPY: megabytes, not the venv."""
    final = stages()["final"]
    position = {arg: i for i, (name, arg) in enumerate(final) if name in ("COPY", "RUN")}
    venv = position["--from=build /opt/venv /opt/venv"]
    user = next(i for a, i in position.items() if "useradd" in a)
    code = position["container/tts_server /opt/program/tts_server"]
    assert venv < user < code
    after_code = [arg for name, arg in final[code:] if name == "RUN"]
    assert all("useradd" not in run and "apt-get" not in run and "pip" not in run for run in after_code), after_code


def test_torch_is_pinned_past_the_advisory():
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", REQUIREMENTS.read_text(), re.M))
    major, minor = map(int, pins["torch"].split(".")[:2])
    assert (major, minor) >= (2, 10)  # PYSEC-2026-2286 affects older releases


def test_requirements_file_is_the_single_source_for_image_and_venv():
    assert "container/requirements.txt /tmp/requirements.txt" in args("COPY", "build")
    installs = [cmd for run in args("RUN") for cmd in run.split("&&") if "pip install" in cmd]
    assert any(cmd.split()[-2:] == ["-r", "/tmp/requirements.txt"] for cmd in installs)
    for cmd in installs:  # nothing installed beside the file, except pip itself
        assert "-r /tmp/requirements.txt" in cmd or cmd.split()[-2:] == ["--upgrade", "pip"], cmd
    assert "-r container/requirements.txt" in (REPO / "requirements.txt").read_text().splitlines()


def test_sagemaker_bidirectional_streaming_label():
    assert "com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true" in args("LABEL")


def test_runs_as_a_non_root_user_whose_group_can_read_root_owned_weights():
    user = runtime_user()
    assert user["name"] not in ("root", "0") and int(user["uid"]) == 10001
    # Primary group 0: weights SageMaker writes as root with mode 0640 stay readable; the
    # group carries no privilege (OpenShift's convention for non-root images).
    assert user["gid"] == "0"
    assert env()["HOME"] == user["home"]  # created by useradd --create-home, owned by the user


def test_code_venv_and_model_dir_are_not_writable_by_the_runtime_user():
    for stage in image_stages():
        for copy in args("COPY", stage):
            assert "--chown" not in copy and "--chmod" not in copy, copy  # root-owned, 0644/0755
        for cmd in (c for run in args("RUN", stage) for c in run.split("&&")):
            assert "chown" not in cmd, cmd
            if "chmod" in cmd:  # only making the entrypoint executable
                assert cmd.split()[1:] == ["0755", "/opt/program/serve"], cmd
    # The model directory is only SageMaker's mount point: created, never handed over.
    mkdirs = [c for run in args("RUN", "final") for c in run.split("&&") if "mkdir" in c]
    assert [c.split() for c in mkdirs] == [["mkdir", "-p", "/opt/ml/model"]]


def test_every_cache_and_temporary_file_goes_to_home_or_tmp():
    values = env()
    user = runtime_user()
    for key in ("XDG_CACHE_HOME", "HF_HOME", "TORCH_HOME", "NUMBA_CACHE_DIR", "MPLCONFIGDIR"):
        assert values[key].startswith(("/tmp/", user["home"] + "/")), (key, values[key])
    assert values["PYTHONDONTWRITEBYTECODE"] == "1"  # no __pycache__ beside the code


def test_final_image_carries_no_build_tools_or_caches():
    # pip, python3-venv and the wheels' download cache stay in the build stage.
    [copy_from] = [c for c in args("COPY", "final") if c.startswith("--from=")]
    assert copy_from == "--from=build /opt/venv /opt/venv"
    installs = [c for run in image_args("RUN") for c in run.split("&&") if "apt-get install" in c]
    assert [set(c.split()) - {"apt-get", "install", "-y", "--no-install-recommends"} for c in installs] == [
        {"python3", "ca-certificates"}]
    for stage in stages():
        for run in args("RUN", stage):
            if "apt-get install" in run:
                assert "rm -rf /var/lib/apt/lists/*" in run, run
            for cmd in (c for c in run.split("&&") if "pip install" in c):
                assert "--no-cache-dir" in cmd, cmd
    assert "pip uninstall --yes pip" in " ".join(args("RUN", "build"))  # no installer left in the venv


def test_serves_on_8080_with_serve_as_entrypoint():
    assert args("EXPOSE") == ["8080"]
    [entrypoint] = args("ENTRYPOINT")
    assert json.loads(entrypoint) == ["serve"]
    assert "/opt/program" in env()["PATH"].split(":")
    assert "container/serve /opt/program/serve" in args("COPY")
    assert env()["PORT"] == "8080"


def test_offline_model_from_opt_ml_model():
    assert env()["HF_HUB_OFFLINE"] == "1"
    assert env()["MODEL_DIR"] == "/opt/ml/model"


def test_server_and_client_package_are_copied_side_by_side():
    copies = args("COPY")
    assert "container/tts_server /opt/program/tts_server" in copies
    assert "tts_text /opt/program/tts_text" in copies
    assert "tts_formats /opt/program/tts_formats" in copies
    for source in (c.split()[0] for c in copies if not c.startswith("--from=")):
        assert (REPO / source).exists(), source


def test_build_context_is_container_and_client_only():
    from stacks.endpoint.image import BUILD_CONTEXT_EXCLUDE

    dockerignore = [line for line in (REPO / ".dockerignore").read_text().splitlines()
                    if line and not line.startswith("#")]
    assert dockerignore == BUILD_CONTEXT_EXCLUDE
    sent = {c.split()[0].split("/")[0] for c in args("COPY") if not c.startswith("--from=")}
    assert sent == {"container", "tts_text", "tts_formats"}


@pytest.mark.parametrize("name", ["ENTRYPOINT", "CMD"])
def test_exec_form_only(name):
    for value in args(name):
        assert value.startswith("["), f"{name} {value}: shell form would not forward signals"
