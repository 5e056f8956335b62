"""``scontrol show job -d`` (one job's details, a pending job's ``Dependency=`` read apart: :func:`parse_dependency`)
and ``scontrol show partition -o``, and the key=value records both print."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ntui.core.hosts import expand_nodelist
from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    StateCategory,
    _array_display_id,
    _int_or_none,
    _null,
    _text,
    normalize_state,
    state_category,
    validate_job_id,
)
from ntui.core.slurm.durations import parse_duration
from ntui.core.slurm.runner import (
    CommandRunner,
    JobNotFound,
    check,
)

# ---------------------------------------------------------------- key=value records (scontrol)

#: Keys whose values may contain spaces (paths, names, comments): the value runs to the end of the line,
#: or, in one-line output, up to the next *known* key. (Not Reason: scontrol prints its spaces as "_".)
# fmt: off
FREE_TEXT_KEYS = frozenset(
    {"JobName", "Command", "WorkDir", "StdErr", "StdIn", "StdOut", "Comment", "AdminComment",
     "SystemComment", "Container", "ContainerID", "Extra", "SubmitLine"}
)
KNOWN_KEYS = frozenset(
    {
        "Account", "AccrueTime", "AdminComment", "AllocNode:Sid", "AllocNodes", "AllowAccounts",
        "AllocTRES", "AllowGroups", "AllowQos", "ArrayJobId", "ArrayTaskId", "ArrayTaskThrottle", "BatchFlag",
        "BatchHost", "BurstBuffer", "BurstBufferState", "CPU_IDs", "CPUs/Task", "Clusters", "Command",
        "Comment", "Container", "Contiguous", "CoreSpec", "CpusPerTres", "Deadline", "DefMemPerCPU",
        "DefMemPerNode", "Default", "DefaultTime", "DelayBoot", "DenyAccounts", "DenyQos", "Dependency",
        "DerivedExitCode", "DisableRootJobs", "EligibleTime", "EndTime", "ExcNodeList", "ExclusiveUser",
        "ExitCode", "Extra", "Features", "GRES", "GraceTime", "GroupId", "HetJobId", "HetJobIdSet",
        "HetJobOffset", "Hidden", "JOB_GRES", "JobDefaults", "JobId", "JobName", "JobState", "LLN",
        "LastSchedEval", "Licenses", "MCS_label", "MailType", "MailUser", "MaxCPUsPerNode", "MaxMemPerCPU",
        "MaxMemPerNode", "MaxNodes", "MaxTime", "Mem", "MemPerTres", "MinCPUsNode", "MinMemoryCPU",
        "MinMemoryNode", "MinNodes", "MinTmpDiskNode", "Network", "Nice", "NodeList", "Nodes",
        "NtasksPerN:B:S:C", "NtasksPerTRES", "NumCPUs", "NumNodes", "NumTasks", "OverSubscribe",
        "OverTimeLimit", "Partition", "PartitionName", "Power", "PreemptEligibleTime", "PreemptMode",
        "PreemptTime", "Prefer", "Priority", "PriorityJobFactor", "PriorityTier", "QOS", "QoS", "Reason",
        "Reboot", "ReqB:S:C:T", "ReqNodeList", "ReqResv", "Requeue", "Reservation", "ResizeTime",
        "Restarts", "RootOnly", "RunTime", "SchedNodeList", "Scheduler", "SecsPreSuspend",
        "SelectTypeParameters", "Socks/Node", "StartTime", "State", "StdErr", "StdIn", "StdOut",
        "SubmitTime", "SuspendTime", "SystemComment", "TRES", "TRESBillingWeights", "TimeLimit", "TimeMin",
        "TotalCPUs", "TotalNodes", "TresBind", "TresFreq", "TresPerJob", "TresPerNode", "TresPerSocket",
        "TresPerTask", "UserId", "WCKey", "WorkDir",
        # 23.02+ (ReqTRES, NodeSets, ...) and 26.05 (SLUID, Exclusive, LicensesAlloc, SubmitLine, ...)
        "ContainerID", "ContainerType", "CronJob", "Exclusive", "ExclusiveTopo", "LicensesAlloc", "MaxCPUsPerSocket",
        "NodeSets", "ReqTRES", "ResumeAfterTime", "SLUID", "SegmentSize", "SubmitLine",
    }
)
# fmt: on
_KEY_RE = re.compile(r"(?:(?<=\s)|^)([A-Za-z_][A-Za-z0-9_:/]*)=")


def parse_key_values(
    line: str, into: dict[str, str] | None = None, *, free_text_to_eol: bool = False
) -> dict[str, str]:
    """``Key=value Key2=value with spaces`` -> dict. The first occurrence of a key wins.

    A value of a :data:`FREE_TEXT_KEYS` key may contain spaces and ``=``: it runs to the end of the line when
    ``free_text_to_eol`` (scontrol's multi-line output prints those keys last on their line), otherwise up to
    the next :data:`KNOWN_KEYS` key (one-line ``-o`` output)."""
    out: dict[str, str] = {} if into is None else into
    starts: list[tuple[str, int, int]] = []  # key, start of "Key=", start of value
    in_free = False
    for m in _KEY_RE.finditer(line):
        key = m.group(1)
        if in_free and (free_text_to_eol or key not in KNOWN_KEYS):
            continue
        starts.append((key, m.start(), m.end()))
        in_free = key in FREE_TEXT_KEYS
    for i, (key, _, vstart) in enumerate(starts):
        vend = starts[i + 1][1] if i + 1 < len(starts) else len(line)
        value = line[vstart:vend]
        out.setdefault(key, value.rstrip() if key in FREE_TEXT_KEYS else value.strip())
    return out


# ---------------------------------------------------------------- scontrol show job -d


@dataclass(frozen=True)
class JobDetails:
    """``scontrol show job -d`` for one job. ``job_id`` is the user-facing ID (``36_0`` for an array task);
    ``raw`` holds every key as printed. Times are ISO text or ``None``."""

    job_id: str
    raw_job_id: str
    array_job_id: str | None
    array_task_id: str | None
    name: str
    user: str
    state: str
    reason: str
    exit_code: str
    command: str | None
    work_dir: str
    std_out: str | None
    std_err: str | None
    std_in: str | None
    num_nodes: int | None
    num_cpus: int | None
    num_tasks: int | None
    nodelist: str
    batch_host: str | None
    partition: str
    account: str | None
    qos: str | None
    time_limit: str
    run_time: str
    submit_time: str | None
    start_time: str | None
    end_time: str | None
    tres: str  # what the job has (AllocTRES), else what it asks for (ReqTRES); 22.05: TRES
    restarts: int | None
    gres_by_node: dict[str, tuple[int, ...]] = field(default_factory=dict, hash=False)
    raw: dict[str, str] = field(default_factory=dict, hash=False, repr=False)

    @property
    def nodes(self) -> tuple[str, ...]:
        return expand_nodelist(self.nodelist, strict=False)

    @property
    def category(self) -> StateCategory:
        return state_category(self.state)

    @property
    def time_limit_s(self) -> int | None:
        return parse_duration(self.time_limit)

    @property
    def run_time_s(self) -> int | None:
        return parse_duration(self.run_time)

    @property
    def gpus(self) -> int:
        """Allocated GPUs over all nodes (from the ``-d`` lines)."""
        return sum(len(v) for v in self.gres_by_node.values())

    @property
    def req_tres(self) -> str:
        """What the job asked for: ``ReqTRES=`` (23.02+), else 22.05's ``TRES=`` (the request while pending)."""
        return _tres_value(self.raw.get("ReqTRES")) or _tres_value(self.raw.get("TRES"))

    @property
    def alloc_tres(self) -> str:
        """What the job was given: ``AllocTRES=`` (23.02+; empty while pending), else 22.05's ``TRES=`` once
        the job has nodes."""
        if "AllocTRES" in self.raw:
            return _tres_value(self.raw["AllocTRES"])
        return _tres_value(self.raw.get("TRES")) if self.nodelist else ""

    @property
    def tres_per_node(self) -> str:
        """``TresPerNode`` in 24.11+'s spelling, ``gres/gpu:4`` (22.05 prints ``gres:gpu:4``); "" when unset."""
        return normalize_tres_spec(self.raw.get("TresPerNode", ""))

    @property
    def tres_per_job(self) -> str:
        """``TresPerJob`` (``--gpus=N``) in 24.11+'s spelling, as :attr:`tres_per_node`."""
        return normalize_tres_spec(self.raw.get("TresPerJob", ""))

    @property
    def stderr_path(self) -> str | None:
        """Where the job's stderr goes: without ``--error`` it is its stdout, which 22.05 and 24.11 print as
        ``StdErr=<the stdout path>`` and 26.05 as an empty ``StdErr=`` (:attr:`std_err` is then ``None``)."""
        return self.std_err or self.std_out


def _tres_value(text: str | None) -> str:
    return "" if text is None or _null(text) is None else text


def normalize_tres_spec(text: str) -> str:
    """A TRES request in 24.11+'s spelling: ``gres:gpu:4`` (22.05) -> ``gres/gpu:4``; ``(null)`` -> ""."""
    if _null(text) is None:
        return ""
    return ",".join("gres/" + item[5:] if item.startswith("gres:") else item for item in text.split(","))


_GPU_IDX_RE = re.compile(r"(?:^|,)gpu(?::[^,():]+)*?(?::(\d+))?\(IDX:([^)]*)\)")


def parse_gres_indices(gres: str) -> tuple[int, ...]:
    """GPU indices in a ``-d`` GRES value: ``gpu:4(IDX:0-3)`` -> ``(0, 1, 2, 3)``;
    ``gpu:a100:2(IDX:0,2)`` -> ``(0, 2)``; other GRES and ``IDX:N/A`` are ignored."""
    idx: set[int] = set()
    for m in _GPU_IDX_RE.finditer(gres):
        for part in m.group(2).split(","):
            lo, sep, hi = part.strip().partition("-")
            if not lo.isdigit():
                continue
            if sep and hi.isdigit():
                idx.update(range(int(lo), int(hi) + 1))
            elif not sep:
                idx.add(int(lo))
    return tuple(sorted(idx))


def _details_from_record(kv: dict[str, str], gres_by_node: dict[str, tuple[int, ...]]) -> JobDetails:
    raw_id = kv.get("JobId", "")
    ajob = kv.get("ArrayJobId")
    task = kv.get("ArrayTaskId")
    if ajob and task and task != "N/A":
        job_id = _array_display_id(ajob, task)
    else:
        job_id, ajob, task = raw_id, None, None
    user = kv.get("UserId", "")
    user = user.split("(", 1)[0]
    reason = kv.get("Reason", "")
    return JobDetails(
        job_id=job_id,
        raw_job_id=raw_id,
        array_job_id=ajob,
        array_task_id=task,
        name=kv.get("JobName", ""),
        user=user,
        state=normalize_state(kv.get("JobState", "")),
        reason="" if reason in ("None", "(null)") else reason,
        exit_code=kv.get("ExitCode", ""),
        command=_null(kv.get("Command", "")),
        work_dir=kv.get("WorkDir", ""),
        std_out=_null(kv.get("StdOut", "")),
        std_err=_null(kv.get("StdErr", "")),
        std_in=_null(kv.get("StdIn", "")),
        num_nodes=_int_or_none(kv.get("NumNodes", "")),
        num_cpus=_int_or_none(kv.get("NumCPUs", "")),
        num_tasks=_int_or_none(kv.get("NumTasks", "")),
        nodelist="" if _null(kv.get("NodeList", "")) is None else kv["NodeList"],
        batch_host=_null(kv.get("BatchHost", "")),
        partition=kv.get("Partition", ""),
        account=_null(kv.get("Account", "")),
        qos=_null(kv.get("QOS", "")),
        time_limit=kv.get("TimeLimit", ""),
        run_time=kv.get("RunTime", ""),
        submit_time=_null(kv.get("SubmitTime", "")),
        start_time=_null(kv.get("StartTime", "")),
        end_time=_null(kv.get("EndTime", "")),
        tres=_tres_value(kv.get("AllocTRES")) or _tres_value(kv.get("TRES")) or _tres_value(kv.get("ReqTRES")),
        restarts=_int_or_none(kv.get("Restarts", "")),
        gres_by_node=gres_by_node,
        raw=kv,
    )


def parse_scontrol_jobs(stdout: str | bytes) -> tuple[JobDetails, ...]:
    """Every job record in ``scontrol show job [-d] [ID]`` output (multi-line or ``-o``)."""
    records: list[tuple[dict[str, str], dict[str, tuple[int, ...]]]] = []
    kv: dict[str, str] | None = None
    gres: dict[str, tuple[int, ...]] = {}
    lines = _text(stdout).splitlines()
    multiline = any(line[:1].isspace() and line.strip() for line in lines)
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if line.startswith("JobId="):
            kv, gres = {}, {}
            records.append((kv, gres))
            parse_key_values(line, kv, free_text_to_eol=multiline)
            continue
        if kv is None:
            continue
        if stripped.startswith("Nodes=") and line[:1].isspace():
            # a -d line: "  Nodes=nid[001-002] CPU_IDs=0-1 Mem=0 GRES=gpu:4(IDX:0-3)"
            detail = parse_key_values(stripped)
            indices = parse_gres_indices(detail.get("GRES", ""))
            for node in expand_nodelist(detail.get("Nodes", ""), strict=False):
                gres[node] = tuple(sorted(set(gres.get(node, ())) | set(indices)))
            continue
        parse_key_values(line, kv, free_text_to_eol=multiline)
    return tuple(_details_from_record(k, g) for k, g in records)


def build_show_job_argv(job_id: str) -> list[str]:
    return ["scontrol", "show", "job", "-d", validate_job_id(job_id)]


def show_job(
    runner: CommandRunner,
    job_id: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> JobDetails:
    """Details of one job (one RPC: call for the selected job only, and cache). ``JobNotFound`` when the job
    is unknown (never existed, or purged after MinJobAge)."""
    res = check(runner.run(build_show_job_argv(job_id), timeout=timeout, env=env))
    jobs = parse_scontrol_jobs(res.stdout)
    want = validate_job_id(job_id)
    for job in jobs:
        if want in (job.job_id, job.raw_job_id):
            return job
    if jobs:
        return jobs[0]
    raise JobNotFound(
        f"Job not found: scontrol printed no record for {want}",
        reason="no job record",
        argv=res.argv,
        stderr=res.stderr,
        returncode=res.returncode,
    )


def show_jobs(
    runner: CommandRunner,
    job_id: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[JobDetails, ...]:
    """Every record ``scontrol show job ID`` prints (one RPC): for an array's id, each of its tasks the controller
    remembers (pending ones folded, ``36_[2-5%2]``). ``JobNotFound`` when it knows none."""
    res = check(runner.run(build_show_job_argv(job_id), timeout=timeout, env=env))
    jobs = parse_scontrol_jobs(res.stdout)
    if not jobs:
        raise JobNotFound(f"Job not found: scontrol printed no record for {job_id}", reason="no job record",
                          argv=res.argv, stderr=res.stderr, returncode=res.returncode)
    return jobs


# ---------------------------------------------------------------- partitions


@dataclass(frozen=True)
class Partition:
    """One partition, from ``scontrol show partition -o`` (:func:`list_partitions`: every field) or from
    ``sinfo`` (:func:`~ntui.core.slurm.sinfo.sinfo_partitions`: name, default, state, max time, nodes; the rest
    stays unknown, ``None``). ``state`` is scontrol's spelling (``UP``, ``DOWN``, ``DRAIN``, ``INACTIVE``)."""

    name: str
    default: bool
    state: str
    max_time: str  # as printed: 02:00:00, UNLIMITED
    default_time: str | None = None
    nodes: str = ""  # hostlist expression
    total_nodes: int | None = None
    total_cpus: int | None = None
    max_nodes: int | None = None  # None = UNLIMITED (or not known)
    allow_accounts: tuple[str, ...] | None = None  # None = ALL (or not known)
    allow_qos: tuple[str, ...] | None = None  # None = ALL (or not known)
    qos: str | None = None
    tres: str = ""
    raw: dict[str, str] = field(default_factory=dict, hash=False, repr=False)

    @property
    def max_time_s(self) -> int | None:
        """Seconds, or ``None`` for no limit."""
        return parse_duration(self.max_time)

    @property
    def node_names(self) -> tuple[str, ...]:
        return expand_nodelist(self.nodes, strict=False)

    @property
    def up(self) -> bool:
        return self.state.upper() == "UP"

    @property
    def exclusive(self) -> str:
        """Whether jobs get their nodes alone: ``NO``, ``USER``, ``NODE`` or ``TOPO``. 26.05 prints it as
        ``Exclusive=``; before, ``ExclusiveTopo=YES`` (24.11) is ``TOPO``, ``OverSubscribe=EXCLUSIVE`` is ``NODE``
        and ``ExclusiveUser=YES`` is ``USER``."""
        if "Exclusive" in self.raw:
            return self.raw["Exclusive"].upper() or "NO"
        if self.raw.get("ExclusiveTopo", "").upper() == "YES":
            return "TOPO"
        if self.raw.get("OverSubscribe", "").upper() == "EXCLUSIVE":
            return "NODE"
        return "USER" if self.raw.get("ExclusiveUser", "").upper() == "YES" else "NO"


def build_scontrol_partitions_argv() -> list[str]:
    return ["scontrol", "show", "partition", "-o"]


def _list_or_all(text: str) -> tuple[str, ...] | None:
    if not text or text.upper() == "ALL":
        return None
    return tuple(x for x in text.split(",") if x)


def parse_scontrol_partitions(stdout: str | bytes) -> tuple[Partition, ...]:
    out: list[Partition] = []
    for line in _text(stdout).splitlines():
        if not line.startswith("PartitionName="):
            continue
        kv = parse_key_values(line)
        out.append(
            Partition(
                name=kv.get("PartitionName", ""),
                default=kv.get("Default", "NO").upper() == "YES",
                state=kv.get("State", ""),
                max_time=kv.get("MaxTime", ""),
                default_time=_null(kv.get("DefaultTime", "")),
                nodes=_null(kv.get("Nodes", "")) or "",
                total_nodes=_int_or_none(kv.get("TotalNodes", "")),
                total_cpus=_int_or_none(kv.get("TotalCPUs", "")),
                max_nodes=_int_or_none(kv.get("MaxNodes", "")),
                allow_accounts=_list_or_all(kv.get("AllowAccounts", "ALL")),
                allow_qos=_list_or_all(kv.get("AllowQos", "ALL")),
                qos=_null(kv.get("QoS", "")),
                tres=kv.get("TRES", ""),
                raw=kv,
            )
        )
    return tuple(out)


def list_partitions(
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[Partition, ...]:
    res = check(runner.run(build_scontrol_partitions_argv(), timeout=timeout, env=env))
    return parse_scontrol_partitions(res.stdout)


# ---------------------------------------------------------------- scontrol show config


def build_show_config_argv() -> list[str]:
    return ["scontrol", "show", "config"]


def parse_show_config(stdout: str | bytes) -> dict[str, str]:
    """``Key = value`` lines of ``scontrol show config`` -> dict (the first occurrence of a key wins)."""
    out: dict[str, str] = {}
    for line in _text(stdout).splitlines():
        key, sep, value = line.partition("=")
        key = key.strip()
        if sep and key and " " not in key:
            out.setdefault(key, value.strip())
    return out


def max_array_size(
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> int | None:
    """The cluster's ``MaxArraySize`` (one ``scontrol show config``; array task indices are below it), None when
    the configuration does not say."""
    res = check(runner.run(build_show_config_argv(), timeout=timeout, env=env))
    return _int_or_none(parse_show_config(res.stdout).get("MaxArraySize", ""))


def job_requeue_default(
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> bool | None:
    """The cluster's ``JobRequeue`` (one ``scontrol show config``): whether a job without ``--requeue`` or
    ``--no-requeue`` may be requeued; None when the configuration does not say."""
    res = check(runner.run(build_show_config_argv(), timeout=timeout, env=env))
    value = parse_show_config(res.stdout).get("JobRequeue", "").strip()
    return {"1": True, "0": False}.get(value)


#: Where Slurm's clients find slurm.conf when ``SLURM_CONF`` is not set: the default path, then the copies a
#: configless site keeps (sackd on a login node, slurmd's cache on a node).
CONF_PATHS = ("/etc/slurm/slurm.conf", "/run/slurm/conf/slurm.conf", "/var/spool/slurmd/conf-cache/slurm.conf")
_CLUSTER_NAME = re.compile(r"^\s*ClusterName\s*=\s*([^\s#]+)", re.IGNORECASE | re.MULTILINE)


def parse_cluster_name(conf_text: str) -> str | None:
    """``ClusterName=`` of a slurm.conf's text, lower-cased as Slurm uses it; None when it is not set."""
    m = _CLUSTER_NAME.search(conf_text)
    return m.group(1).lower() if m else None


def cluster_name(*, env: Mapping[str, str] | None = None) -> str | None:
    """The name of the cluster the clients talk to (Slurm's ``ClusterName``), read from the slurm.conf they read
    (``SLURM_CONF``, else :data:`CONF_PATHS`); no Slurm call. None when none says: a record without its cluster
    is still a record."""
    conf = (env if env is not None else os.environ).get("SLURM_CONF")
    for path in ((conf,) if conf else CONF_PATHS):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                name = parse_cluster_name(f.read(1 << 20))
        except OSError:
            continue
        if name:
            return name
    return None


# ---------------------------------------------------------------- a job's batch script


def build_batch_script_argv(job_id: str) -> list[str]:
    """``scontrol write batch_script ID -`` (the script on stdout; the job's owner or an operator only)."""
    return ["scontrol", "write", "batch_script", validate_job_id(job_id), "-"]


def batch_script(
    runner: CommandRunner,
    job_id: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> str:
    """The script a job was submitted with, as the controller keeps it (one RPC)."""
    return check(runner.run(build_batch_script_argv(job_id), timeout=timeout, env=env)).stdout


# ---------------------------------------------------------------- a pending job's Dependency=
#
# A pending job's ``Dependency=`` as ``scontrol show job`` prints it (no RPC of its own: it comes with the job's
# details).
#
# Slurm lists only the dependencies not yet fulfilled, each ``TYPE:JOBID[_TASK|_*][+MINUTES](STATE)`` or
# ``singleton(STATE)``, joined by ``,`` (all of them) or ``?`` (any one of them); STATE is ``unfulfilled`` or
# ``failed`` (SchedMD/slurm ``src/slurmctld/job_scheduler.c``, ``_depend_list2str``; the same in 22.05 to 26.05).
# Captured: ``afterok:107(failed)`` (``tests/data/slurm/scontrol_show_job_dependency_never``).
#: What each type waits for, completing "it waits for job N to ...".
CONDITIONS = {
    "after": "start (or be cancelled)",
    "afterany": "end, however it ends",
    "afterok": "end OK (COMPLETED, exit code 0)",
    "afternotok": "fail (end in any state but COMPLETED)",
    "aftercorr": "end OK, task for task",
    "afterburstbuffer": "end and its burst buffer stage-out to finish",
    "expand": "be expanded",
    "singleton": "end: another job of yours with the same name runs",
}


@dataclass(frozen=True)
class Dependency:
    """One dependency. ``job_id`` is what ``squeue -j`` takes (``123``, ``123_4``); ``array`` is True for
    ``123_*`` (every task of array 123)."""

    kind: str
    job_id: str = ""
    array: bool = False
    delay_min: int = 0
    state: str = "unfulfilled"

    @property
    def failed(self) -> bool:
        """Slurm knows it can never be fulfilled."""
        return self.state == "failed"

    @property
    def condition(self) -> str:
        return CONDITIONS.get(self.kind, f"satisfy {self.kind}")


@dataclass(frozen=True)
class DependencyList:
    items: tuple[Dependency, ...] = ()
    any_of: bool = False  # '?': one fulfilled is enough

    @property
    def jobs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(d.job_id for d in self.items if d.job_id))


_ITEM = re.compile(r"^(?P<kind>[a-z]+)(?::(?P<job>\d+)(?P<task>_\d+|_\*)?(?:\+(?P<delay>\d+))?)?"
                   r"(?:\((?P<state>[a-z]+)\))?$")


def parse_dependency(text: str | None) -> DependencyList:
    """``afterok:12(failed),afterany:13_*(unfulfilled)`` -> two items; ``(null)`` / empty -> none. Items that do
    not parse are dropped (a newer Slurm's syntax: the raw text stays in the job's details)."""
    value = (text or "").strip()
    if not value or value in ("(null)", "None"):
        return DependencyList()
    any_of = "?" in value
    items = []
    for part in re.split(r"[,?]", value):
        m = _ITEM.match(part.strip())
        if m is None:
            continue
        task = m.group("task") or ""
        job = m.group("job") or ""
        items.append(Dependency(
            kind=m.group("kind"),
            job_id=job + (task if task and task != "_*" else ""),
            array=task == "_*",
            delay_min=int(m.group("delay") or 0),
            state=m.group("state") or "unfulfilled",
        ))
    return DependencyList(tuple(items), any_of)
