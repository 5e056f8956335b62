"""Container runtimes on the real dev cluster: 2-node srun and torchrun jobs whose every rank runs in the image.

Real runtimes where they install on this host (podman with runc, Charliecloud; `scripts/container-image` builds
a local Debian image, no registry): on Slurm 22.05, whose jobs run on the host itself (the newer versions' jobs run
in their Debian root, where these are not installed). The runtimes that cannot be installed here (Apptainer,
Shifter, podman-hpc, Pyxis) run through the recording shims of ``tests/data/containers`` on 24.11 and 26.05: each
records the argv ntui gave it and the environment the program gets under the runtime's documented rules, then runs
the program on the host. Every job: ranks 0-3 exactly once, two per node, the all-reduce right, MASTER_ADDR the
first node for every rank (computed in the batch shell, outside the container), the runtime's own marker seen by
every rank.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_e2e import ntui, rank_records

pytestmark = pytest.mark.cluster

SHIMS = REPO / "tests" / "data" / "containers" / "shims"
PYXIS = REPO / "tests" / "data" / "containers" / "pyxis"
IMAGE_SCRIPT = REPO / "scripts" / "container-image"
LAUNCHERS = {"srun": "local-srun", "torchrun": "local-torchrun", "accelerate": "local-accelerate"}


def _image_env() -> dict[str, str]:
    out = subprocess.run([str(IMAGE_SCRIPT), "env"], capture_output=True, text=True, check=True).stdout
    env = {}
    for line in out.splitlines():
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = value.strip("'")
    return env


@pytest.fixture(scope="session")
def test_image() -> dict[str, str]:
    """The local image (built once per machine; a lane that finds a build under way waits for it)."""
    if not (shutil.which("podman") and shutil.which("ch-run")):
        if os.environ.get("NTUI_REQUIRE_CLUSTER") == "1":
            pytest.fail("podman and ch-run are missing: scripts/container-image install", pytrace=False)
        pytest.skip("podman and ch-run are missing: scripts/container-image install")
    res = subprocess.run([str(IMAGE_SCRIPT), "build"], capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stderr
    return _image_env()


def _on_host(cluster: DevCluster) -> bool:
    """Whether this cluster's jobs run on the host (22.05) rather than in a Debian root (24.11, 26.05)."""
    return not (cluster.state_dir / "root").exists()


def _submit(cluster: DevCluster, tmp_path: Path, launcher: str, sets: list[str], env: dict[str, str] | None = None
            ) -> tuple[str, list[dict[str, Any]], Path]:
    preset = LAUNCHERS[launcher]
    log_dir = tmp_path / "logs"
    args: list[str] = []
    for s in [f"logs.dir={log_dir}", *sets]:
        args += ["--set", s]
    res = ntui(cluster, "submit", preset, "--wait", *args, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    job_id = res.stdout.strip().splitlines()[0]
    assert "COMPLETED" in res.stderr, res.stderr
    return job_id, rank_records(log_dir, preset, job_id), log_dir


def _check_ranks(records: list[dict[str, Any]], job_id: str, runtime: str | None, launcher: str) -> None:
    assert sorted(r["rank"] for r in records) == [0, 1, 2, 3], records
    assert Counter(r["node"] for r in records) == {"nid001": 2, "nid002": 2}
    port = str(15000 + int(job_id) % 17000)
    for r in records:
        assert r["world_size"] == 4 and r["ok"] and r["allreduce"] == 10.0, r
        if launcher == "srun":  # the batch shell's values (torchrun's workers get their agents' own store)
            assert (r["master_addr"], r["master_port"]) == ("nid001", port), r
        assert r["container"] == runtime, r


def _records(shim_dir: Path, runtime: str) -> list[tuple[list[str], dict[str, str]]]:
    """Each call of a recording shim: its argv, and the environment the program got."""
    out = []
    for argv_file in sorted(shim_dir.glob(f"{runtime}-*.argv")):
        argv = argv_file.read_bytes().decode().split("\0")[:-1]
        env_file = argv_file.with_suffix(".env")
        env = dict(e.split("=", 1) for e in env_file.read_bytes().decode().split("\0")[:-1] if "=" in e)
        out.append((argv, env))
    return out


@pytest.mark.parametrize("launcher", ["srun", "torchrun"])
@pytest.mark.parametrize("runtime", ["podman", "charliecloud"])
def test_each_rank_runs_in_a_real_container(dev_cluster: DevCluster, tmp_path: Path, request: pytest.FixtureRequest,
                                            runtime: str, launcher: str) -> None:
    if not _on_host(dev_cluster):
        pytest.skip("podman and Charliecloud are host packages; this cluster's jobs run in its Debian root")
    test_image: dict[str, str] = request.getfixturevalue("test_image")
    mounts = test_image["NTUI_TEST_IMAGE_MOUNTS"].split(",")
    if runtime == "podman":
        image = test_image["NTUI_TEST_IMAGE_PODMAN"]
        options = ["--env", "PATH"]  # the venv's torchrun, bound in from the host, on the ranks' PATH
    else:
        image, options = test_image["NTUI_TEST_IMAGE_DIR"], []
    sets = [f"container.runtime={runtime}", f"container.image={image}", f"container.mounts={json.dumps(mounts)}",
            f"container.options={json.dumps(options)}", f"launcher.python={sys.executable}"]
    # USER: ch-run refuses to start without it (a login shell has it; this test's environment may not)
    job_id, records, log_dir = _submit(dev_cluster, tmp_path, launcher, sets,
                                       env={"CONTAINERS_CONF": test_image["CONTAINERS_CONF"],
                                            "USER": getpass.getuser()})
    _check_ranks(records, job_id, runtime, launcher)
    script = (log_dir / f"{LAUNCHERS[launcher]}-{job_id}.sbatch").read_text()
    assert ("podman --rm --net host --ipc host --pid host" if runtime == "podman" else "ch-run -b ") in script


SHIMMED = {
    # runtime: (container.* settings, the marker its ranks see, what its argv must hold)
    "apptainer": (["container.image=/images/train.sif"], "apptainer", ["exec", "-B", "/images/train.sif"]),
    "shifter": (["container.image=nersc/pytorch:25.02.01"], "shifter", ["--image=nersc/pytorch:25.02.01"]),
    "podman-hpc": (["container.image=nersc/pytorch:25.02.01", 'container.options=["--env", "PATH"]'], "podman",
                   ["run", "--rm", "--net", "host", "--ipc", "host", "--pid", "host", "SLURM*", "MASTER_ADDR", "-v"]),
    "pyxis": (["container.image=nvcr.io#nvidia/pytorch:25.02-py3"], None,
              ["--container-image=nvcr.io#nvidia/pytorch:25.02-py3"]),
}


@pytest.mark.parametrize("launcher", ["srun", "torchrun"])
@pytest.mark.parametrize("runtime", sorted(SHIMMED))
def test_each_rank_gets_what_it_needs_from_a_shimmed_runtime(dev_cluster: DevCluster, tmp_path: Path,
                                                            runtime: str, launcher: str) -> None:
    if _on_host(dev_cluster):
        pytest.skip("Slurm 22.05 runs the real runtimes (above); the shims run on the newer versions")
    sets, marker, must = SHIMMED[runtime]
    shim_dir = tmp_path / "shim"
    path_first = PYXIS if runtime == "pyxis" else SHIMS
    env = {"PATH": f"{path_first}:{Path(sys.executable).parent}:{dev_cluster.env['PATH']}",
           "NTUI_SHIM_RECORD_DIR": str(shim_dir)}
    job_id, records, log_dir = _submit(dev_cluster, tmp_path, launcher, [f"container.runtime={runtime}", *sets],
                                       env=env)
    _check_ranks(records, job_id, marker, launcher)
    calls = _records(shim_dir, runtime)
    assert len(calls) == (4 if launcher == "srun" else 2), calls  # one per task: a rank, or a node's torchrun
    for argv, program_env in calls:
        for word in must:
            assert word in argv, (word, argv)
        assert program_env["MASTER_ADDR"] == "nid001" and program_env["SLURM_JOB_ID"] == job_id
        assert program_env.get("SLURM_PROCID") in {"0", "1", "2", "3"}
        if runtime in ("apptainer", "podman-hpc", "pyxis"):  # ntui's log directory reaches the ranks by a mount
            assert any(str(log_dir) in a for a in argv), argv
        if runtime == "apptainer":
            assert "LD_LIBRARY_PATH" not in program_env
        if runtime == "pyxis":
            assert program_env["OMP_NUM_THREADS"] == "1"  # the image's value wins over the job's
    procids = sorted(env["SLURM_PROCID"] for _, env in calls)
    assert procids == (["0", "1", "2", "3"] if launcher == "srun" else ["0", "1"])


def test_accelerate_under_apptainer(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """The third launcher through one runtime: accelerate's per-node payload inside the (shimmed) container."""
    if _on_host(dev_cluster):
        pytest.skip("Slurm 22.05 runs the real runtimes; the shims run on the newer versions")
    shim_dir = tmp_path / "shim"
    env = {"PATH": f"{SHIMS}:{Path(sys.executable).parent}:{dev_cluster.env['PATH']}",
           "NTUI_SHIM_RECORD_DIR": str(shim_dir)}
    job_id, records, _ = _submit(dev_cluster, tmp_path, "accelerate",
                                 ["container.runtime=apptainer", "container.image=/images/train.sif"], env=env)
    _check_ranks(records, job_id, "apptainer", "accelerate")
    assert len(_records(shim_dir, "apptainer")) == 2


def test_a_cancelled_podman_job_leaves_no_container_and_no_rank(dev_cluster: DevCluster, tmp_path: Path,
                                                                request: pytest.FixtureRequest) -> None:
    """podman runs each container under its own monitor, outside the step's processes: without ntui's trap a
    cancelled job left its ranks running (seen here before the trap). scancel now takes the containers with it."""
    if not _on_host(dev_cluster):
        pytest.skip("podman is a host package; this cluster's jobs run in its Debian root")
    test_image: dict[str, str] = request.getfixturevalue("test_image")
    mounts = test_image["NTUI_TEST_IMAGE_MOUNTS"].split(",")
    env = {"CONTAINERS_CONF": test_image["CONTAINERS_CONF"]}
    args = ["submit", "local-srun", "--set", f"logs.dir={tmp_path / 'logs'}", "--set", "container.runtime=podman",
            "--set", f"container.image={test_image['NTUI_TEST_IMAGE_PODMAN']}",
            "--set", f"container.mounts={json.dumps(mounts)}", "--set", 'container.options=["--env", "PATH"]',
            "--set", f"launcher.python={sys.executable}", "--set", "env.NTUI_CHECK_SLEEP=300"]
    res = ntui(dev_cluster, *args, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    job_id = res.stdout.strip().splitlines()[0]

    def containers() -> list[str]:
        out = subprocess.run(["podman", "ps", "--format", "{{.Names}}"], capture_output=True, text=True,
                             env=dict(os.environ, **env), timeout=60).stdout
        return [n for n in out.split() if n.startswith(f"ntui-{job_id}-")]

    deadline = time.monotonic() + 120
    while len(containers()) < 4 and time.monotonic() < deadline:  # every rank started in its container
        time.sleep(1)
    assert len(containers()) == 4
    deadline = time.monotonic() + 120
    while not list((tmp_path / "logs").glob(f"*-{job_id}-rank-*.out")) and time.monotonic() < deadline:
        time.sleep(1)
    dev_cluster.run("scancel", job_id)
    deadline = time.monotonic() + 90
    while containers() and time.monotonic() < deadline:
        time.sleep(1)
    assert containers() == []
    while _job_processes(job_id) and time.monotonic() < deadline:  # srun and the podman clients end with them
        time.sleep(1)
    assert _job_processes(job_id) == []  # no rank outlives its job


def _job_processes(job_id: str) -> list[str]:
    """The command lines of the processes of this host whose environment names the job."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"SLURM_JOB_ID={job_id}".encode() in environ:
            out.append(cmdline)
    return out
