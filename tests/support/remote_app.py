"""The app with the lane's dev cluster reached over a private sshd (issue #45), for the recovery tests
(``tests/cluster/test_app_clusters_recovery.py``) and the channels benchmark (``bench/app_channels.py``).

* :func:`cluster_side_env` / :func:`laptop_path`: what the cluster's sessions see (its Slurm, its ``SLURM_CONF``)
  and the laptop side's PATH (ssh, no Slurm client);
* :func:`cluster_record`: a job's entry in the cluster's history, read there as the login user;
* :func:`remote_settings` / :func:`remote_runners`: the app's settings and runners for clusters behind their sshd,
  the agent started as this interpreter's ``-m ntui agent --stdio`` there (the cluster side has no ``ntui`` on its
  PATH), every master's socket under ``runtime``;
* :func:`master_pid`: the pid of a cluster's ssh master (``ssh -O check``), to kill it;
* :func:`session_processes`: the sshd processes serving the connections, to stop them (the link blocked);
* :func:`write_numbered_preset`: a preset whose ranks print numbered lines (the log a test compares with the pane);
* :func:`compose_submit`: the compose view's own path to submit it to a cluster (``c`` to the cluster, ``s``,
  ``y``), the submit line's words returned.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ntui.core.config import ClusterSettings, NotifySettings, Settings, SlurmSettings, cluster_runner
from ntui.core.remote.files import ssh_runner_of
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.ssh import SshRunner
from tests.support import sshd as sshd_support
from tests.support.screenshots_jobs import wait_until

__all__ = ["AGENT", "cluster_record", "cluster_side_env", "compose_submit", "laptop_path", "master_pid",
           "remote_runners", "remote_settings", "session_processes", "submitted_id", "write_numbered_preset"]

ROOT = Path(__file__).resolve().parents[2]
#: How the agent starts on the cluster's side: this interpreter, with the repository on the sessions' PYTHONPATH.
AGENT: tuple[str, ...] = (sys.executable, "-m", "ntui", "agent", "--stdio")
#: ps, found once: a test may give this process the laptop's PATH (ssh alone)
PS = shutil.which("ps") or "/bin/ps"


#: The cluster side's PATH after its Slurm clients' directory and the simulated nvidia-smi: a login node's own.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def python3_dir() -> str:
    """A directory holding ``python3`` alone (this interpreter), as a login node's PATH has one: the simulated
    ``nvidia-smi`` runs with ``env python3`` on the nodes, and a newer version's nodes (its Debian root) have none of
    their own. Under /tmp, which every version's root sees; ``ntui`` stays off the PATH (the agent is configured)."""
    import hashlib

    d = Path(f"/tmp/ntui-python3-{os.getuid()}-{hashlib.sha256(sys.executable.encode()).hexdigest()[:10]}")
    d.mkdir(mode=0o755, exist_ok=True)
    link = d / "python3"
    if not link.is_symlink() or os.readlink(link) != sys.executable:
        tmp = d / f".python3.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(sys.executable)
        os.replace(tmp, link)  # lanes side by side: each sees a whole link
    return str(d)


def cluster_side_env(slurm_conf: str | os.PathLike[str], bin_dir: str, sim: str) -> dict[str, str]:
    """What the cluster's sessions see (sshd's ``SetEnv``): its ``SLURM_CONF``, its Slurm clients (``bin_dir``),
    the simulated ``nvidia-smi`` (``sim``: srun gives its PATH to a GPU watch step's tasks) and a ``python3``
    (:func:`python3_dir`) on the PATH, the repository on the PYTHONPATH (the agent runs from it)."""
    return {"SLURM_CONF": str(slurm_conf), "PYTHONPATH": str(ROOT),
            "PATH": f"{bin_dir}:{sim}:{python3_dir()}:{SYSTEM_PATH}"}


def laptop_path(where: Path) -> str:
    """A PATH for the laptop's side: a directory ``where`` holding ``ssh`` alone (no Slurm client)."""
    where.mkdir(parents=True, exist_ok=True)
    link = where / "ssh"
    if not link.exists():
        link.symlink_to(shutil.which("ssh") or "/usr/bin/ssh")
    return str(where)


#: Run as the cluster's login user: its history's entry for a job id (argv[1]), as JSON (null: none).
_RECORD = """import json, sys
from pathlib import Path
from ntui.core.records.history import History
h = History(Path(sys.argv[2]))
try:
    e = h.get(sys.argv[1])
finally:
    h.close()
print(json.dumps(None if e is None else {k: getattr(e, k) for k in ("job_id", "status", "cluster", "job_name",
                                                                        "script")}))
"""


def cluster_record(server: sshd_support.Sshd, job_id: str) -> dict[str, Any] | None:
    """The cluster's history entry of ``job_id`` (its fields ``job_id``, ``status``, ``cluster``, ``job_name``,
    ``script``), read in a session of its own as the login user: opening the history writes its index, which must
    stay the login user's (a reader as root would leave a file the user's agent cannot write)."""
    import json

    said = server.run(sys.executable, "-c", _RECORD, job_id, str(server.state_dir))
    assert said.returncode == 0, said.stderr
    found: dict[str, Any] | None = json.loads(said.stdout.strip().splitlines()[-1])
    return found


def remote_settings(clusters: Mapping[str, tuple[str, sshd_support.Sshd]], *, timeout: float = 60) -> Settings:
    """Settings naming each cluster (name -> (its Slurm clients' directory there, its sshd)), no notifications."""
    return Settings(
        slurm=SlurmSettings(timeout=timeout), notify=NotifySettings(bell=False, desktop=False, states=()),
        clusters=tuple(ClusterSettings(name=name, ssh=sshd_support.HOST, bin_dir=bin_dir,
                                       ssh_config=str(server.ssh_config), persist=900, agent=AGENT)
                       for name, (bin_dir, server) in clusters.items()))


def remote_runners(settings: Settings, runtime: Path) -> dict[str, CommandRunner]:
    """One runner per cluster of ``settings``, their masters' sockets under ``runtime`` (short: a socket's path
    is bounded)."""
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {c.name: cluster_runner(settings, c.name, environ={"XDG_RUNTIME_DIR": str(runtime)})
            for c in settings.clusters}


def _ssh(runner: CommandRunner) -> SshRunner:
    ssh = ssh_runner_of(runner)
    assert ssh is not None, "not a cluster reached over ssh"
    return ssh


def master_pid(runner: CommandRunner) -> int | None:
    """The pid of the cluster's ssh master (``ssh -O check`` says ``Master running (pid=N)``); None: none runs."""
    said = _ssh(runner).control("check")
    found = re.search(r"pid=(\d+)", said.stdout + said.stderr)
    return int(found.group(1)) if found and said.returncode == 0 else None


def session_processes(server: sshd_support.Sshd) -> list[int]:
    """The sshd processes serving connections (the listener's descendants that are sshd)."""
    out: list[int] = []
    todo = [server.pid]
    while todo:
        parent = todo.pop()
        kids = subprocess.run([PS, "-o", "pid=", "--ppid", str(parent)], capture_output=True, text=True,
                              check=False).stdout.split()
        for pid in map(int, kids):
            with contextlib.suppress(OSError):
                if os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("sshd"):
                    out.append(pid)
                    todo.append(pid)
    return out


#: Each rank prints ``rank R line I`` (I from 1 to $NTUI_LINES, one every $NTUI_EVERY seconds), then ``rank R
#: done``; flushed at once, so the file always ends with a whole line.
NUMBERED = """import os, sys, time
rank = os.environ.get("SLURM_PROCID", "0")
for i in range(1, int(os.environ["NTUI_LINES"]) + 1):
    print(f"rank {rank} line {i}", flush=True)
    time.sleep(float(os.environ["NTUI_EVERY"]))
print(f"rank {rank} done", flush=True)
"""

PRESET = """name: @NAME@
description: ranks that print numbered lines (the recovery tests over ssh)
launcher:
  type: srun
  python: @PYTHON@
sbatch:
  nodes: 1
  ntasks-per-node: @RANKS@
  cpus-per-task: 1
  time: "@TIME@"
@GPUS@env:
  NTUI_LINES: "@LINES@"
  NTUI_EVERY: "@EVERY@"
setup:
  - echo ntui-numbered-ready
script: @SCRIPT@
args: []
logs:
  dir: @LOGS@
"""


def write_numbered_preset(name: str, where: Path, logs: Path, *, lines: int, every: float = 0.25,
                          ranks: int = 2, gpus: int = 0, minutes: int = 10) -> Path:
    """The user preset ``name`` (in the user's presets directory) whose ``ranks`` ranks print ``lines`` numbered
    lines each (with ``gpus`` GPUs on its node, the dev cluster's simulated ones; ``minutes``: its time limit), its
    script and logs under ``where`` and ``logs``; the preset's path."""
    from ntui.core.paths import user_presets_dir

    where.mkdir(parents=True, exist_ok=True)
    script = where / "numbered.py"
    script.write_text(NUMBERED)
    presets = user_presets_dir()
    presets.mkdir(parents=True, exist_ok=True)
    path = presets / f"{name}.yaml"
    values = {"NAME": name, "PYTHON": sys.executable, "RANKS": str(ranks), "LINES": str(lines),
              "EVERY": f"{every:g}", "SCRIPT": str(script), "LOGS": str(logs),
              "TIME": f"00:{minutes:02d}:00", "GPUS": f"  gpus-per-node: {gpus}\n" if gpus else ""}
    path.write_text(re.sub(r"@([A-Z]+)@", lambda m: values[m.group(1)], PRESET))
    return path


def submitted_id(words: str) -> str | None:
    """The job id in the compose view's submit line (``submitted job N ...``), else None."""
    found = re.search(r"submitted job (\d+)", words)
    return found.group(1) if found else None


async def compose_submit(pilot: Any, cluster: str, *, timeout: float, confirm: bool = True) -> Any:
    """Open the compose view (``1``) on the app's preset, choose ``cluster`` (``c`` until it is the destination)
    and submit (``s``, then ``y`` when ``confirm``); the compose screen, once its submit line says more than
    "submitting" (``confirm``) or once the confirmation is up (not ``confirm``)."""
    from ntui.ui.screens.compose import ComposeScreen
    from ntui.ui.screens.confirm import ConfirmSubmitScreen

    await pilot.press("1")
    compose = next(s for s in pilot.app.screen_stack if isinstance(s, ComposeScreen))
    await wait_until(pilot, lambda: compose.cluster is not None and compose.rendered is not None
                     and compose.rendered.spec is not None, timeout=timeout)
    while compose.destination != cluster:
        await pilot.press("c")
        await wait_until(pilot, lambda: compose.cluster is not None, timeout=timeout)
    await pilot.press("s")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmSubmitScreen), timeout=timeout)
    assert pilot.app.screen.destination == cluster
    if confirm:
        await pilot.press("y")
        await wait_until(pilot, lambda: compose.submit_line is not None
                         and "submitting" not in compose.submit_line.plain, timeout=timeout)
    return compose
