"""The container runtimes' table (ntui.core.compose.containers): each runtime's words on the launch line in its
documented form, ntui's own directories mounted, the section's errors with file, line and field."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ntui.core.compose.containers import RUNTIME_NAMES, RUNTIMES, ContainerConf, Mount, parse_mount, wrap
from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate

OWN = ["/scratch/logs", "/home/u/proj"]


def _wrap(runtime: str, *, gpus: bool = False, env: tuple[str, ...] = (), **kw: object) -> list[str]:
    conf = ContainerConf(runtime, image=str(kw.pop("image", "IMG")), **kw)  # type: ignore[arg-type]
    w = wrap(conf, gpus=gpus, env_names=env, own_paths=OWN, quote=shlex.quote)
    return [*w.srun_options, "|", *w.prefix]


def test_every_runtime_is_in_the_table_with_its_facts() -> None:
    assert set(RUNTIME_NAMES) == set(RUNTIMES)
    for r in RUNTIMES.values():
        assert r.how and r.host_env and r.sees_host_files
    assert not RUNTIMES["podman"].host_network and RUNTIMES["apptainer"].host_network


def test_podman_hpc_passes_the_ranks_variables_and_the_host_namespaces() -> None:
    words = _wrap("podman-hpc", gpus=True, env=("HF_HOME", "NCCL_DEBUG"), workdir="/w", options=("--nccl",))
    assert words[:3] == ["|", "bash", "-c"] and words[4:11] == ["podman-hpc", "--rm", "--gpu", "--net", "host",
                                                                "--ipc", "host"]
    pairs = {words[i + 1] for i, w in enumerate(words) if w == "-e"}
    assert {"'SLURM*'", "'NTUI*'", "MASTER_ADDR", "MASTER_PORT", "HF_HOME"} <= pairs
    assert "NCCL_DEBUG" not in pairs  # already passed by its family
    assert [w for i, w in enumerate(words) if w == "-v" or (i and words[i - 1] == "-v")] == \
        ["-v", "/scratch/logs:/scratch/logs", "-v", "/home/u/proj:/home/u/proj"]
    assert words[-4:] == ["-w", "/w", "--nccl", "IMG"]  # the user's options after ntui's, the image last
    assert "--gpu" not in _wrap("podman-hpc")  # a CPU job asks for no GPU module
    assert "--gpu" not in _wrap("podman", gpus=True)  # plain podman has no such option (K6 warns instead)


def test_apptainer_gpu_flag_binds_and_workdir() -> None:
    assert _wrap("apptainer", gpus=True, workdir="/w")[:4] == ["|", "apptainer", "exec", "--nv"]
    assert "--nv" not in _wrap("apptainer", gpus=True, options=("--rocm",))
    assert _wrap("singularity")[1:3] == ["singularity", "exec"]
    words = _wrap("apptainer", mounts=("/scratch:/data:ro",), workdir="/w")
    assert words[3:] == ["-B", "/scratch:/data:ro", "-B", "/scratch/logs:/scratch/logs", "-B",
                         "/home/u/proj:/home/u/proj", "--pwd", "/w", "IMG"]


def test_a_mount_that_covers_ntui_directories_is_not_doubled() -> None:
    words = _wrap("charliecloud", mounts=("/scratch", "/home/u"))
    assert words == ["|", "ch-run", "-b", "/scratch:/scratch", "-b", "/home/u:/home/u", "IMG", "--"]


def test_pyxis_is_options_of_srun_itself() -> None:
    words = _wrap("pyxis", image="nvcr.io#nvidia/pytorch:25.02-py3", workdir="/w",
                  options=("--no-container-mount-home",))
    assert words == ["--container-image='nvcr.io#nvidia/pytorch:25.02-py3'",  # quoted: a # would start a comment
                     "--container-mounts=/scratch/logs:/scratch/logs,/home/u/proj:/home/u/proj",
                     "--container-workdir=/w", "--no-container-mount-home", "|"]


def test_shifter_keeps_the_host_files_and_takes_its_options() -> None:
    assert _wrap("shifter", mounts=("/a:/b", "/c:/d"), workdir="/w") == \
        ["|", "shifter", "--volume='/a:/b;/c:/d'", "--workdir=/w", "--image=IMG"]
    assert wrap(ContainerConf("shifter"), gpus=True, env_names=(), own_paths=OWN, quote=shlex.quote).prefix == \
        ("shifter",)  # the image from #SBATCH --image
    assert wrap(ContainerConf(), gpus=True, env_names=(), own_paths=OWN, quote=shlex.quote).prefix == ()


@pytest.mark.parametrize(("text", "want"), [
    ("/a", Mount("/a", "/a")),
    ("/a:/b", Mount("/a", "/b")),
    ("/a:/b:ro", Mount("/a", "/b", "ro")),
    ("$SCRATCH:/data", Mount("$SCRATCH", "/data")),
    ("data:/data", "the source 'data' must be an absolute path"),
    ("/a:b", "the target 'b' must be an absolute path"),
    ("/a:/b:ro:x", "expected SRC[:DST[:FLAGS]]"),
    ("/a,b:/c", "a comma cannot be carried"),
])
def test_parse_mount(text: str, want: Mount | str) -> None:
    got = parse_mount(text)
    assert got == want if isinstance(want, Mount) else (isinstance(got, str) and want in got)


def test_section_errors_name_file_line_and_field(tmp_path: Path) -> None:
    preset = tmp_path / "p.yaml"
    preset.write_text("launcher: {type: srun}\nscript: /bin/true\ncontainer:\n  runtime: apptainr\n"
                      "  mounts: [data]\n  workdir: rel\n  colour: red\n")
    _, problems = validate(load_preset(str(preset)))
    text = "\n".join(str(p) for p in problems)
    assert f"{preset}:4: container.runtime: expected one of" in text and "did you mean 'apptainer'?" in text
    assert f"{preset}:5: container.mounts.0: the source 'data' must be an absolute path" in text
    assert f"{preset}:6: container.workdir: must be an absolute path in the image" in text
    assert f"{preset}:7: container.colour: unknown key" in text


@pytest.mark.parametrize("runtime", [r for r in RUNTIME_NAMES if r != "none"])
@pytest.mark.parametrize("preset", ["local-srun", "local-torchrun", "local-accelerate"])
def test_the_rendezvous_is_computed_outside_and_the_container_wraps_only_the_task(preset: str, runtime: str) -> None:
    spec, problems = validate(load_preset(preset, (f"container.runtime={runtime}", "container.image=I",
                                                   "logs.dir=/logs")))
    assert spec is not None, [str(p) for p in problems]
    script = render(spec)
    head, launch = script.split("# Launch:")
    assert "MASTER_ADDR=$(scontrol" in head and "scontrol" not in launch
    launch = launch[launch.index("\nsrun "):]  # from the launch step on
    marker = {"pyxis": "--container-image=I", "charliecloud": "ch-run", "shifter": "shifter"}.get(runtime, runtime)
    container_at = launch.find(marker)
    launcher_at = launch.find({"srun": "bash -c 'export RANK", "torchrun": "torchrun",
                               "accelerate": "accelerate"}[spec.launcher])
    assert 0 <= container_at < launcher_at, (container_at, launcher_at, launch)  # the launcher runs inside
