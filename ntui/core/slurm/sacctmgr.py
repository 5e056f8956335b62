"""``sacctmgr``: the user's accounts and QOS (slurmdbd; absent without accounting)."""

from __future__ import annotations

import getpass
from collections.abc import Mapping
from dataclasses import dataclass

from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    _safe_token,
    _text,
)
from ntui.core.slurm.runner import (
    CommandRunner,
    SlurmError,
    check,
)

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


# ---------------------------------------------------------------- QOS and association limits (sacctmgr)

#: sacctmgr's format field -> the limit's name as the docs and ``scontrol`` spell it. The QOS's first, then the
#: association's (an association has no per-user or per-account split: its ``MaxJobs`` is the user's).
QOS_LIMITS: tuple[tuple[str, str], ...] = (
    ("maxjobspu", "MaxJobsPerUser"), ("maxsubmitpu", "MaxSubmitJobsPerUser"), ("maxtrespu", "MaxTRESPerUser"),
    ("maxjobspa", "MaxJobsPerAccount"), ("maxtrespa", "MaxTRESPerAccount"), ("maxtres", "MaxTRESPerJob"),
    ("maxtrespernode", "MaxTRESPerNode"), ("maxtresmins", "MaxTRESMinsPerJob"), ("maxwall", "MaxWall"),
    ("grpjobs", "GrpJobs"), ("grpsubmit", "GrpSubmitJobs"), ("grptres", "GrpTRES"), ("grptresmins", "GrpTRESMins"),
    ("grptresrunmins", "GrpTRESRunMins"), ("grpwall", "GrpWall"), ("mintres", "MinTRESPerJob"),
)
ASSOC_LIMITS: tuple[tuple[str, str], ...] = (
    ("maxjobs", "MaxJobs"), ("maxsubmit", "MaxSubmitJobs"), ("maxtres", "MaxTRESPerJob"),
    ("maxtrespernode", "MaxTRESPerNode"), ("maxtresmins", "MaxTRESMinsPerJob"), ("maxwall", "MaxWall"),
    ("grpjobs", "GrpJobs"), ("grpsubmit", "GrpSubmitJobs"), ("grptres", "GrpTRES"), ("grptresmins", "GrpTRESMins"),
    ("grptresrunmins", "GrpTRESRunMins"), ("grpwall", "GrpWall"),
)


@dataclass(frozen=True)
class Limits:
    """The limits set on one QOS or association (unset ones left out), in :data:`QOS_LIMITS` /
    :data:`ASSOC_LIMITS` order. ``owner`` names it for people: ``QOS normal``, ``association ntuidev/root``."""

    owner: str
    values: tuple[tuple[str, str], ...] = ()

    def get(self, name: str) -> str | None:
        return next((v for k, v in self.values if k == name), None)


def build_qos_limits_argv(qos: str) -> list[str]:
    """``sacctmgr -nP show qos where name=QOS format=name,<QOS_LIMITS>``."""
    name = _safe_token(qos, "QOS name")
    return ["sacctmgr", "-nP", "show", "qos", "where", f"name={name}",
            "format=name," + ",".join(f for f, _ in QOS_LIMITS)]


def build_assoc_limits_argv(user: str, account: str | None = None) -> list[str]:
    """``sacctmgr -nP show assoc where user=USER [account=A] format=account,partition,<ASSOC_LIMITS>``."""
    where = [f"user={_safe_token(user, 'user name')}"]
    if account:
        where.append(f"account={_safe_token(account, 'account')}")
    return ["sacctmgr", "-nP", "show", "assoc", "where", *where,
            "format=account,partition," + ",".join(f for f, _ in ASSOC_LIMITS)]


def _limits(owner: str, names: tuple[tuple[str, str], ...], cells: list[str]) -> Limits:
    return Limits(owner, tuple((label, cell.strip()) for (_, label), cell in zip(names, cells, strict=False)
                               if cell.strip()))


def parse_qos_limits(stdout: str | bytes) -> tuple[Limits, ...]:
    out = []
    for line in _text(stdout).splitlines():
        cells = line.split("|")
        if len(cells) >= 1 + len(QOS_LIMITS) and cells[0].strip():
            out.append(_limits(f"QOS {cells[0].strip()}", QOS_LIMITS, cells[1:]))
    return tuple(out)


def parse_assoc_limits(stdout: str | bytes, user: str = "") -> tuple[Limits, ...]:
    """One :class:`Limits` per association line (the user's line of each account, and its partitions)."""
    out = []
    for line in _text(stdout).splitlines():
        cells = line.split("|")
        if len(cells) >= 2 + len(ASSOC_LIMITS) and cells[0].strip():
            where = "/".join(x for x in (cells[0].strip(), user, cells[1].strip()) if x)
            out.append(_limits(f"association {where}", ASSOC_LIMITS, cells[2:]))
    return tuple(out)


def qos_limits(
    runner: CommandRunner,
    qos: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Limits | None:
    """The limits of one QOS (slurmdbd, no slurmctld RPC); None when accounting is off, the QOS is unknown or
    sacctmgr failed (the why then says the limit's name only)."""
    try:
        res = check(runner.run(build_qos_limits_argv(qos), timeout=timeout, env=env))
    except (SlurmError, ValueError):
        return None
    found = parse_qos_limits(res.stdout)
    return found[0] if found else None


def assoc_limits(
    runner: CommandRunner,
    account: str | None = None,
    user: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[Limits, ...]:
    """The limits of the user's associations (of ``account`` when given); () without accounting or on failure."""
    name = user or getpass.getuser()
    try:
        res = check(runner.run(build_assoc_limits_argv(name, account), timeout=timeout, env=env))
    except (SlurmError, ValueError):
        return ()
    return parse_assoc_limits(res.stdout, name)
