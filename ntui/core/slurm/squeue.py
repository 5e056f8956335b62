"""``squeue -O``: the queue, one :class:`QueueJob` per line (one RPC per call)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ntui.core.hosts import expand_nodelist
from ntui.core.slurm.common import (
    _CATEGORY,
    _NULL_WORDS,
    DEFAULT_TIMEOUT,
    STATE_CODES,
    StateCategory,
    _ids,
    _safe_token,
    _text,
    parse_timestamp,
)
from ntui.core.slurm.durations import parse_duration
from ntui.core.slurm.runner import (
    CommandRunner,
    JobNotFound,
    SlurmError,
    SlurmRejected,
    classify,
)

# ---------------------------------------------------------------- squeue

#: ASCII unit separator (as Open OnDemand uses); observed working with squeue 22.05.8 ``-O``.
SQUEUE_SEPARATOR = "\x1f"
#: Fields requested from ``squeue -O``. (``ExitCode`` is rejected by 22.05; its name there is ``exit_code``.)
SQUEUE_FIELDS: tuple[str, ...] = (
    "JobID",
    "ArrayJobID",
    "ArrayTaskID",
    "Name",
    "StateCompact",
    "State",
    "Reason",
    "TimeUsed",
    "TimeLimit",
    "StartTime",
    "NumNodes",
    "NodeList",
    "tres-alloc",
    "Partition",
    "QOS",
    "WorkDir",
    "UserName",
    "exit_code",
)


@dataclass(frozen=True)
class QueueJob:
    """One line of the queue. ``job_id`` is what users type: ``123``, ``123_4`` (array task) or
    ``123_[5-9%2]`` (pending array tasks without ``--array``); ``raw_job_id`` is squeue's JobID (the internal
    ID: an array task that started has its own)."""

    job_id: str
    raw_job_id: str = ""
    array_job_id: str | None = None
    array_task_id: str | None = None
    name: str = ""
    state: str = ""  # long form, e.g. PENDING
    state_compact: str = ""
    reason: str = ""  # "" instead of Slurm's "None"
    elapsed: str = ""  # as printed, e.g. 1-02:03:04
    time_limit: str = ""  # as printed, e.g. 2:00:00 or UNLIMITED
    start: str | None = None  # ISO text; None for N/A (pending jobs may carry an estimate)
    num_nodes: int | None = None
    nodelist: str = ""  # hostlist expression, "" before allocation
    partition: str = ""
    qos: str | None = None
    workdir: str = ""
    user: str = ""
    tres_alloc: str = ""
    exit_code: str | None = None

    @property
    def nodes(self) -> tuple[str, ...]:
        """Expanded node names (cached per expression)."""
        return expand_nodelist(self.nodelist, strict=False)

    @property
    def category(self) -> StateCategory:
        return _CATEGORY.get(self.state, StateCategory.OTHER)

    @property
    def elapsed_s(self) -> int | None:
        return parse_duration(self.elapsed)

    @property
    def time_limit_s(self) -> int | None:
        return parse_duration(self.time_limit)

    @property
    def start_time(self) -> datetime | None:
        return parse_timestamp(self.start)

    @property
    def is_array(self) -> bool:
        return self.array_task_id is not None

    @property
    def tres(self) -> dict[str, str]:
        """``cpu=2,mem=4000M,gres/gpu=8`` -> ``{"cpu": "2", "mem": "4000M", "gres/gpu": "8"}``."""
        return parse_tres(self.tres_alloc)


def parse_tres(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if sep and key:
            out[key.strip()] = value.strip()
    return out


def build_squeue_argv(
    all_users: bool = False,
    array_tasks: bool = True,
    job_ids: Sequence[str] | None = None,
    states: str | None = None,
    *,
    fields: Sequence[str] = SQUEUE_FIELDS,
    separator: str = SQUEUE_SEPARATOR,
    local: bool = True,
) -> list[str]:
    """``squeue [--local] --noheader [--array] [--me] [--jobs=..] [--states=..] -O "F1:SEP,F2:SEP,..."``.

    ``field:SUFFIX`` has width 0, so values are never truncated (squeue(1), ``--format``).
    ``--local`` ("ignore other clusters in the federation", which only a site with
    ``FederationParameters=fed_display`` shows anyway) drops the federation look-up: measured with
    ``sdiag`` on 22.05.8, one squeue then costs two RPCs instead of three."""
    if not separator or "," in separator or separator[0].isdigit() or separator[0] == ".":
        raise ValueError(f"unusable squeue separator {separator!r}")
    argv = ["squeue", "--local", "--noheader"] if local else ["squeue", "--noheader"]
    if array_tasks:
        argv.append("--array")
    if not all_users:
        argv.append("--me")
    if job_ids:
        argv.append("--jobs=" + ",".join(_ids(job_ids)))
    if states:
        argv.append("--states=" + ",".join(_safe_token(s.strip(), "state").upper() for s in states.split(",")))
    argv += ["-O", ",".join(f"{f}:{separator}" for f in fields)]
    return argv


def parse_squeue(
    stdout: str | bytes,
    *,
    fields: Sequence[str] = SQUEUE_FIELDS,
    separator: str = SQUEUE_SEPARATOR,
) -> tuple[QueueJob, ...]:
    """Parse ``build_squeue_argv`` output (same ``fields`` / ``separator``). Lines with the wrong field count
    are dropped; bytes are decoded with replacement. Fields missing from ``fields`` come back empty."""
    text = _text(stdout)
    n = len(fields)
    index = {f.lower(): i for i, f in enumerate(fields)}
    missing = n  # parts is padded to n + 1, so index n is always ""

    def col(name: str) -> int:
        return index.get(name.lower(), missing)

    # fmt: off
    (i_id, i_ajob, i_task, i_name, i_compact, i_state, i_reason, i_used, i_limit, i_start, i_nn, i_nl,
     i_tres, i_part, i_qos, i_wd, i_user, i_exit) = (col(f) for f in (
        "JobID", "ArrayJobID", "ArrayTaskID", "Name", "StateCompact", "State", "Reason", "TimeUsed",
        "TimeLimit", "StartTime", "NumNodes", "NodeList", "tres-alloc", "Partition", "QOS", "WorkDir",
        "UserName", "exit_code"))
    # fmt: on
    codes = STATE_CODES
    nulls = _NULL_WORDS
    jobs: list[QueueJob] = []
    append = jobs.append
    # Frozen-dataclass __init__ costs ~1.6 us per object (one object.__setattr__ per field); filling
    # __dict__ directly is 7x faster and yields an identical object (QueueJob has no __post_init__).
    new = object.__new__
    for line in text.split("\n"):
        if not line:
            continue
        parts = line.split(separator)
        count = len(parts)
        if count == n + 1:
            if parts[n].strip():
                continue
            parts[n] = ""
        elif count == n:
            parts.append("")
        else:
            continue
        # width-0 fields are printed unpadded, so no strip() (this loop must stay fast: 10k lines << 100 ms)
        raw_id = parts[i_id]
        task = parts[i_task]
        ajob = parts[i_ajob]
        if task and task != "N/A" and ajob:
            job_id = f"{ajob}_{task}" if task.isdigit() else f"{ajob}_[{task}]"
            array_job: str | None = ajob
            array_task: str | None = task
        else:
            job_id, array_job, array_task = raw_id, None, None
        if not job_id:
            continue
        compact = parts[i_compact]
        state = parts[i_state]
        if state:
            if " " in state or state.endswith("+"):
                state = state.split(" ", 1)[0].rstrip("+")
            state = codes.get(state, state)
        else:
            state = codes.get(compact, compact)
        reason = parts[i_reason]
        start = parts[i_start]
        nn = parts[i_nn]
        nodelist = parts[i_nl]
        qos = parts[i_qos]
        job = new(QueueJob)
        job.__dict__.update(
            job_id=job_id,
            raw_job_id=raw_id,
            array_job_id=array_job,
            array_task_id=array_task,
            name=parts[i_name],
            state=state,
            state_compact=compact,
            reason="" if reason in ("None", "(null)") else reason,
            elapsed=parts[i_used],
            time_limit=parts[i_limit],
            start=None if start.upper() in nulls else start,
            num_nodes=int(nn) if nn.isdigit() else None,
            nodelist="" if nodelist == "(null)" else nodelist,
            partition=parts[i_part],
            qos=None if qos.upper() in nulls else qos,
            workdir=parts[i_wd],
            user=parts[i_user],
            tres_alloc=parts[i_tres],
            exit_code=parts[i_exit] or None,
        )
        append(job)
    return tuple(jobs)


_BAD_FIELD_RE = re.compile(r"Invalid job format specification:\s*(\S+)")


def probe_squeue_fields(
    runner: CommandRunner,
    fields: Sequence[str] = SQUEUE_FIELDS,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[str, ...]:
    """The ``fields`` this squeue rejects (one RPC; do it once per session). 22.05 prints
    "squeue: error: Invalid job format specification: X" and exits 0."""
    argv = build_squeue_argv(fields=fields)
    res = runner.run(argv, timeout=timeout, env=env)
    bad = tuple(_BAD_FIELD_RE.findall(res.stderr))
    if not bad:
        err = classify(res)
        if err is not None:
            raise err
    return bad


def query_queue(
    runner: CommandRunner,
    *,
    all_users: bool = False,
    array_tasks: bool = True,
    job_ids: Sequence[str] | None = None,
    states: str | None = None,
    fields: Sequence[str] = SQUEUE_FIELDS,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[QueueJob, ...]:
    """One squeue call (one RPC). A job ID that left the queue gives ``()``, not an error. An unsupported
    field is tolerated when squeue still printed parseable lines (22.05.8 prints it empty); probe first
    with :func:`probe_squeue_fields` and pass ``fields`` without it."""
    argv = build_squeue_argv(all_users, array_tasks, job_ids, states, fields=fields)
    stdout, tolerated = run_squeue(runner, argv, env=env, timeout=timeout)
    jobs = parse_squeue(stdout, fields=fields)
    if tolerated is not None and not jobs and stdout.strip():
        raise tolerated  # nothing parsed: show the error, not an empty queue
    return jobs


def run_squeue(
    runner: CommandRunner,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[str, SlurmError | None]:
    """Run a squeue argv; return its stdout and a tolerated error, raising the typed errors otherwise.
    Job IDs that left the queue give ``""``; an unsupported ``-O`` field (22.05 prints it empty and
    exits 0) is tolerated and returned, for the caller to raise if nothing parses."""
    res = runner.run(argv, timeout=timeout, env=env)
    err = classify(res)
    if err is None:
        return res.stdout, None
    if isinstance(err, JobNotFound) and any(a.startswith("--jobs=") for a in argv):
        return "", None
    if isinstance(err, SlurmRejected) and _BAD_FIELD_RE.search(res.stderr) and res.returncode == 0:
        return res.stdout, err
    raise err


# ---------------------------------------------------------------- squeue --start (pending jobs' estimates)

#: ``squeue --start`` keeps its own columns when given ``-O`` (22.05.8 ignores ``-O`` then) but takes ``-o``, where a
#: field without a width is printed whole: job id, state, reason, expected start, scheduled nodes, nodes, partition.
START_FORMAT = ("%i", "%T", "%r", "%S", "%Y", "%D", "%P")


@dataclass(frozen=True)
class StartEstimate:
    """One line of ``squeue --start``: when the scheduler expects a pending job to start, and where. ``start``
    is None when it has no estimate yet (``N/A``: the backfill scheduler has not planned the job)."""

    job_id: str
    state: str
    reason: str
    start: datetime | None
    sched_nodes: str  # the nodes the scheduler plans to use ("" when none yet)
    num_nodes: int | None
    partition: str


def build_start_argv(job_ids: Sequence[str] | None = None, *, separator: str = SQUEUE_SEPARATOR) -> list[str]:
    """``squeue --local --noheader --start (--jobs=ID,...|--me) -o FORMAT`` (one RPC for any number of jobs)."""
    argv = ["squeue", "--local", "--noheader", "--start"]
    argv.append("--jobs=" + ",".join(_ids(job_ids)) if job_ids else "--me")
    return argv + ["-o", separator.join(START_FORMAT)]


def parse_start(stdout: str | bytes, *, separator: str = SQUEUE_SEPARATOR) -> tuple[StartEstimate, ...]:
    """Parse :func:`build_start_argv` output; lines with the wrong field count are dropped."""
    out: list[StartEstimate] = []
    for line in _text(stdout).splitlines():
        parts = line.split(separator)
        if len(parts) != len(START_FORMAT) or not parts[0].strip():
            continue
        job_id, state, reason, start, nodes, count, part = (p.strip() for p in parts)
        out.append(StartEstimate(
            job_id=job_id,
            state=STATE_CODES.get(state, state),
            reason="" if reason in ("None", "(null)") else reason,
            start=parse_timestamp(start),
            sched_nodes="" if nodes.upper() in _NULL_WORDS else nodes,
            num_nodes=int(count) if count.isdigit() else None,
            partition=part,
        ))
    return tuple(out)


def start_estimates(
    runner: CommandRunner,
    job_ids: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[StartEstimate, ...]:
    """The start estimates of pending jobs (the given ones, else all of the user's): one RPC. A job that left the
    queue gives nothing, not an error."""
    stdout, _ = run_squeue(runner, build_start_argv(job_ids), env=env, timeout=timeout)
    return parse_start(stdout)
