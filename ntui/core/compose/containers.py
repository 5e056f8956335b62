"""Container runtimes as one table: how each one wraps a rank's command, what it must be told to pass.

The preset's ``container:`` section (``runtime``, ``image``, ``mounts``, ``workdir``, ``options``) is read into a
:class:`ContainerConf`; :func:`wrap` turns it into the words the launch line needs: options for ``srun`` itself
(Pyxis) and the prefix that runs the launcher inside the image (every other runtime). Only each task's command runs
in the container: the batch shell, where the rendezvous address and port are computed (R1-R4), stays on the host,
and so does the GPU sampler (M2). The rules about containers (K1-K8) live in the rule table; this module holds
what each runtime is.

Pure: no file or process is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

#: ``container.runtime`` values, in the order the form offers them.
RUNTIME_NAMES = ("none", "shifter", "podman-hpc", "podman", "apptainer", "singularity", "pyxis", "charliecloud")
CONTAINER_KEYS = ("runtime", "image", "mounts", "workdir", "options")

#: Host variables podman must be told to pass (it passes none by itself): every Slurm variable (the ranks read
#: SLURM_PROCID, SLURM_NODEID, ...), ntui's own, the rendezvous, and the families ntui or a site sets for torch,
#: NCCL and libfabric. Trailing ``*``: podman's prefix form of ``--env``.
PODMAN_PASS = ("SLURM*", "NTUI*", "MASTER_ADDR", "MASTER_PORT", "TORCH*", "NCCL*", "FI_*", "PYTHONUNBUFFERED",
               "PYTHONFAULTHANDLER", "OMP_NUM_THREADS")


@dataclass(frozen=True)
class Runtime:
    """One row of the table."""

    name: str
    how: str
    """How a rank's command runs in it, as shown in the docs and the form."""
    host_env: str
    """What of the host's environment reaches the ranks without being asked."""
    host_network: bool
    """Whether it shares the host's network and IPC namespaces by default (rendezvous, NCCL sockets, /dev/shm)."""
    sees_host_files: str
    """Which host paths the ranks see without a mount."""
    source: str = ""


RUNTIMES: dict[str, Runtime] = {r.name: r for r in (
    Runtime("none", "the launcher runs on the host", "all", True, "all"),
    Runtime("shifter", "srun shifter [--volume=…] [--workdir=…] LAUNCHER; image from #SBATCH --image",
            "all", True, "the site's volumes ($HOME, scratch)", source="NERSC Shifter docs"),
    Runtime("podman-hpc", "srun podman-hpc run --name ntui-JOB-STEP-TASK --rm [--gpu] --net host --ipc host "
            "--pid host -e 'SLURM*' … -v … IMAGE LAUNCHER (killed by name when Slurm signals the task)",
            "none: each variable passed with -e", False, "none: each directory mounted with -v",
            source="NERSC/podman-hpc (modules.d/gpu.yaml); podman-run(1) --env"),
    Runtime("podman", "srun podman run --name ntui-JOB-STEP-TASK --rm --net host --ipc host --pid host "
            "-e 'SLURM*' … -v … IMAGE LAUNCHER (killed by name when Slurm signals the task)",
            "none: each variable passed with -e", False, "none: each directory mounted with -v",
            source="podman-run(1) --env, --network, --ipc"),
    Runtime("apptainer", "srun apptainer exec [--nv|--rocm] -B … IMAGE LAUNCHER",
            "all but LD_LIBRARY_PATH (the image's ENV wins)", True, "$HOME, /tmp, the working directory",
            source="Apptainer user guide (environment, bind paths, GPU)"),
    Runtime("singularity", "srun singularity exec [--nv|--rocm] -B … IMAGE LAUNCHER",
            "all but LD_LIBRARY_PATH (the image's ENV wins)", True, "$HOME, /tmp, the working directory",
            source="Apptainer user guide (SINGULARITY names kept)"),
    Runtime("pyxis", "srun --container-image=IMAGE --container-mounts=… LAUNCHER",
            "all (the image's own values win)", True, "$HOME where the site mounts it",
            source="NVIDIA/pyxis README"),
    Runtime("charliecloud", "srun ch-run -b … IMAGE -- LAUNCHER", "all ($HOME becomes /home/$USER)", True,
            "/tmp; each other directory bound with -b onto a directory that exists in the image",
            source="ch-run(1)"),
)}


@dataclass(frozen=True)
class ContainerConf:
    """The ``container:`` section, checked."""

    runtime: str = "none"
    image: str | None = None
    mounts: tuple[str, ...] = ()
    """``SRC[:DST[:FLAGS]]`` as written; DST defaults to SRC."""
    workdir: str | None = None
    options: tuple[str, ...] = ()
    """The runtime's own options, shell words, placed after ntui's (a later option wins where the runtime lets it)."""

    @property
    def active(self) -> bool:
        return self.runtime != "none"


@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    flags: str = ""


def parse_mount(text: str) -> Mount | str:
    """``SRC[:DST[:FLAGS]]`` with absolute paths, or what is wrong with it."""
    parts = text.split(":")
    if len(parts) > 3 or not parts[0]:
        return f"expected SRC[:DST[:FLAGS]], got {text!r}"
    source = parts[0]
    target = parts[1] if len(parts) > 1 and parts[1] else source
    flags = parts[2] if len(parts) > 2 else ""
    for what, path in (("source", source), ("target", target)):
        if not path.startswith("/") and not path.startswith("$"):
            return f"the {what} {path!r} must be an absolute path"
    if "," in text:
        return f"{text!r}: a comma cannot be carried (Pyxis separates mounts with commas)"
    return Mount(source, target, flags)


def _mounts(conf: ContainerConf, own_paths: Sequence[str]) -> list[Mount]:
    """The preset's mounts, then ntui's own directories (the logs, the program's folder) at their own path unless
    a mount already covers them."""
    out = [m for m in (parse_mount(t) for t in conf.mounts) if isinstance(m, Mount)]
    for path in own_paths:
        if not any(_under(path, m.target) for m in out):
            out.append(Mount(path, path))
    return out


def _under(path: str, parent: str) -> bool:
    parent = parent.rstrip("/") or "/"
    return path == parent or path.startswith(parent + "/") or parent == "/"


def _mount_text(m: Mount) -> str:
    return ":".join(p for p in (m.source, m.target, m.flags) if p)


@dataclass(frozen=True)
class Wrapped:
    """What a runtime adds to the launch line: options for srun itself, words before the launcher."""

    srun_options: tuple[str, ...] = ()
    prefix: tuple[str, ...] = ()


def wrap(conf: ContainerConf, *, gpus: bool, env_names: Iterable[str], own_paths: Sequence[str],
         quote: Callable[[str], str]) -> Wrapped:
    """The launch-line words for ``conf``. ``env_names``: the variables the script exports for the ranks (podman
    must name them); ``own_paths``: ntui's directories every rank writes or reads (logs, the program's folder);
    ``quote``: how a value becomes one shell word."""
    r = conf.runtime
    opts = [quote(o) for o in conf.options]
    image = quote(conf.image) if conf.image else ""
    if r == "none":
        return Wrapped()
    if r == "shifter":
        words = ["shifter"]
        if conf.mounts:
            words.append("--volume=" + quote(";".join(conf.mounts)))
        if conf.workdir:
            words.append("--workdir=" + quote(conf.workdir))
        if conf.image:
            words.append("--image=" + image)
        return Wrapped(prefix=(*words, *opts))
    mounts = _mounts(conf, own_paths)
    if r in ("podman", "podman-hpc"):
        words = ["bash", "-c", quote(PODMAN_TASK), r, "--rm"]
        if r == "podman-hpc" and gpus and "--gpu" not in conf.options:
            words.append("--gpu")
        # The host's network and IPC (rendezvous, NCCL sockets and shared memory), and its PID namespace: torch
        # elastic tells agents apart by host name and pid, and in private namespaces two containers of one job on
        # one host both run as pid 2 (seen on the dev cluster: the rendezvous never completes); host pids also
        # let the node's tools (ntui stacks, py-spy) see the ranks.
        words += ["--net", "host", "--ipc", "host", "--pid", "host"]
        names = list(PODMAN_PASS) + [n for n in env_names if not _covered(n)]
        words += [w for n in dict.fromkeys(names) for w in ("-e", quote(n))]
        words += [w for m in mounts for w in ("-v", quote(_mount_text(m)))]
        if conf.workdir:
            words += ["-w", quote(conf.workdir)]
        return Wrapped(prefix=(*words, *opts, image))
    if r in ("apptainer", "singularity"):
        words = [r, "exec"]
        if gpus and not {"--nv", "--rocm", "--nvccli"} & set(conf.options):
            words.append("--nv")
        words += [w for m in mounts for w in ("-B", quote(_mount_text(m)))]
        if conf.workdir:
            words += ["--pwd", quote(conf.workdir)]
        return Wrapped(prefix=(*words, *opts, image))
    if r == "pyxis":
        srun = [f"--container-image={image}"]
        if mounts:
            srun.append("--container-mounts=" + quote(",".join(_mount_text(m) for m in mounts)))
        if conf.workdir:
            srun.append(f"--container-workdir={quote(conf.workdir)}")
        return Wrapped(srun_options=(*srun, *opts))
    if r == "charliecloud":
        words = ["ch-run"]
        words += [w for m in mounts for w in ("-b", quote(f"{m.source}:{m.target}"))]
        if conf.workdir:
            words += ["-c", quote(conf.workdir)]
        return Wrapped(prefix=(*words, *opts, image, "--"))
    raise ValueError(f"unknown container runtime {r!r}")


def _covered(name: str) -> bool:
    return any(name == p or (p.endswith("*") and name.startswith(p[:-1])) for p in PODMAN_PASS)


# ---------------------------------------------------------------------------------------------- what the rules read

#: Each task's podman run, named after the job, step and task, and killed by name when Slurm signals the task: the
#: container runs under podman's monitor (conmon), outside the step's processes, so a cancelled or timed-out job
#: would otherwise leave its ranks running (seen on the dev cluster). ``$0`` is podman or podman-hpc; the run's
#: options and the command follow. A container of the same name left by a node crash is replaced.
PODMAN_TASK = (
    'n=ntui-$SLURM_JOB_ID-$SLURM_STEP_ID-$SLURM_PROCID; k() { "$0" kill "$n" >/dev/null 2>&1; }; '
    'trap k TERM INT HUP; "$0" run --name "$n" --replace "$@" & p=$!; wait "$p"; s=$?; wait "$p"; exit "$s"'
)
#: podman options that take the ranks off the host's network or IPC namespace (K3).
PODMAN_PRIVATE_NS = ("--net", "--network", "--ipc", "--pid", "--pod", "--network-alias")
#: Apptainer options that clear the environment, so no rank sees SLURM_PROCID or MASTER_ADDR (K4).
APPTAINER_CLEANENV = ("--cleanenv", "-e", "--containall", "-C")
#: sbatch options of a runtime that put the whole batch script in the image, where there is no srun or scontrol
#: (K5): Pyxis' spank options, Slurm's own OCI container, the CSCS container engine's environment.
WHOLE_SCRIPT_OPTIONS = ("container-image", "container", "environment")


def namespace_options(options: Sequence[str]) -> list[str]:
    """podman options in ``options`` that leave the host's network or IPC namespace (K3)."""
    out = []
    for i, word in enumerate(options):
        name, _, value = word.partition("=")
        if name not in PODMAN_PRIVATE_NS:
            continue
        if not value and i + 1 < len(options):
            value = options[i + 1]
        if name == "--pod" or value != "host":
            out.append(f"{name} {value}".strip())
    return out
