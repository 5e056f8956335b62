"""Taking a running job's stacks: the one ``srun --overlap`` step (argv builder), its output read back (parser),
and the call between them (:func:`take_stacks`).

The step runs one task per node of the job, beside its running steps (``--overlap``), claiming none of its GPUs
(``--gres=none``) and 100 MB of its memory; each task is :mod:`ntui.core.stacks.probe` under ntui's own
interpreter, which runs py-spy on the node. Both must be visible on the compute nodes at the paths they have on
the login node: ntui installed in an environment on a shared filesystem (a home or a project directory, as sites
recommend for Python environments) carries py-spy's binary in its ``bin`` (py-spy's wheel *is* the binary).
``NTUI_PY_SPY`` names another py-spy, ``NTUI_STACKS_PYTHON`` another interpreter (it needs only the standard
library and ntui's probe module on its path).

A job of a cluster reached over ssh (``ntui --cluster NAME stacks``, the jobs view's Stacks tab) is sampled by that
cluster's own interpreter and py-spy, as its agent says them (:func:`take_cluster_stacks`): the nodes see the
cluster's filesystems, never this machine's.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from ntui.core.hosts import compress_nodelist, expand_nodelist
from ntui.core.slurm.common import validate_job_id
from ntui.core.slurm.runner import CommandRunner, SlurmTimeout
from ntui.core.slurm.scontrol import show_job
from ntui.core.slurm.srun import step_env
from ntui.core.stacks.group import Stacks, read_docs
from ntui.core.stacks.probe import decode_lines

__all__ = ["PY_SPY_ENV", "PYTHON_ENV", "STEP_NAME", "NoToolsThere", "NotRunning", "ToolsThere", "build_stacks_argv",
           "cluster_environ", "parse_stacks_output", "py_spy_path", "take_cluster_stacks", "take_stacks"]

#: Environment: the py-spy the nodes run (default: the one beside ntui's interpreter, else on PATH).
PY_SPY_ENV = "NTUI_PY_SPY"
#: Environment: the interpreter the nodes run the probe with (default: ntui's own).
PYTHON_ENV = "NTUI_STACKS_PYTHON"
#: The step's name in squeue and sacct.
STEP_NAME = "ntui-stacks"
#: Seconds the step may take to start on every node, beyond the probe's own time.
START_S = 30.0


class NotRunning(Exception):
    """The job has no process to sample: pending, ended, suspended. ``str()`` says it with what to do."""


def py_spy_path(environ: Mapping[str, str]) -> str:
    """The py-spy the nodes run: ``NTUI_PY_SPY``, else the one beside ntui's interpreter, else PATH's (or the bare
    name, for a node that has one of its own)."""
    if environ.get(PY_SPY_ENV):
        return environ[PY_SPY_ENV]
    beside = Path(sys.executable).parent / "py-spy"
    if beside.exists():
        return str(beside)
    return shutil.which("py-spy") or "py-spy"


def build_stacks_argv(job_id: str, nodes: Sequence[str], *, python: str, py_spy: str, native: bool = False,
                      interval_s: float = 3.0, timeout_s: float = 10.0) -> list[str]:
    """``srun --jobid=J --overlap --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=... --gres=none --mem=100M
    --job-name=ntui-stacks PYTHON -m ntui.core.stacks.probe ...``: one probe per node (module docstring)."""
    if not nodes:
        raise ValueError("no nodes to sample")
    n = len(nodes)
    argv = ["srun", f"--jobid={validate_job_id(job_id)}", "--overlap", f"--nodes={n}", f"--ntasks={n}",
            "--ntasks-per-node=1", f"--nodelist={compress_nodelist(nodes)}", "--gres=none", "--mem=100M",
            f"--job-name={STEP_NAME}", python, "-m", "ntui.core.stacks.probe", "--py-spy", py_spy,
            "--interval", f"{interval_s:g}", "--timeout", f"{timeout_s:g}"]
    return argv + (["--native"] if native else [])


def parse_stacks_output(job_id: str, stdout: str, stderr: str, nodes: Sequence[str]) -> Stacks:
    """The step's output as grouped stacks; srun's own errors (a node that could not start the probe) are
    added to the problems."""
    stacks = read_docs(job_id, decode_lines(stdout.splitlines()), expected=nodes)
    said = [line.strip() for line in stderr.splitlines()
            if line.strip().startswith("srun: error") or "No such file" in line or "Traceback" in line]
    if said:
        return replace(stacks, problems=stacks.problems + tuple(f"srun said: {line}" for line in said[:5]))
    return stacks


def _not_running(job_id: str, state: str) -> str:
    if state in ("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"):
        return f"job {job_id} is {state}: it has not started, there is no process to sample yet"
    if state == "SUSPENDED":
        return f"job {job_id} is SUSPENDED: its processes are stopped by Slurm; resume it first"
    return (f"job {job_id} is {state}: it is not running, there is no process to sample; "
            f"`ntui triage {job_id}` reads what its logs say")


def take_stacks(runner: CommandRunner, job_id: str, *, native: bool = False, interval_s: float = 3.0,
                timeout_s: float = 10.0, environ: Mapping[str, str] | None = None) -> Stacks:
    """Every rank's stack of the running job ``job_id``, grouped. Raises :class:`NotRunning` for a job that has
    no process; ``SlurmError`` when Slurm cannot be asked. A node that did not answer in time is a problem of the
    result, the other nodes' stacks are kept."""
    env = dict(os.environ if environ is None else environ)
    details = show_job(runner, job_id, env=step_env(env))
    if details.state != "RUNNING":
        raise NotRunning(_not_running(job_id, details.state))
    nodes = expand_nodelist(details.nodelist, strict=False)
    argv = build_stacks_argv(details.job_id, nodes, python=env.get(PYTHON_ENV) or sys.executable,
                             py_spy=py_spy_path(env), native=native, interval_s=interval_s, timeout_s=timeout_s)
    try:
        res = runner.run(argv, timeout=START_S + 2 * timeout_s + interval_s, env=step_env(env))
        stdout, stderr = res.stdout, res.stderr
    except SlurmTimeout as exc:
        stdout, stderr = exc.stdout, exc.stderr
    return parse_stacks_output(details.job_id, stdout, stderr, nodes)


class ToolsThere(Protocol):
    """What a cluster's files say of its tools (:class:`~ntui.core.remote.files.ClusterFiles`: its agent's hello)."""

    @property
    def note(self) -> str | None: ...  # what that way cannot do, in words

    @property
    def python(self) -> str | None: ...  # the cluster's ntui interpreter (None: not known)

    @property
    def py_spy(self) -> str | None: ...  # its py-spy (None: not known)


class NoToolsThere(Exception):
    """No agent on the cluster says where its ntui interpreter is: the probe cannot run on the job's nodes.
    ``str()`` says it with what to do."""


def cluster_environ(tools: ToolsThere, cluster: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) with the cluster's own interpreter and py-spy for the step (as its agent
    says them). Raises :class:`NoToolsThere` where no agent there says them."""
    if tools.python is None:
        why = tools.note or "its agent did not say where it is"
        raise NoToolsThere(f"the stacks of a job on {cluster} are taken by {cluster}'s own ntui on the job's nodes: "
                           f"{why}; install ntui there (the same version), or run ntui stacks on its login node")
    return {**(os.environ if environ is None else environ), PYTHON_ENV: tools.python,
            PY_SPY_ENV: tools.py_spy or "py-spy"}


def take_cluster_stacks(runner: CommandRunner, tools: ToolsThere, cluster: str, job_id: str, *, native: bool = False,
                        interval_s: float = 3.0, timeout_s: float = 10.0) -> Stacks:
    """:func:`take_stacks` of a job on ``cluster``, reached over ssh through ``runner``: the step runs the cluster's
    own interpreter and py-spy (:func:`cluster_environ`). Raises :class:`NoToolsThere`, :class:`NotRunning`, and
    ``SlurmError`` (a dropped link, in words)."""
    environ = cluster_environ(tools, cluster)
    return take_stacks(runner, job_id, native=native, interval_s=interval_s, timeout_s=timeout_s, environ=environ)
