"""One runner for every Slurm command, the typed Slurm errors, and environment scrubbing.

Every Slurm client call in ntui goes through a :class:`CommandRunner`: :class:`SubprocessRunner` in the
app (tests pass a fake that answers from canned results). Results come back as a
:class:`CommandResult`; :func:`check` turns one into a typed :class:`SlurmError` when Slurm failed,
looking at the exit code *and* stderr (Slurm clients sometimes exit 0 after a failure).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CommandResult",
    "CommandRunner",
    "ControllerUnreachable",
    "ErrorDetails",
    "JobNotFound",
    "SlurmConfigError",
    "SlurmError",
    "SlurmNotInstalled",
    "SlurmRejected",
    "SLURM_CLIENTS",
    "TIMED_CLIENTS",
    "TIME_FORMAT_ENV",
    "SlurmTimeout",
    "SubprocessRunner",
    "TimeoutRunner",
    "check",
    "classify",
    "scrubbed_env",
    "with_standard_times",
]


@dataclass(frozen=True)
class CommandResult:
    """What one finished command produced (already decoded, invalid UTF-8 replaced)."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class CommandRunner(Protocol):
    """Runs one command (never through a shell) and returns its result; raises only
    :class:`SlurmNotInstalled` (binary missing) and :class:`SlurmTimeout` (killed after ``timeout``)."""

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        input: str | None = None,  # noqa: A002 - mirrors subprocess.run
    ) -> CommandResult: ...


# ---------------------------------------------------------------- errors


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


class ErrorDetails(TypedDict, total=False):
    """What every :class:`SlurmError` may carry besides its message (the subclasses pass them on)."""

    argv: Sequence[str]
    stderr: str
    returncode: int | None


class SlurmError(Exception):
    """A Slurm command failed. ``str()`` is a one-line human message."""

    def __init__(
        self,
        message: str,
        *,
        argv: Sequence[str] = (),
        stderr: str = "",
        returncode: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.argv: tuple[str, ...] = tuple(argv)
        self.stderr = stderr
        self.returncode = returncode

    @property
    def command(self) -> str:
        """The command as one readable string (for dialogs and logs, never for a shell)."""
        return " ".join(self.argv)

    def __str__(self) -> str:
        parts = [self.message]
        if self.argv:
            prog = os.path.basename(self.argv[0])
            rc = f", exit {self.returncode}" if self.returncode is not None else ""
            parts.append(f"[{prog}{rc}]")
        return " ".join(parts)


class SlurmNotInstalled(SlurmError):
    """The Slurm client binary was not found (not on PATH, or not under the configured bin dir)."""


class SlurmTimeout(SlurmError):
    """The command ran longer than its timeout and was killed. ``stdout``: what it had printed by then (a step
    over several nodes: the nodes that answered)."""

    def __init__(self, message: str, *, timeout: float, stdout: str = "", **details: Unpack[ErrorDetails]) -> None:
        super().__init__(message, **details)
        self.timeout = timeout
        self.stdout = stdout


class SlurmConfigError(SlurmError):
    """The Slurm client cannot read its configuration (``SLURM_CONF`` names no file, slurm.conf does not parse).
    Nothing was asked of the controller: waiting longer or retrying does not help."""


class ControllerUnreachable(SlurmError):
    """slurmctld could not be reached or did not answer (socket timeout, connection refused, ...)."""


class SlurmRejected(SlurmError):
    """Slurm understood the request and refused it. ``reason`` is Slurm's own text."""

    def __init__(self, message: str, *, reason: str, **details: Unpack[ErrorDetails]) -> None:
        super().__init__(message, **details)
        self.reason = reason


class JobNotFound(SlurmRejected):
    """The job ID is unknown to slurmctld ("Invalid job id specified"): never existed or already purged."""


# ---------------------------------------------------------------- classification
#
# How check() classifies a result (first match wins; patterns are searched in stderr, case-insensitive):
#
# 0. SlurmConfigError, whatever the exit code: the client could not read slurm.conf ("s_p_parse_file: cannot
#    stat file /x: No such file or directory", "Parse error in file", "Unable to process configuration file").
#    The client then retries for a minute: :class:`SubprocessRunner` checks ``SLURM_CONF`` before running and
#    classifies the stderr of a command it had to kill, so this is reported, not a timeout.
# 1. ControllerUnreachable, whatever the exit code: "Unable to contact slurm controller",
#    "Socket timed out", "Connection refused", "Connection timed out", "Zero Bytes were transmitted",
#    "Transport endpoint is not connected", "Communication connection failure", "Slurm backup controller
#    in standby mode", "Unable to establish/…a configuration source" (no slurm.conf). Note sbatch reports
#    these as "Batch job submission failed: Unable to contact slurm controller", which is *not* a rejection.
# 2. JobNotFound, whatever the exit code: "Invalid job id specified" / "Invalid job id".
# 3. SlurmRejected, whatever the exit code: "Batch job submission failed: <reason>",
#    "allocation failure: <reason>", and (rc 0 too, observed on 22.05.8: squeue drops the field and exits 0)
#    "Invalid job format specification: <field>" / "Invalid ... specification".
# 4. ControllerUnreachable, whatever the exit code: any other "slurm_load_<x> error: <text>" /
#    "slurm_load_<x>: <text>" / "slurm_get_statistics: <text>" (the client could not load the data).
# 5. Exit code 0: everything else on stderr is harmless (warnings, "sbatch: Job N to start at ..." from
#    --test-only, job_submit plugin messages, config-parse "error:" noise from a newer slurm.conf), except a
#    "fatal:" line, which raises SlurmError.
# 6. Exit code != 0: SlurmRejected with the text after the last "error: " (or the first stderr line) as
#    reason when stderr says anything; a bare SlurmError otherwise.

_UNREACHABLE = re.compile(
    r"unable to contact slurm controller|socket timed out|connection refused|connection timed out"
    r"|zero bytes were transmitted|transport endpoint is not connected|communication connection failure"
    r"|backup controller in standby mode|could not establish a configuration source"
    r"|failed to fetch config",
    re.IGNORECASE,
)
_CONFIG = re.compile(
    r"cannot stat file|s_p_parse_file|parse error in file|unable to process configuration file",
    re.IGNORECASE,
)
_NOT_FOUND = re.compile(r"invalid job id(?: specified)?", re.IGNORECASE)
_REJECT_PREFIX = re.compile(r"(?:batch job submission failed|allocation failure):\s*(?P<reason>.*)", re.IGNORECASE)
_BAD_SPEC = re.compile(r"invalid [\w ]*specification:?\s*.*", re.IGNORECASE)
_LOAD_ERROR = re.compile(r"(?:slurm_load_\w+|slurm_get_statistics)(?: error)?:\s*(?P<reason>.*)", re.IGNORECASE)
_FATAL = re.compile(r"(?:^|\s)fatal:\s*(?P<reason>.*)", re.IGNORECASE)
_ERROR_TEXT = re.compile(r"error:\s*(?P<reason>.*)", re.IGNORECASE)


def _matching_line(pattern: re.Pattern[str], text: str) -> tuple[str, re.Match[str]] | None:
    for line in text.splitlines():
        m = pattern.search(line)
        if m:
            return line.strip(), m
    return None


#: The Slurm clients (the programs that read slurm.conf).
SLURM_CLIENTS = frozenset({"sbatch", "squeue", "scontrol", "scancel", "sacct", "sacctmgr", "sinfo", "sdiag",
                            "srun", "salloc", "sprio", "sshare", "sstat", "sreport"})
#: The clients whose printed times ntui reads, and the time format they are asked for: Slurm's standard
#: ``YYYY-MM-DDTHH:MM:SS``, whatever the user's ``SLURM_TIME_FORMAT`` (``relative``, ``%F %T``) says. Not sbatch,
#: srun or salloc: their environment becomes the job's, which keeps the user's own.
TIME_FORMAT_ENV = ("SLURM_TIME_FORMAT", "standard")
TIMED_CLIENTS = SLURM_CLIENTS - {"sbatch", "srun", "salloc"}


def with_standard_times(program: str, env: Mapping[str, str] | None) -> dict[str, str] | None:
    """The environment for ``program``: for a client of :data:`TIMED_CLIENTS`, ``env`` (default: this process's)
    with Slurm's standard time format; else ``env`` as given (None: inherited)."""
    if os.path.basename(program) not in TIMED_CLIENTS:
        return dict(env) if env is not None else None
    name, value = TIME_FORMAT_ENV
    return {**(os.environ if env is None else env), name: value}


def _strip_retry(line: str) -> str:
    """Slurm's line without its ", retrying in 1sec up to 60sec" tail."""
    return re.sub(r",\s*retrying in .*$", "", line).strip()


def config_source_problem(argv: Sequence[str], env: Mapping[str, str] | None) -> SlurmConfigError | None:
    """The configuration source is checked before a Slurm command runs: a ``SLURM_CONF`` that names no file
    makes every client retry for a minute before it fails (Slurm 22.05), so it is reported at once, in the
    words Slurm would use."""
    if not argv or os.path.basename(argv[0]) not in SLURM_CLIENTS:
        return None
    conf = (os.environ if env is None else env).get("SLURM_CONF")
    if not conf or os.path.isfile(conf):
        return None
    try:
        os.stat(conf)
        reason = "not a regular file"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    return SlurmConfigError(f"Slurm cannot read its configuration: s_p_parse_file: cannot stat file {conf}: {reason}"
                            f" (SLURM_CONF={conf})", argv=tuple(argv))


def classify(res: CommandResult) -> SlurmError | None:
    """The typed error ``res`` stands for, or ``None`` when it succeeded (see the table above)."""
    err = res.stderr

    def plain(cls: type[SlurmError], message: str) -> SlurmError:
        return cls(message, argv=res.argv, stderr=err, returncode=res.returncode)

    def rejected(cls: type[SlurmRejected], prefix: str, reason: str) -> SlurmRejected:
        return cls(f"{prefix}: {reason}", reason=reason, argv=res.argv, stderr=err, returncode=res.returncode)

    hit = _matching_line(_CONFIG, err)
    if hit:
        return plain(SlurmConfigError, f"Slurm cannot read its configuration: {_strip_retry(hit[0])}")
    hit = _matching_line(_UNREACHABLE, err)
    if hit:
        return plain(ControllerUnreachable, f"Slurm controller unreachable: {hit[0]}")
    hit = _matching_line(_NOT_FOUND, err)
    if hit:
        return rejected(JobNotFound, "Job not found", hit[1].group(0))
    hit = _matching_line(_REJECT_PREFIX, err)
    if hit:
        return rejected(SlurmRejected, "Slurm rejected the request", hit[1].group("reason").strip() or hit[0])
    hit = _matching_line(_BAD_SPEC, err)
    if hit:
        return rejected(SlurmRejected, "Slurm rejected the arguments", hit[1].group(0).strip())
    hit = _matching_line(_LOAD_ERROR, err)
    if hit:
        detail = hit[1].group("reason").strip() or hit[0]
        return plain(ControllerUnreachable, f"Slurm could not load data: {detail}")
    if res.returncode == 0:
        hit = _matching_line(_FATAL, err)
        return plain(SlurmError, f"Slurm command failed: {hit[0]}") if hit else None
    reason = ""
    for line in err.splitlines():
        m = _ERROR_TEXT.search(line)
        if m and m.group("reason").strip():
            reason = m.group("reason").strip()
    reason = reason or _first_line(err)
    if reason:
        return rejected(SlurmRejected, "Slurm refused", reason)
    prog = os.path.basename(res.argv[0]) if res.argv else "command"
    return plain(SlurmError, f"{prog} failed with exit code {res.returncode}")


def check(res: CommandResult) -> CommandResult:
    """Return ``res`` unchanged when it succeeded; raise the matching :class:`SlurmError` otherwise."""
    err = classify(res)
    if err is not None:
        raise err
    return res


# ---------------------------------------------------------------- environment

_SCRUB_INSIDE = ("SLURM_", "SBATCH_", "SRUN_")
_KEEP = frozenset({"SLURM_CONF"})


def scrubbed_env(environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The environment to hand to Slurm commands, and the sorted names removed (the caller warns).

    * ``SBATCH_*`` are always removed: they silently override the script's ``#SBATCH`` directives.
    * Inside an allocation (``SLURM_JOB_ID`` set), every ``SLURM_*``, ``SBATCH_*`` and ``SRUN_*`` is removed
      too, or the new job inherits the outer job's geometry.
    * ``SLURM_CONF`` is always kept (it is how the client finds the cluster).
    """
    inside = bool(environ.get("SLURM_JOB_ID"))
    prefixes = _SCRUB_INSIDE if inside else ("SBATCH_",)
    kept: dict[str, str] = {}
    removed: list[str] = []
    for name, value in environ.items():
        if name not in _KEEP and name.startswith(prefixes):
            removed.append(name)
        else:
            kept[name] = value
    return kept, sorted(removed)


# ---------------------------------------------------------------- the real runner


def slurm_env(environ: Mapping[str, str] | None = None) -> tuple[dict[str, str], tuple[str, ...]]:
    """The environment for Slurm's clients (sbatch above all), plus warnings naming what was scrubbed (E1, E2)."""
    env, removed = scrubbed_env(os.environ if environ is None else environ)
    if not removed:
        return env, ()
    inside = "inside an allocation: " if (environ or os.environ).get("SLURM_JOB_ID") else ""
    return env, (f"{inside}removed {', '.join(removed)} from sbatch's environment (they override the script)",)


def _decode(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")


class SubprocessRunner:
    """Runs commands with :mod:`subprocess` (no shell), in their own session so that a timeout kills the
    whole process group (site wrappers around sbatch included). Thread-safe; ``calls`` counts every
    attempted command, for the UI's RPC counter."""

    def __init__(self, slurm_bin_dir: str | os.PathLike[str] | None = None) -> None:
        self.slurm_bin_dir = Path(slurm_bin_dir) if slurm_bin_dir else None
        self._calls = 0
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        return self._calls

    def resolve(self, program: str) -> str:
        """``program`` under ``slurm_bin_dir`` when set and present there; else ``program`` (PATH lookup)."""
        if self.slurm_bin_dir is not None and os.sep not in program:
            candidate = self.slurm_bin_dir / program
            if candidate.exists():
                return str(candidate)
        return program

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        input: str | None = None,  # noqa: A002
    ) -> CommandResult:
        if not argv:
            raise ValueError("empty argv")
        problem = config_source_problem(argv, env)
        if problem is not None:
            raise problem
        args = [self.resolve(argv[0]), *argv[1:]]
        with self._lock:
            self._calls += 1
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=with_standard_times(args[0], env),
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            where = f" under {self.slurm_bin_dir} or" if self.slurm_bin_dir else ""
            raise SlurmNotInstalled(
                f"{argv[0]} not found{where} on PATH: is the Slurm client installed?",
                argv=tuple(args),
                stderr=str(exc),
            ) from exc
        try:
            out, err = proc.communicate(input.encode() if input is not None else None, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            _kill_group(proc)
            try:
                out, err = proc.communicate(timeout=2)
            except subprocess.TimeoutExpired:
                out, err = exc.stdout or b"", exc.stderr or b""
            hit = _matching_line(_CONFIG, _decode(err))
            if hit:  # it was retrying to read slurm.conf, not waiting for the controller
                raise SlurmConfigError(f"Slurm cannot read its configuration: {_strip_retry(hit[0])}",
                                       argv=tuple(args), stderr=_decode(err)) from None
            raise SlurmTimeout(
                f"{os.path.basename(argv[0])} did not answer within {timeout:g} s",
                timeout=timeout,
                stdout=_decode(out),
                argv=tuple(args),
                stderr=_decode(err),
            ) from None
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        return CommandResult(
            argv=tuple(args),
            returncode=proc.returncode,
            stdout=_decode(out),
            stderr=_decode(err),
            duration_s=time.monotonic() - start,
        )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


class TimeoutRunner:
    """Runs every command of ``inner`` with the configured timeout instead of its caller's: ``submit`` for
    sbatch (which retries by itself while slurmctld is busy), ``query`` for every other Slurm client; an ``srun``
    step (work on the nodes, bounded by its caller) gets its caller's, never less than ``query``."""

    def __init__(self, inner: CommandRunner, *, query: float, submit: float) -> None:
        self.inner = inner
        self.query = query
        self.submit = submit

    def timeout_for(self, argv: Sequence[str], asked: float | None = None) -> float:
        prog = os.path.basename(argv[0]) if argv else ""
        if prog == "srun" and asked is not None:
            return max(asked, self.query)
        return self.submit if prog == "sbatch" else self.query

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        input: str | None = None,  # noqa: A002 - mirrors CommandRunner
    ) -> CommandResult:
        return self.inner.run(argv, timeout=self.timeout_for(argv, timeout), env=env, input=input)
