"""Check a job against the cluster's partitions before sbatch: what Slurm would accept and never run.

Slurm's default ``EnforcePartLimits=NO`` makes sbatch (and ``sbatch --test-only``) accept a time limit over the
partition's ``MaxTime``, or more nodes than its ``MaxNodes``: the job is queued and pends forever
(``PartitionTimeLimit`` / ``PartitionNodeLimit``). An unknown partition, or more nodes than the partition
has, is refused by Slurm with a generic reason. :func:`check_against_cluster` says so up front, naming the
limit, from one partition listing (``scontrol show partition -o`` via :func:`~ntui.core.slurm.list_partitions`,
or the ``sinfo`` listing the compose view already loads, :func:`~ntui.core.slurm.sinfo_partitions`; both
give :class:`~ntui.core.slurm.Partition`).

Which partition: the ones the job names (``sbatch.partition``, a comma list: the job may run in any of them,
so a limit is a problem only when every one of them is exceeded); else the partition Slurm said it would
use (``sbatch --test-only`` prints it; pass it as ``partition=``); else the default partition. Sites may route
jobs without a partition elsewhere (a ``job_submit`` plugin, e.g. by QOS), so a job that only exceeds the
default partition but fits another is a warning, not an error.

:func:`check_against_cluster` is pure (no Slurm calls, no Textual). Accounts and QOS are only checked against a
partition's ``AllowAccounts`` / ``AllowQos`` (``scontrol`` listings), as warnings: Slurm enforces those only where
accounting is enabled. The CLI and the compose view share the rest of the check here: :func:`cluster_limits`
(the listing, through the runner) and :func:`check_test_only` (``sbatch --test-only``, then the partition Slurm
chose).

A long run that continues by requeue is checked against the cluster's ``JobRequeue`` (rule T7:
:func:`check_requeue`, one ``scontrol show config``, only for such a run).

A sweep (a job array) is also checked against the cluster's ``MaxArraySize`` (rule W7: :func:`check_array_size`,
one ``scontrol show config`` per runner, cached; no call for a job that is not a sweep). Slurm refuses a larger
array with a bare "Invalid job array specification".
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ntui.core.compose.render import render
from ntui.core.compose.rules import problem
from ntui.core.compose.spec import JobSpec
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.paths import atomic_write
from ntui.core.problems import Problem, Severity, Source
from ntui.core.slurm.common import SUBMIT_TIMEOUT
from ntui.core.slurm.durations import format_time_limit, parse_time_limit
from ntui.core.slurm.runner import CommandRunner, SlurmError, slurm_env
from ntui.core.slurm.sbatch import TestOnlyResult, test_only
from ntui.core.slurm.scontrol import Partition, job_requeue_default, list_partitions, max_array_size

__all__ = [
    "PartitionLimits",
    "check_against_cluster",
    "check_array_size",
    "check_launcher",
    "check_requeue",
    "cluster_max_array_size",
    "check_job",
    "check_test_only",
    "cluster_limits",
    "partition_limits",
]


#: What the check needs of a partition: the one partition model of :mod:`ntui.core.slurm` (``scontrol`` listings
#: fill every limit; ``sinfo`` ones leave ``max_nodes`` and the Allow lists unknown, ``None``).
PartitionLimits = Partition


def partition_limits(partitions: Iterable[Partition]) -> tuple[Partition, ...]:
    """One partition per name (a later listing of a name replaces an earlier one)."""
    return tuple({p.name: p for p in partitions}.values())


def _directive(spec: JobSpec, option: str) -> str | None:
    for d in spec.directives:
        if d.option == option:
            return d.value
    return None


def _fits_time(p: Partition, seconds: int) -> bool:
    return p.max_time_s is None or seconds <= p.max_time_s


def _fits_nodes(p: Partition, nodes: int) -> bool:
    return (p.total_nodes is None or nodes <= p.total_nodes) and (p.max_nodes is None or nodes <= p.max_nodes)


def _names(parts: Sequence[Partition]) -> str:
    return ", ".join(p.name for p in parts)


def _limit(p: Partition) -> str:
    return format_time_limit(p.max_time_s) if p.max_time_s is not None else p.max_time


def check_against_cluster(
    spec: JobSpec,
    partitions: Iterable[Partition],
    *,
    partition: str | None = None,
    loaded: LoadedPreset | None = None,
) -> list[Problem]:
    """Problems of ``spec`` on this cluster: errors for what Slurm would refuse or queue forever, warnings for
    what it may. ``partition``: the partition Slurm chose (``sbatch --test-only``), used when the job names
    none. ``loaded`` (optional) gives each problem its preset file and line. No partitions known: no problems."""
    limits = partition_limits(partitions)
    if not limits:
        return []
    by_name = {p.name: p for p in limits}
    problems: list[Problem] = []

    def add(key: str, message: str, severity: Severity = Severity.ERROR) -> None:
        path = ("sbatch", key)
        source = loaded.source_of(path) if loaded is not None else Source("")
        problems.append(Problem(source, ".".join(path), message, severity))

    named = _directive(spec, "partition")
    if named:
        wanted = [n.strip() for n in named.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in by_name]
        if unknown:
            add("partition", f"no partition {', '.join(unknown)} on this cluster (partitions: {_names(limits)}); "
                "Slurm would refuse the job: Invalid partition name specified")
        candidates = [by_name[n] for n in wanted if n in by_name]
        how = "explicit"
    elif partition and partition in by_name:
        candidates, how = [by_name[partition]], "chosen"
    else:
        default = next((p for p in limits if p.default), None)
        candidates, how = ([default] if default else []), "default"
    if not candidates:
        return problems
    where = (f"partition {candidates[0].name}" if len(candidates) == 1
             else f"any of the partitions {_names(candidates)}")
    if how == "default":
        where = f"the default partition {candidates[0].name}"
    elif how == "chosen":
        where = f"partition {candidates[0].name} (where Slurm would put it)"

    # time limit
    time_text = _directive(spec, "time")
    seconds = parse_time_limit(time_text) if time_text and time_text != "0" else None
    if seconds is not None and not any(_fits_time(p, seconds) for p in candidates):
        limit = max(candidates, key=lambda p: p.max_time_s or 0)
        message = (f"{format_time_limit(seconds)} is over the MaxTime of {where} ({_limit(limit)}): Slurm would "
                   "accept it and the job would pend forever (reason PartitionTimeLimit)")
        others = [p for p in limits if p not in candidates and _fits_time(p, seconds)]
        if how == "default" and others:
            add("time", f"{message}, unless this site routes it to another partition; set sbatch.partition "
                f"(fits: {_names(others)})", Severity.WARNING)
        else:
            add("time", message)

    # nodes
    if not any(_fits_nodes(p, spec.nodes) for p in candidates):
        totals = [p for p in candidates if p.total_nodes is not None and spec.nodes > p.total_nodes]
        if len(totals) == len(candidates):
            most = max(p.total_nodes or 0 for p in candidates)
            message = (f"{spec.nodes} nodes, but {where} has {most}: Slurm would refuse it "
                       "(Requested node configuration is not available)")
        else:
            most = max(p.max_nodes or p.total_nodes or 0 for p in candidates)
            message = (f"{spec.nodes} nodes is over the MaxNodes of {where} ({most}): Slurm would accept it "
                       "and the job would pend forever (reason PartitionNodeLimit)")
        others = [p for p in limits if p not in candidates and _fits_nodes(p, spec.nodes)]
        if how == "default" and others:
            add("nodes", f"{message}, unless this site routes it to another partition; set sbatch.partition "
                f"(fits: {_names(others)})", Severity.WARNING)
        else:
            add("nodes", message)

    # state, accounts, QOS (warnings)
    if not any(p.up for p in candidates):
        states = ", ".join(f"{p.name} {p.state.upper()}" for p in candidates)
        add("partition", f"{states}: the job would wait until an administrator brings it up", Severity.WARNING)
    for key in ("account", "qos"):
        value = _directive(spec, key)
        if not value:
            continue
        allowed = [p.allow_accounts if key == "account" else p.allow_qos for p in candidates]
        if all(a is not None and value not in a for a in allowed):
            lists = "; ".join(f"{p.name}: {', '.join(a or ())}" for p, a in zip(candidates, allowed, strict=True))
            add(key, f"{value} is not allowed in {where} (Allow{'Accounts' if key == 'account' else 'Qos'} "
                f"{lists}): Slurm refuses it where accounting is enforced", Severity.WARNING)
    return problems


def cluster_limits(runner: CommandRunner, *, env: Mapping[str, str] | None = None) -> tuple[Partition, ...]:
    """The partitions' limits from one ``scontrol show partition -o``; none when they cannot be listed (no Slurm,
    controller down: sbatch, which runs next, reports that in its own words)."""
    try:
        return partition_limits(list_partitions(runner, env=env))
    except SlurmError:
        return ()


def check_test_only(
    spec: JobSpec,
    runner: CommandRunner,
    partitions: Iterable[Partition],
    *,
    loaded: LoadedPreset | None = None,
    reported: Sequence[Problem] = (),
) -> tuple[TestOnlyResult, list[Problem]]:
    """``sbatch --test-only`` for ``spec`` (:func:`~ntui.core.jobs.submission.check_job`; raises what it raises), then,
    when Slurm accepted the job, the problems of the partition it chose: Slurm accepts a job over its partition's
    limits (``EnforcePartLimits=NO``), so "would start" does not mean it ever will. ``reported``: problems the
    caller already showed (from the check before sbatch), left out."""
    result = check_job(spec, runner)
    if not result.ok:
        return result, []
    problems = check_against_cluster(spec, partitions, partition=result.partition, loaded=loaded)
    return result, [p for p in problems if p not in reported]


def check_job(
    spec: JobSpec,
    runner: CommandRunner,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = SUBMIT_TIMEOUT,
) -> TestOnlyResult:
    """``sbatch --test-only`` on the rendered script (nothing is submitted)."""
    import tempfile  # only for --test-only: a plain check starts without it

    env, _ = slurm_env(environ)
    with tempfile.TemporaryDirectory(prefix="ntui-check-") as tmp:
        path = Path(tmp) / "job.sbatch"
        atomic_write(path, render(spec))
        return test_only(runner, str(path), env=env, timeout=timeout)


#: How long one ``scontrol show config`` answer is used (MaxArraySize changes with a reconfigure, rarely).
CONFIG_TTL_S = 3600.0
_MAX_ARRAY: weakref.WeakKeyDictionary[CommandRunner, tuple[float, int | None]] = weakref.WeakKeyDictionary()


def cluster_max_array_size(runner: CommandRunner, *, env: Mapping[str, str] | None = None) -> int | None:
    """``MaxArraySize`` of the runner's cluster: one ``scontrol show config``, kept for :data:`CONFIG_TTL_S`
    per runner; None when it cannot be asked (no Slurm, controller down: sbatch then says so itself)."""
    now = time.monotonic()
    try:
        cached = _MAX_ARRAY.get(runner)
    except TypeError:  # a runner that cannot be weakly referenced: no cache
        cached = None
    if cached is not None and now - cached[0] < CONFIG_TTL_S:
        return cached[1]
    try:
        value = max_array_size(runner, env=env)
    except SlurmError:
        return None
    with contextlib.suppress(TypeError):
        _MAX_ARRAY[runner] = (now, value)
    return value


def check_array_size(
    spec: JobSpec,
    runner: CommandRunner,
    *,
    loaded: LoadedPreset | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Problem]:
    """W7 against this cluster: a sweep with more tasks than ``MaxArraySize`` (task indices run from 0 to
    MaxArraySize - 1). No call and no problem for a job that is not a sweep."""
    sweep = spec.sweep
    if sweep is None:
        return []
    limit = cluster_max_array_size(runner, env=env)
    if limit is None or sweep.size <= limit:
        return []
    source = loaded.source_of(("sweep",)) if loaded is not None else Source("")
    return [problem("W7", source, "sweep", f"{sweep.size:,} tasks, but this cluster's MaxArraySize is {limit:,} "
                    f"(task indices 0-{limit - 1:,}): Slurm would refuse it (Invalid job array specification); "
                    f"split the sweep into parts of at most {limit:,}")]


# ---------------------------------------------------------------- the job's commands on the PATH it inherits (E4)

#: Setup lines that put a directory on PATH in a way that can be read without running anything.
_ACTIVATE = re.compile(r"^\s*(?:source|\.)\s+(?P<dir>\S+?)/bin/activate\s*$")
_EXPORT_PATH = re.compile(r"^\s*(?:export\s+)?PATH=(?P<value>\S+)\s*$")


def job_commands(spec: JobSpec) -> tuple[str, ...]:
    """The commands the job's launch line runs on the compute nodes, outside any container: the launcher
    (``torchrun``, ``accelerate``) and the program's interpreter (``python``, or launcher.python's first word)."""
    launcher = {"torchrun": ("torchrun",), "accelerate": ("accelerate",)}.get(spec.launcher, ())
    return (*launcher, spec.python_argv[0]) if spec.python_argv else launcher


def _setup_dirs(setup: Sequence[str], path: str) -> tuple[list[str], bool]:
    """The PATH after the setup lines as far as they can be read safely (a venv's activate, ``export PATH=``), and
    whether some line could change it in a way that is not read (``module load``, ``conda activate``, ...)."""
    dirs = [d for d in path.split(os.pathsep) if d]
    unknown = False
    for line in setup:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if m := _ACTIVATE.match(text):
            dirs.insert(0, os.path.expanduser(m.group("dir").strip("\"'")) + "/bin")
        elif m := _EXPORT_PATH.match(text):
            value = m.group("value").strip("\"'")
            new: list[str] = []
            for part in value.split(os.pathsep):
                new.extend(dirs if part in ("$PATH", "${PATH}") else [os.path.expanduser(part)])
            dirs = [d for d in new if d and "$" not in d]
        else:
            unknown = True
    return dirs, unknown


def check_launcher(spec: JobSpec, *, environ: Mapping[str, str] | None = None,
                   loaded: LoadedPreset | None = None) -> list[Problem]:
    """E4: each command the launch runs (:func:`job_commands`) is found on the PATH the job inherits (sbatch passes
    the submitting environment on), after the setup lines that can be read without running them. A command not
    found is a warning with the fix; where a setup line may change PATH unseen (``module load``), it says so. A
    job in a container (its commands are the image's) is not checked. Pure but for looking at the filesystem."""
    if spec.container not in ("", "none"):
        return []
    env = os.environ if environ is None else environ
    dirs, unknown = _setup_dirs(spec.setup, env.get("PATH", ""))
    source = loaded.source_of(("launcher", "type")) if loaded is not None else Source("")
    out: list[Problem] = []
    for command in job_commands(spec):
        if "/" in command:
            found = os.path.isfile(command) and os.access(command, os.X_OK)
        else:
            found = shutil.which(command, path=os.pathsep.join(dirs)) is not None
        if found:
            continue
        where = f"{command} (absolute)" if "/" in command else command
        hint = ("; a setup line may put it there on the compute nodes (module load, conda activate): if not, the "
                "job dies at once with exit 127") if unknown else \
            ": the job would die at once with exit 127 ('command not found'). Activate the environment that has " \
            "it before submitting, or add its activation to setup: (e.g. source /path/to/venv/bin/activate)"
        out.append(problem("E4", source, "launcher.type", f"{where} is not on the PATH this job inherits{hint}"))
    return out


def check_requeue(
    spec: JobSpec,
    runner: CommandRunner,
    *,
    loaded: LoadedPreset | None = None,
    env: Mapping[str, str] | None = None,
) -> list[Problem]:
    """T7 against this cluster: ``continue: requeue`` where ``JobRequeue=0`` (the site's default is not to requeue).
    ntui's script asks with ``--requeue``, which Slurm honours, but a site that turned requeue off may also refuse
    it in a submit plugin: a warning. No call for a job that does not requeue."""
    if spec.run is None or spec.run.mode != "requeue":
        return []
    try:
        default = job_requeue_default(runner, env=env)
    except SlurmError:
        return []
    if default is not False:
        return []
    source = loaded.source_of(("run", "continue")) if loaded is not None else Source("")
    return [problem("T7", source, "run.continue", "this cluster's JobRequeue=0: jobs are not requeued unless they "
                    "ask; ntui's script asks (--requeue), but a site may refuse it. If the job is refused or never "
                    "comes back, set run.continue: chain")]
