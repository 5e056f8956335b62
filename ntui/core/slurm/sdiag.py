"""``sdiag``: slurmctld RPC counts (how much load ntui puts on the controller)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    _text,
)
from ntui.core.slurm.runner import (
    CommandRunner,
    check,
)

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
