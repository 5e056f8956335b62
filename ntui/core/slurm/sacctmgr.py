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
