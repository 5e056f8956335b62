"""The installed Slurm's version (``sinfo --version``: local, no RPC), asked once per process and bin dir, and
what ntui does differently by version.

Output that changed between releases is parsed in a way that fits every version where the text itself tells
(``--test-only``'s start line, ``ReqTRES=`` vs ``TRES=``, ``gres/gpu`` vs ``gres:gpu``, ...). Where the text
is the same but its meaning changed, the version decides; each such rule is a function here, with the
release that changed it:

* :func:`sacct_subtracts_128`: sacct before 25.11 printed an ``ExitCode`` of 128 or more with 128 taken off
  (``exit 130`` read ``2:0``); from 25.11 on it prints the status as it is (``130:0``, as scontrol always did).

docs/reliability.md lists every difference found between the tested versions and how ntui handles it.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

from ntui.core.slurm.common import DEFAULT_TIMEOUT, _text
from ntui.core.slurm.runner import CommandRunner, SlurmError, SubprocessRunner, check

__all__ = [
    "SACCT_KEEPS_HIGH_EXIT_CODES",
    "SlurmVersion",
    "build_version_argv",
    "forget_versions",
    "installed_version",
    "parse_version",
    "sacct_subtracts_128",
    "slurm_version",
]

#: From this release on, sacct prints exit codes of 128 and more as they are (CHANGELOG 25.11.0rc1: "Don't
#: subtract 128 from sacct returned exit codes for the codes above 128").
SACCT_KEEPS_HIGH_EXIT_CODES = (25, 11)


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
    """The client's Slurm version (no RPC), asked every time; :func:`installed_version` asks once."""
    res = check(runner.run(build_version_argv(), timeout=timeout, env=env))
    try:
        return parse_version(res.stdout)
    except ValueError as exc:
        raise SlurmError(str(exc), argv=res.argv, stderr=res.stderr, returncode=res.returncode) from exc


@dataclass(frozen=True, order=True)
class SlurmVersion:
    """A Slurm release, compared as numbers: ``SlurmVersion((26, 5, 5)) >= (25, 11)``. ``str()`` is Slurm's
    own spelling, ``26.05.5``."""

    parts: tuple[int, ...]

    def __str__(self) -> str:
        major, *rest = self.parts or (0,)
        return ".".join([str(major), *(f"{p:02d}" if i == 0 else str(p) for i, p in enumerate(rest))])

    def at_least(self, release: tuple[int, ...]) -> bool:
        return self.parts >= tuple(release)


def sacct_subtracts_128(version: SlurmVersion | None) -> bool:
    """Whether this sacct prints an exit code of 128 or more with 128 taken off (before 25.11). An unknown
    version is taken as a current one: its codes are read as printed."""
    return version is not None and not version.at_least(SACCT_KEEPS_HIGH_EXIT_CODES)


# ---------------------------------------------------------------- asked once

_lock = threading.Lock()
#: (bin dir, PATH) -> version, for runners that run the real clients (they say their bin dir)
_by_place: dict[tuple[str, str], SlurmVersion] = {}
#: runner -> version (None: it could not say), for any other runner (a test's fake: each its own answers)
_by_runner: weakref.WeakKeyDictionary[object, SlurmVersion | None] = weakref.WeakKeyDictionary()
_NO_BIN_DIR = object()


def _place(runner: CommandRunner, env: Mapping[str, str] | None) -> tuple[str, str] | None:
    """Where the clients come from: the bin dir of the runner that runs them (``slurm_bin_dir``, ``None`` =
    PATH; wrapping runners say theirs as ``inner``) and the PATH they are looked up on; ``None`` when the
    runner does not say (not a real one)."""
    for _ in range(8):
        inner = getattr(runner, "inner", None)
        if inner is None:
            break
        runner = inner
    bin_dir = getattr(runner, "slurm_bin_dir", _NO_BIN_DIR)
    if bin_dir is _NO_BIN_DIR:
        return None
    path = (os.environ if env is None else env).get("PATH", "")
    return (str(bin_dir) if bin_dir is not None else "", path)


def installed_version(
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> SlurmVersion | None:
    """The Slurm version ``runner``'s clients are (``sinfo --version``, local), asked once per process and
    bin dir; ``None`` when it cannot be told (no sinfo, no configuration): callers then read output as the
    current Slurm prints it.

    For a real runner the question goes to a runner of its own under the same bin dir: it is no RPC, so it
    is not one of the Slurm calls the app counts, and a failure is not remembered (sinfo may answer next
    time). Any other runner (a test's fake) is asked itself, once, failure included."""
    place = _place(runner, env)
    with _lock:
        if place is not None and place in _by_place:
            return _by_place[place]
        if place is None and runner in _by_runner:
            return _by_runner[runner]
    asked: CommandRunner = runner if place is None else SubprocessRunner(place[0] or None)
    try:
        found: SlurmVersion | None = SlurmVersion(slurm_version(asked, env=env, timeout=timeout))
    except Exception:  # a version is an extra: every caller works without one
        found = None
    with _lock:
        if place is not None:
            if found is not None:
                _by_place[place] = found
        else:
            with contextlib.suppress(TypeError):  # not weakly referable: asked again next time
                _by_runner[runner] = found
    return found


def forget_versions() -> None:
    """Forget every version asked so far (tests; a process whose clients were replaced)."""
    with _lock:
        _by_place.clear()
        _by_runner.clear()
