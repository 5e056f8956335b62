"""Every Slurm interaction ntui makes: pure argv builders, pure parsers, thin typed runners.

Each interaction is three pieces:

* ``build_*_argv(...) -> list[str]``: the exact command (no shell, values validated so that nothing a user
  typed can turn into an option);
* ``parse_*(...)``: a pure function from Slurm's text to frozen dataclasses (tested on real captures from
  Slurm 22.05.8 in ``tests/data/slurm/``);
* a function taking a :class:`~ntui.core.runner.CommandRunner` that runs both with a timeout and raises the
  typed errors of :mod:`ntui.core.runner`.

RPC cost (each Slurm client call is at least one slurmctld RPC): ``query_queue`` 1, ``show_job`` 1 (call it
for the selected job only, and cache), actions 1 each, ``slurm_version`` 0 (local), ``list_partitions`` 1,
``user_associations`` / ``final_state`` go to slurmdbd instead.
"""

from __future__ import annotations

import getpass
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

from ntui.core.hosts import compress_nodelist, expand_nodelist
from ntui.core.runner import (
    CommandResult,
    CommandRunner,
    ControllerUnreachable,
    JobNotFound,
    SlurmError,
    SlurmRejected,
    check,
    classify,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "SQUEUE_FIELDS",
    "SQUEUE_SEPARATOR",
    "SUBMIT_TIMEOUT",
    "AccountingRecord",
    "Associations",
    "JobDetails",
    "Partition",
    "QueueJob",
    "SinfoPartition",
    "StateCategory",
    "Submission",
    "TestOnlyResult",
    "build_hold_argv",
    "build_release_argv",
    "build_requeue_argv",
    "build_sacct_argv",
    "build_sacctmgr_assoc_argv",
    "build_sbatch_argv",
    "build_scancel_argv",
    "build_scontrol_partitions_argv",
    "build_sdiag_argv",
    "build_show_job_argv",
    "build_sinfo_partitions_argv",
    "build_squeue_argv",
    "build_test_only_argv",
    "build_version_argv",
    "cancel",
    "final_state",
    "hold",
    "list_partitions",
    "normalize_state",
    "parse_duration",
    "parse_gres_indices",
    "parse_sacct",
    "parse_sacctmgr_assoc",
    "parse_sbatch_parsable",
    "parse_sbatch_test_only",
    "parse_scontrol_jobs",
    "parse_scontrol_partitions",
    "parse_sdiag_rpc_by_type",
    "parse_sdiag_rpc_by_user",
    "parse_sinfo_partitions",
    "parse_squeue",
    "parse_timestamp",
    "parse_version",
    "probe_squeue_fields",
    "query_queue",
    "release",
    "requeue",
    "rpc_counts_by_user",
    "show_job",
    "sinfo_partitions",
    "slurm_version",
    "state_category",
    "submit",
    "test_only",
    "user_associations",
    "validate_job_id",
]

#: Timeout for queries and actions (seconds).
DEFAULT_TIMEOUT = 15.0
#: sbatch retries by itself when slurmctld is busy ("Slurm temporarily unable to accept job, sleeping and
#: retrying"), so submission gets longer.
SUBMIT_TIMEOUT = 60.0


def _text(data: str | bytes) -> str:
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data


# ---------------------------------------------------------------- time helpers

_NULL_WORDS = frozenset(
    {"", "N/A", "NONE", "UNKNOWN", "UNLIMITED", "INFINITE", "INVALID", "(NULL)", "PARTITION_LIMIT", "NOT_SET"}
)


def parse_duration(text: str | None) -> int | None:
    """Seconds in a Slurm duration, or ``None`` for ``UNLIMITED`` / ``INVALID`` / ``N/A`` / empty / garbage.

    Accepts what Slurm prints (``M:SS``, ``H:MM:SS``, ``D-HH:MM:SS``) and what it accepts as input
    (``M``, ``D-H``, ``D-H:M``). ``2:03`` is 2 min 3 s.
    """
    if text is None:
        return None
    s = text.strip()
    if s.upper() in _NULL_WORDS:
        return None
    try:
        days = 0
        if "-" in s:
            d, _, s = s.partition("-")
            days = int(d)
            parts = [int(p) for p in s.split(":")]
            if len(parts) > 3:
                return None
            h, m, sec = (parts + [0, 0])[:3]
        else:
            parts = [int(p) for p in s.split(":")]
            if len(parts) == 1:
                h, m, sec = 0, parts[0], 0
            elif len(parts) == 2:
                h, m, sec = 0, parts[0], parts[1]
            elif len(parts) == 3:
                h, m, sec = parts
            else:
                return None
    except ValueError:
        return None
    if min(days, h, m, sec) < 0:
        return None
    return ((days * 24 + h) * 60 + m) * 60 + sec


def parse_timestamp(text: str | None) -> datetime | None:
    """``2026-11-30T04:26:43`` -> naive local datetime; ``N/A`` / ``Unknown`` / ``None`` / garbage -> None."""
    if not text:
        return None
    s = text.strip()
    if s.upper() in _NULL_WORDS:
        return None
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        return None


def _null(text: str) -> str | None:
    """``None`` for Slurm's spellings of nothing, else the text."""
    return None if text.strip().upper() in _NULL_WORDS else text


def _int_or_none(text: str) -> int | None:
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------- job states


class StateCategory(str, Enum):
    """Coarse job state for colours, filters and "is it over?"."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETING = "completing"
    DONE = "done"  # finished successfully
    FAILED = "failed"  # finished unsuccessfully (includes cancelled, timeout, OOM, node failure, preempted)
    OTHER = "other"  # suspended, federation states, anything unknown

    @property
    def finished(self) -> bool:
        return self in (StateCategory.DONE, StateCategory.FAILED)


#: squeue.1 "JOB STATE CODES": compact -> long form.
STATE_CODES: dict[str, str] = {
    "BF": "BOOT_FAIL",
    "CA": "CANCELLED",
    "CD": "COMPLETED",
    "CF": "CONFIGURING",
    "CG": "COMPLETING",
    "DL": "DEADLINE",
    "F": "FAILED",
    "NF": "NODE_FAIL",
    "OOM": "OUT_OF_MEMORY",
    "PD": "PENDING",
    "PR": "PREEMPTED",
    "R": "RUNNING",
    "RD": "RESV_DEL_HOLD",
    "RF": "REQUEUE_FED",
    "RH": "REQUEUE_HOLD",
    "RQ": "REQUEUED",
    "RS": "RESIZING",
    "RV": "REVOKED",
    "SE": "SPECIAL_EXIT",
    "SI": "SIGNALING",
    "SO": "STAGE_OUT",
    "S": "SUSPENDED",
    "ST": "STOPPED",
    "TO": "TIMEOUT",
}

_C = StateCategory
_CATEGORY: dict[str, StateCategory] = {
    "PENDING": _C.PENDING,
    "CONFIGURING": _C.PENDING,  # allocated, nodes booting: no output yet
    "REQUEUED": _C.PENDING,
    "REQUEUE_HOLD": _C.PENDING,
    "REQUEUE_FED": _C.PENDING,
    "RESV_DEL_HOLD": _C.PENDING,
    "SPECIAL_EXIT": _C.PENDING,  # requeued and held in a special state
    "RUNNING": _C.RUNNING,
    "RESIZING": _C.RUNNING,
    "SIGNALING": _C.RUNNING,
    "STOPPED": _C.RUNNING,  # SIGSTOPped, keeps its CPUs
    "COMPLETING": _C.COMPLETING,
    "STAGE_OUT": _C.COMPLETING,
    "COMPLETED": _C.DONE,
    "FAILED": _C.FAILED,
    "CANCELLED": _C.FAILED,
    "TIMEOUT": _C.FAILED,
    "OUT_OF_MEMORY": _C.FAILED,
    "NODE_FAIL": _C.FAILED,
    "BOOT_FAIL": _C.FAILED,
    "DEADLINE": _C.FAILED,
    "PREEMPTED": _C.FAILED,
    "SUSPENDED": _C.OTHER,
    "REVOKED": _C.OTHER,
}


def normalize_state(text: str) -> str:
    """Long upper-case state name: ``"CD"`` -> ``COMPLETED``, ``"CANCELLED by 0"`` / ``"CANCELLED+"`` ->
    ``CANCELLED``. Unknown words come back upper-cased (never an error); empty stays empty."""
    word = text.strip().split(" ", 1)[0].rstrip("+").upper()
    return STATE_CODES.get(word, word)


def state_category(state: str) -> StateCategory:
    """Category of a compact or long state; unknown -> ``OTHER``."""
    return _CATEGORY.get(normalize_state(state), StateCategory.OTHER)


# ---------------------------------------------------------------- argument validation

_JOB_ID_RE = re.compile(r"^\d+(?:_(?:\d+|\[[\d,\-%]+\]))?(?:\+\d+)?(?:\.(?:\d+|batch|extern))?$")
_SIGNAL_RE = re.compile(r"^(?:SIG)?[A-Z][A-Z0-9]*$|^\d{1,2}$")


def validate_job_id(job_id: str) -> str:
    """``job_id`` unchanged if it is a Slurm job ID (``123``, ``123_4``, ``123_[1-3]``, ``123+1``,
    ``123.batch``); ``ValueError`` otherwise (so nothing a user typed can become an option)."""
    s = str(job_id).strip()
    if not _JOB_ID_RE.match(s):
        raise ValueError(f"not a Slurm job ID: {job_id!r}")
    return s


def _ids(job_ids: str | Sequence[str]) -> list[str]:
    ids = [job_ids] if isinstance(job_ids, str) else list(job_ids)
    if not ids:
        raise ValueError("no job IDs given")
    return [validate_job_id(i) for i in ids]


def _safe_token(value: str, what: str) -> str:
    if not value or value.startswith("-") or any(c.isspace() or c == "," for c in value):
        raise ValueError(f"invalid {what}: {value!r}")
    return value


# ---------------------------------------------------------------- sbatch --parsable


@dataclass(frozen=True)
class Submission:
    job_id: str
    cluster: str | None = None


_PARSABLE_RE = re.compile(r"^(\d+)(?:;(\S+))?$")


def build_sbatch_argv(script_path: str, extra_args: Sequence[str] = ()) -> list[str]:
    """``sbatch --parsable [EXTRA...] SCRIPT`` (extra args e.g. ``--hold``; they go before the script,
    where sbatch reads options)."""
    return ["sbatch", "--parsable", *extra_args, str(script_path)]


def parse_sbatch_parsable(stdout: str | bytes) -> Submission:
    """The job ID (and cluster) from ``sbatch --parsable`` stdout: the last line shaped ``N`` or ``N;cluster``
    (site wrappers may print lines before it). ``ValueError`` when there is none."""
    for line in reversed(_text(stdout).strip().splitlines()):
        m = _PARSABLE_RE.match(line.strip())
        if m:
            return Submission(job_id=m.group(1), cluster=m.group(2))
    raise ValueError("sbatch --parsable printed no job ID")


def submit(
    runner: CommandRunner,
    script_path: str,
    *,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = SUBMIT_TIMEOUT,
) -> Submission:
    """Submit a batch script. A printed job ID wins over noise on stderr (raising then would make the user
    submit twice); otherwise the typed error (``SlurmRejected`` with Slurm's reason, ...) is raised."""
    res = runner.run(build_sbatch_argv(script_path, extra_args), timeout=timeout, env=env)
    if res.returncode == 0:
        try:
            return parse_sbatch_parsable(res.stdout)
        except ValueError:
            pass
    check(res)
    raise SlurmError(
        "sbatch reported success but printed no job ID",
        argv=res.argv,
        stderr=res.stderr + res.stdout,
        returncode=res.returncode,
    )


# ---------------------------------------------------------------- sbatch --test-only


@dataclass(frozen=True)
class TestOnlyResult:
    """What ``sbatch --test-only`` said. ``ok=False`` carries Slurm's ``reason``. Note: a time limit above the
    partition's MaxTime still gives ``ok=True`` on 22.05.8 (the job would pend with PartitionTimeLimit)."""

    __test__ = False  # not a pytest class

    ok: bool
    job_id: str | None = None
    start: str | None = None
    processors: int | None = None
    nodes: str | None = None
    partition: str | None = None
    reason: str | None = None
    raw: str = ""


_TEST_ONLY_RE = re.compile(
    r"Job (?P<job>\d+) to start at (?P<start>\S+)"
    r"(?: using (?P<procs>\d+) processors)?(?: on nodes (?P<nodes>\S+))?(?: in partition (?P<part>\S+))?"
)
_FAIL_RE = re.compile(r"(?:allocation failure|batch job submission failed):\s*(?P<reason>.+)", re.IGNORECASE)
_ERROR_RE = re.compile(r"error:\s*(?P<reason>.+)")


def build_test_only_argv(script_path: str, extra_args: Sequence[str] = ()) -> list[str]:
    return ["sbatch", "--test-only", *extra_args, str(script_path)]


def parse_sbatch_test_only(res: CommandResult) -> TestOnlyResult:
    """Pure parse of a ``sbatch --test-only`` result (the message is on stderr)."""
    raw = (res.stderr + ("\n" + res.stdout if res.stdout.strip() else "")).strip()
    m = _TEST_ONLY_RE.search(res.stderr) or _TEST_ONLY_RE.search(res.stdout)
    if res.returncode == 0 and m:
        return TestOnlyResult(
            ok=True,
            job_id=m.group("job"),
            start=m.group("start"),
            processors=int(m.group("procs")) if m.group("procs") else None,
            nodes=m.group("nodes"),
            partition=m.group("part"),
            raw=raw,
        )
    if res.returncode == 0:
        return TestOnlyResult(ok=True, raw=raw)
    reason = ""
    for line in raw.splitlines():
        fm = _FAIL_RE.search(line)
        if fm:
            reason = fm.group("reason").strip()
    if not reason:
        for line in raw.splitlines():
            em = _ERROR_RE.search(line)
            if em:
                reason = em.group("reason").strip()
    if not reason:
        reason = next((ln.strip() for ln in raw.splitlines() if ln.strip()), f"exit code {res.returncode}")
    return TestOnlyResult(ok=False, reason=reason, raw=raw)


def test_only(
    runner: CommandRunner,
    script_path: str,
    *,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = SUBMIT_TIMEOUT,
) -> TestOnlyResult:
    """Validate a script without submitting. Rejections come back as ``ok=False``; an unreachable controller
    (``ControllerUnreachable``), a timeout or a missing sbatch raise."""
    res = runner.run(build_test_only_argv(script_path, extra_args), timeout=timeout, env=env)
    err = classify(res)
    if isinstance(err, ControllerUnreachable):
        raise err
    return parse_sbatch_test_only(res)


test_only.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


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

    ``field:SUFFIX`` has width 0, so values are never truncated (squeue.1 / src/squeue/opts.c).
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


def _array_display_id(array_job: str, task: str) -> str:
    if task.isdigit():
        return f"{array_job}_{task}"
    return f"{array_job}_[{task}]"


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


# ---------------------------------------------------------------- key=value records (scontrol)

#: Keys whose values may contain spaces (paths, names, comments): the value runs to the end of the line,
#: or, in one-line output, up to the next *known* key. (Not Reason: scontrol prints its spaces as "_".)
# fmt: off
FREE_TEXT_KEYS = frozenset(
    {"JobName", "Command", "WorkDir", "StdErr", "StdIn", "StdOut", "Comment", "AdminComment",
     "SystemComment", "Container", "Extra"}
)
KNOWN_KEYS = frozenset(
    {
        "Account", "AccrueTime", "AdminComment", "AllocNode:Sid", "AllocNodes", "AllowAccounts",
        "AllowGroups", "AllowQos", "ArrayJobId", "ArrayTaskId", "ArrayTaskThrottle", "BatchFlag",
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
    tres: str
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
        tres=kv.get("TRES", ""),
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


# ---------------------------------------------------------------- actions


def build_scancel_argv(
    job_ids: str | Sequence[str],
    *,
    signal: str | int | None = None,
    full: bool = False,
    batch: bool = False,
) -> list[str]:
    """``scancel [--signal=SIG] [--full|--batch] ID...``. ``--signal`` alone reaches every step but not the
    batch shell; ``--batch`` only the batch shell; ``--full`` the batch shell and its children too."""
    if full and batch:
        raise ValueError("--full and --batch are alternatives")
    argv = ["scancel"]
    if signal is not None:
        sig = str(signal).strip().upper()
        if not _SIGNAL_RE.match(sig):
            raise ValueError(f"not a signal name or number: {signal!r}")
        argv.append(f"--signal={sig}")
    if full:
        argv.append("--full")
    if batch:
        argv.append("--batch")
    return argv + _ids(job_ids)


def build_hold_argv(job_ids: str | Sequence[str]) -> list[str]:
    """``scontrol hold ID ID...`` (separate arguments; verified on 22.05.8)."""
    return ["scontrol", "hold", *_ids(job_ids)]


def build_release_argv(job_ids: str | Sequence[str]) -> list[str]:
    """``scontrol release ID ID...``."""
    return ["scontrol", "release", *_ids(job_ids)]


def build_requeue_argv(job_ids: str | Sequence[str]) -> list[str]:
    """``scontrol requeue ID,ID,...`` (comma separated, scontrol.1)."""
    return ["scontrol", "requeue", ",".join(_ids(job_ids))]


def _act(runner: CommandRunner, argv: list[str], env: Mapping[str, str] | None, timeout: float) -> CommandResult:
    return check(runner.run(argv, timeout=timeout, env=env))


def cancel(
    runner: CommandRunner,
    job_ids: str | Sequence[str],
    *,
    signal: str | int | None = None,
    full: bool = False,
    batch: bool = False,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CommandResult:
    """Cancel or signal jobs. Note: 22.05.8 ``scancel`` of an unknown ID exits 0 silently."""
    return _act(runner, build_scancel_argv(job_ids, signal=signal, full=full, batch=batch), env, timeout)


def hold(
    runner: CommandRunner,
    job_ids: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CommandResult:
    """Hold pending jobs (a running job keeps running). Unknown ID -> ``JobNotFound``."""
    return _act(runner, build_hold_argv(job_ids), env, timeout)


def release(
    runner: CommandRunner,
    job_ids: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CommandResult:
    return _act(runner, build_release_argv(job_ids), env, timeout)


def requeue(
    runner: CommandRunner,
    job_ids: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> CommandResult:
    """Requeue batch jobs. A pending job gives ``SlurmRejected`` ("Job is pending execution")."""
    return _act(runner, build_requeue_argv(job_ids), env, timeout)


# ---------------------------------------------------------------- version


def build_version_argv() -> list[str]:
    return ["sinfo", "--version"]


def parse_version(stdout: str | bytes) -> tuple[int, ...]:
    """``slurm-wlm 22.05.8`` / ``slurm 23.11.4`` -> ``(22, 5, 8)``; ``ValueError`` when absent."""
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", _text(stdout))
    if not m:
        raise ValueError(f"no Slurm version in {_text(stdout)!r}")
    return tuple(int(g) for g in m.groups() if g is not None)


def slurm_version(
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[int, ...]:
    """The client's Slurm version (no RPC)."""
    res = check(runner.run(build_version_argv(), timeout=timeout, env=env))
    try:
        return parse_version(res.stdout)
    except ValueError as exc:
        raise SlurmError(str(exc), argv=res.argv, stderr=res.stderr, returncode=res.returncode) from exc


# ---------------------------------------------------------------- partitions


@dataclass(frozen=True)
class Partition:
    """One partition from ``scontrol show partition -o``."""

    name: str
    default: bool
    state: str
    max_time: str  # as printed: 02:00:00, UNLIMITED
    default_time: str | None
    nodes: str  # hostlist expression
    total_nodes: int | None
    total_cpus: int | None
    max_nodes: int | None  # None = UNLIMITED
    allow_accounts: tuple[str, ...] | None  # None = ALL
    allow_qos: tuple[str, ...] | None  # None = ALL
    qos: str | None
    tres: str
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


@dataclass(frozen=True)
class SinfoPartition:
    """One ``sinfo`` line: a partition's nodes in one state (a partition can have several lines)."""

    name: str
    default: bool
    avail: str
    time_limit: str
    num_nodes: int | None
    state: str
    nodelist: str
    gres: str  # e.g. gpu:4, gpu:a100:8(S:0-1), (null)


SINFO_SEPARATOR = "\x1f"
_SINFO_FORMAT = ("%P", "%a", "%l", "%D", "%T", "%N", "%G")


def build_sinfo_partitions_argv(separator: str = SINFO_SEPARATOR) -> list[str]:
    """``sinfo -h -o '%P<S>%a<S>%l<S>%D<S>%T<S>%N<S>%G'`` (``%P`` marks the default partition with ``*``)."""
    return ["sinfo", "-h", "-o", separator.join(_SINFO_FORMAT)]


def parse_sinfo_partitions(stdout: str | bytes, separator: str = SINFO_SEPARATOR) -> tuple[SinfoPartition, ...]:
    """Parse :func:`build_sinfo_partitions_argv` output; lines with fewer than 7 fields are dropped (extra
    trailing fields, as in a longer ``-o``, are ignored)."""
    out: list[SinfoPartition] = []
    for line in _text(stdout).splitlines():
        parts = line.split(separator)
        if len(parts) < len(_SINFO_FORMAT):
            continue
        name, avail, limit, count, state, nodelist, gres = (p.strip() for p in parts[:7])
        out.append(
            SinfoPartition(
                name=name.rstrip("*"),
                default=name.endswith("*"),
                avail=avail,
                time_limit=limit,
                num_nodes=_int_or_none(count),
                state=state,
                nodelist=nodelist,
                gres="" if gres == "(null)" else gres,
            )
        )
    return tuple(out)


def sinfo_partitions(
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[SinfoPartition, ...]:
    res = check(runner.run(build_sinfo_partitions_argv(), timeout=timeout, env=env))
    return parse_sinfo_partitions(res.stdout)


# ---------------------------------------------------------------- node states (sinfo -N)


@dataclass(frozen=True)
class NodeState:
    """One node as ``sinfo -N`` prints it: ``state`` with Slurm's suffixes (``mixed*``: not responding,
    ``idle~``: powered down, ...) and the administrator's or Slurm's ``reason`` (``Not responding``)."""

    node: str
    state: str
    reason: str = ""

    @property
    def responding(self) -> bool:
        return not self.state.endswith("*")

    @property
    def healthy(self) -> bool:
        base = self.state.rstrip("*~#!%$@^-").upper()
        return self.responding and base in ("IDLE", "MIXED", "ALLOCATED", "COMPLETING", "RESERVED", "PLANNED")


NODE_STATE_SEPARATOR = "\x1f"


def build_node_states_argv(nodes: Sequence[str], separator: str = NODE_STATE_SEPARATOR) -> list[str]:
    """``sinfo -h -N -n NODES -o '%N<S>%T<S>%E'`` (one line per node and partition)."""
    names = [_safe_token(n, "node name") for n in nodes]
    return ["sinfo", "-h", "-N", "-n", compress_nodelist(names), "-o", separator.join(("%N", "%T", "%E"))]


def parse_node_states(stdout: str | bytes, separator: str = NODE_STATE_SEPARATOR) -> tuple[NodeState, ...]:
    """One :class:`NodeState` per node (a node in several partitions is listed once)."""
    out: dict[str, NodeState] = {}
    for line in _text(stdout).splitlines():
        parts = line.split(separator)
        if len(parts) < 2 or not parts[0].strip():
            continue
        reason = parts[2].strip() if len(parts) > 2 else ""
        node = parts[0].strip()
        out.setdefault(node, NodeState(node, parts[1].strip(), "" if reason.lower() == "none" else reason))
    return tuple(out.values())


def node_states(
    runner: CommandRunner,
    nodes: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[NodeState, ...]:
    """The states of ``nodes`` (one sinfo call; none for no nodes)."""
    if not nodes:
        return ()
    res = check(runner.run(build_node_states_argv(nodes), timeout=timeout, env=env))
    return parse_node_states(res.stdout)


# ---------------------------------------------------------------- accounts / QOS (sacctmgr)


@dataclass(frozen=True)
class Associations:
    """The user's accounts and QOS. ``available=False`` (and empty tuples) when accounting is disabled or
    sacctmgr failed; ``error`` then says why."""

    available: bool
    accounts: tuple[str, ...] = ()
    qos: tuple[str, ...] = ()
    pairs: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (account, its QOS list) per association
    error: str | None = None


def build_sacctmgr_assoc_argv(user: str) -> list[str]:
    """``sacctmgr -nP show users withassoc format=account,qos where user=USER``."""
    name = _safe_token(user, "user name")
    return ["sacctmgr", "-nP", "show", "users", "withassoc", "format=account,qos", "where", f"user={name}"]


def parse_sacctmgr_assoc(stdout: str | bytes) -> Associations:
    accounts: list[str] = []
    qos: list[str] = []
    pairs: list[tuple[str, tuple[str, ...]]] = []
    for line in _text(stdout).splitlines():
        if "|" not in line:
            continue
        account, _, qos_text = line.partition("|")
        account = account.strip()
        qlist = tuple(q.strip() for q in qos_text.strip().rstrip("|").split(",") if q.strip())
        if account and account not in accounts:
            accounts.append(account)
        for q in qlist:
            if q not in qos:
                qos.append(q)
        if account:
            pairs.append((account, qlist))
    return Associations(available=True, accounts=tuple(accounts), qos=tuple(qos), pairs=tuple(pairs))


def user_associations(
    runner: CommandRunner,
    user: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Associations:
    """Accounts and QOS of ``user`` (default: the current user). Never raises a :class:`SlurmError`:
    without slurmdbd (or on any sacctmgr failure) the answer is ``available=False``."""
    name = user or getpass.getuser()
    try:
        res = check(runner.run(build_sacctmgr_assoc_argv(name), timeout=timeout, env=env))
    except SlurmError as exc:
        return Associations(available=False, error=_first_nonempty(exc.stderr) or str(exc))
    return parse_sacctmgr_assoc(res.stdout)


def _first_nonempty(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


# ---------------------------------------------------------------- final state (sacct)


@dataclass(frozen=True)
class AccountingRecord:
    job_id: str
    state: str  # normalized: CANCELLED, not "CANCELLED by 0"
    raw_state: str
    exit_code: str
    elapsed: str

    @property
    def category(self) -> StateCategory:
        return state_category(self.state)

    @property
    def elapsed_s(self) -> int | None:
        return parse_duration(self.elapsed)


SACCT_FIELDS = ("JobID", "State", "ExitCode", "Elapsed")
_NO_ACCOUNTING = re.compile(
    r"accounting storage is disabled|not running a supported accounting_storage plugin", re.IGNORECASE
)


def build_sacct_argv(job_id: str) -> list[str]:
    return ["sacct", "-j", validate_job_id(job_id), "-X", "-P", "-n", "-o", ",".join(SACCT_FIELDS)]


def parse_sacct(stdout: str | bytes) -> tuple[AccountingRecord, ...]:
    out: list[AccountingRecord] = []
    for line in _text(stdout).splitlines():
        parts = line.split("|")
        if len(parts) < len(SACCT_FIELDS) or not parts[0].strip():
            continue
        job_id, state, exit_code, elapsed = (p.strip() for p in parts[:4])
        out.append(AccountingRecord(job_id, normalize_state(state), state, exit_code, elapsed))
    return tuple(out)


def final_state(
    runner: CommandRunner,
    job_id: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> AccountingRecord | None:
    """The accounting record of a job that left the queue; ``None`` when accounting is disabled ("Slurm
    accounting storage is disabled": show "finished (state unknown)") or sacct has no record."""
    res = runner.run(build_sacct_argv(job_id), timeout=timeout, env=env)
    if _NO_ACCOUNTING.search(res.stderr):
        return None
    check(res)
    records = parse_sacct(res.stdout)
    for rec in records:
        if rec.job_id == job_id:
            return rec
    return records[0] if records else None


# ---------------------------------------------------------------- sdiag

_SDIAG_LINE = re.compile(r"^\s*(\S+)\s*\(\s*(\d+)\)\s+count:(\d+)")


def build_sdiag_argv() -> list[str]:
    return ["sdiag"]


def _sdiag_section(stdout: str | bytes, title: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    inside = False
    for line in _text(stdout).splitlines():
        if not line.strip():
            continue
        if not line[:1].isspace():
            inside = line.strip().lower().startswith(title)
            continue
        if inside:
            m = _SDIAG_LINE.match(line)
            if m:
                counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(3))
    return counts


def parse_sdiag_rpc_by_user(stdout: str | bytes) -> dict[str, int]:
    """Section "Remote Procedure Call statistics by user" -> ``{"root": 454, ...}``."""
    return _sdiag_section(stdout, "remote procedure call statistics by user")


def parse_sdiag_rpc_by_type(stdout: str | bytes) -> dict[str, int]:
    """Section "Remote Procedure Call statistics by message type" -> ``{"REQUEST_JOB_INFO": 58, ...}``."""
    return _sdiag_section(stdout, "remote procedure call statistics by message type")


def rpc_counts_by_user(
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, int]:
    res = check(runner.run(build_sdiag_argv(), timeout=timeout, env=env))
    return parse_sdiag_rpc_by_user(res.stdout)
