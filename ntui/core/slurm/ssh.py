"""Slurm on another machine: every command through the user's own OpenSSH, one multiplexed master per host.

:class:`SshRunner` is a :class:`~ntui.core.slurm.runner.CommandRunner`: the Slurm clients are built and parsed as
on a login node; only the transport differs. Each call is one ``ssh`` process::

    ssh [-F CONFIG] -o ControlMaster=auto -o ControlPath=DIR/%C -o ControlPersist=N -o BatchMode=yes
        -o LogLevel=ERROR -o ServerAliveInterval=15 -o ServerAliveCountMax=3 HOST -- REMOTE-COMMAND

The first call opens the master (the one login: keys, certificates, ProxyJump and MFA are ssh's business, read
from the user's ``~/.ssh/config``); every later call is a channel over it until the master has been idle for
``ControlPersist`` seconds. ``BatchMode=yes``: ntui never asks for a password; a login that would need one fails
at once and is said in words (:class:`SshError`).

The remote command: ssh hands one string to the user's login shell on the cluster, so every argv is quoted for it
(:func:`remote_command`). ``shlex.join`` quotes for POSIX shells; a word holding a character that csh, tcsh or fish
read differently inside single quotes (a backslash, a newline, ``!``, a control character) sends the whole
command base64-encoded instead, decoded and run by ``/bin/sh`` on the far side: no value can become a command,
whatever the login shell.

Errors of ssh itself (exit 255 with ssh's own words: unreachable, refused, host key, expired certificate, the link
dropped; or 255 without a word while the master is gone) raise :class:`SshError`, whose words say what to run
(the cluster's ``renew`` command, e.g. ``sshproxy``, with a refused or expired login); the remote command's own
exit codes are kept in the result, as a local run's.

The client's version (``sinfo --version``: read from the installed files, no RPC) costs no channel of its own:
the first Slurm query of a runner asks it in the same remote command (:data:`_WITH_VERSION`, a fixed script whose
every value is a positional argument), and the runner answers ``sinfo --version`` from what it said.

When the link drops, a command that only reads (:func:`repeatable`) is asked again after a :class:`Backoff` wait:
ssh finds the dead master's socket refused and logs in afresh (``ControlMaster=auto``). An action is never
repeated (its answer lost, it may have been done); long-lived channels (the agent of :mod:`ntui.core.remote`) are
opened with :meth:`SshRunner.open_channel`.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import secrets
import shlex
import stat
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ntui.core.slurm.runner import (
    SLURM_CLIENTS,
    TIME_FORMAT_ENV,
    TIMED_CLIENTS,
    CommandResult,
    SlurmError,
    SlurmNotInstalled,
    SlurmTimeout,
    SubprocessRunner,
)

__all__ = [
    "CONTROL_PERSIST_S",
    "LINK_WORDS",
    "Backoff",
    "repeatable",
    "MAX_SOCKET_DIR",
    "SshError",
    "SshRunner",
    "VERSION_ARGV",
    "build_control_argv",
    "build_ssh_argv",
    "classify_ssh",
    "control_dir",
    "kept_terminal",
    "remote_command",
    "split_version",
    "valid_host",
]

#: Seconds the master stays up after its last channel closed (ssh's ``ControlPersist``).
CONTROL_PERSIST_S = 600
#: ssh's exit status for its own errors (the remote command's own status is passed through otherwise).
SSH_FAILED = 255
#: The longest socket directory: a Unix socket path holds at most 104 bytes (macOS; 108 on Linux), and ssh binds
#: ``DIR/%C`` (40 hex digits) plus a ``.XXXXXXXXXXXXXXXX`` suffix while the master starts.
MAX_SOCKET_DIR = 104 - 1 - 40 - 17 - 1

_HOST_RE = re.compile(r"[A-Za-z0-9_.@%:\[\]-]+")


def valid_host(host: str) -> bool:
    """A host of the user's ssh config (an alias, ``user@name``, ``name``): never an option (``-o...``) nor a
    word with spaces, quotes or control characters."""
    return bool(host) and not host.startswith("-") and _HOST_RE.fullmatch(host) is not None


# ---------------------------------------------------------------- the remote command

#: Characters every common login shell (sh, bash, dash, zsh, ksh, csh, tcsh, fish) reads literally inside
#: ``shlex.quote``'s single quotes, or unquoted when shlex leaves the word bare.
_PORTABLE = re.compile(r"[ -~]*")  # printable ASCII
_NOT_PORTABLE = frozenset("\\!")


def _portable(word: str) -> bool:
    return _PORTABLE.fullmatch(word) is not None and not (_NOT_PORTABLE & set(word))


def remote_command(argv: Sequence[str]) -> str:
    """The one string ssh sends to the login shell for ``argv``: each word arrives verbatim as one word.

    ``shlex.join(argv)`` when every word is portable (the command stays readable in ``ps`` and in errors); else
    ``exec /bin/sh -c 'eval "$(printf %s "$0" | base64 -d)"' B64``: the login shell sees only that fixed text and
    base64's alphabet, and ``/bin/sh`` evaluates the ``shlex.join`` text it decodes."""
    if not argv:
        raise ValueError("empty argv")
    joined = shlex.join(argv)
    if all(_portable(w) for w in argv):
        return joined
    encoded = base64.b64encode(joined.encode("utf-8")).decode("ascii")
    return f"exec /bin/sh -c 'eval \"$(printf %s \"$0\" | base64 -d)\"' {encoded}"


# ---------------------------------------------------------------- argv builders


def _options(control_path: str, *, persist_s: int, config_file: str | None) -> list[str]:
    opts = ["-F", config_file] if config_file else []
    return [*opts, "-o", "ControlMaster=auto", "-o", f"ControlPath={control_path}",
            "-o", f"ControlPersist={persist_s}", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
            "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"]


def build_ssh_argv(host: str, remote_argv: Sequence[str], *, control_path: str, persist_s: int = CONTROL_PERSIST_S,
                   config_file: str | None = None, ssh: str = "ssh", terminal: bool = False) -> list[str]:
    """``ssh OPTIONS [-t] HOST -- REMOTE-COMMAND`` (the command quoted by :func:`remote_command`); ``terminal``:
    ``-t``, a terminal on the cluster for the command, this process's own handed to it."""
    if not valid_host(host):
        raise ValueError(f"not an ssh host: {host!r}")
    return [ssh, *_options(control_path, persist_s=persist_s, config_file=config_file), *(["-t"] if terminal else []),
            host, "--", remote_command(remote_argv)]


def build_control_argv(host: str, operation: str, *, control_path: str, config_file: str | None = None,
                       ssh: str = "ssh") -> list[str]:
    """``ssh -O check|exit HOST``: ask the master of ``host`` (no login; exit 255 when there is none)."""
    if operation not in ("check", "exit", "stop"):
        raise ValueError(f"not a master operation: {operation!r}")
    if not valid_host(host):
        raise ValueError(f"not an ssh host: {host!r}")
    opts = ["-F", config_file] if config_file else []
    return [ssh, *opts, "-o", f"ControlPath={control_path}", "-o", "BatchMode=yes", "-O", operation, host]


# ---------------------------------------------------------------- the socket directory


def control_dir(environ: Mapping[str, str] | None = None, *, uid: int | None = None) -> Path:
    """Where the masters' sockets live: ``$XDG_RUNTIME_DIR/ntui-ssh`` (per user, private, short), else
    ``/tmp/ntui-ssh-UID``; the first of them short enough for a socket path (:data:`MAX_SOCKET_DIR`)."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "")
    owner = os.getuid() if uid is None else uid
    if runtime and os.path.isabs(runtime):
        candidate = Path(runtime) / "ntui-ssh"
        if len(str(candidate)) <= MAX_SOCKET_DIR:
            return candidate
    return Path(f"/tmp/ntui-ssh-{owner}")


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` 0700, or accept it only when it is a real directory of this user that nobody else can
    use (a directory in ``/tmp`` may have been made by another user first). ``SlurmError`` otherwise."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise SlurmError(f"cannot create ntui's ssh socket directory {path}: {exc.strerror or exc}") from exc
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise SlurmError(f"ntui's ssh socket directory {path} is not a directory of yours: remove it, or set "
                         "XDG_RUNTIME_DIR")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, 0o700)


# ---------------------------------------------------------------- ssh's own errors

#: ssh's own words (exit 255) -> what they mean, first match wins; searched case-insensitively in stderr.
_SSH_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), w) for p, w in (
    (r"certificate.*expired|expired.*certificate|certificate invalid",
     "your ssh certificate has expired: renew it (e.g. sshproxy) and retry"),
    (r"host key verification failed|remote host identification has changed|no .*host key is known",
     "the host key is unknown or changed: run `ssh {host}` once yourself and check it"),
    (r"permission denied|too many authentication failures|authentication failed|no more authentication methods",
     "the login was refused (ntui never asks for a password): log in once with `ssh {host}`, or renew your "
     "key or certificate, then retry"),
    (r"could not resolve hostname|name or service not known|nodename nor servname",
     "the host name is unknown: check `ssh {host}` and your ~/.ssh/config"),
    (r"connection refused|no route to host|network is unreachable|connection timed out|operation timed out"
     r"|connect to host",
     "the host is unreachable"),
    (r"connection closed|connection reset|closed by remote host|broken pipe|kex_exchange_identification"
     r"|banner exchange|client_loop|lost connection|timeout, server .* not responding",
     "the connection dropped"),
    (r"control ?socket|controlpath|mux_client|master",
     "the shared ssh connection failed"),
    (r"^ssh: |bad configuration option|unsupported option|proxyjump|stdio forwarding failed|channel \d+: open failed",
     "ssh failed"),
))


class SshError(SlurmError):
    """ssh itself failed (exit 255): the command never ran on the cluster, or the link broke under it. ``words``
    says what happened and what to do; ``host``: the ssh host."""

    def __init__(self, message: str, *, host: str, words: str, argv: Sequence[str] = (), stderr: str = "",
                 returncode: int | None = SSH_FAILED) -> None:
        super().__init__(message, argv=argv, stderr=stderr, returncode=returncode)
        self.host = host
        self.words = words

    @property
    def link_down(self) -> bool:
        """The link failed (dropped, unreachable, the master gone), not the login: it may come back by itself."""
        return self.words.startswith(LINK_WORDS)


class Backoff:
    """The waits between attempts to reopen a link: ``first`` seconds, doubled each time up to ``cap``;
    :meth:`reset` once an attempt succeeded."""

    def __init__(self, first: float = 1.0, cap: float = 60.0) -> None:
        self.first = first
        self.cap = cap
        self._next = first

    def delay(self) -> float:
        """The wait before the next attempt (and the one after it doubled)."""
        d = self._next
        self._next = min(self.cap, self._next * 2)
        return d

    def reset(self) -> None:
        self._next = self.first


#: Commands that only read, asked again after a dropped link (sbatch, scancel and every action never are: their
#: answer lost, they may have been done).
_REPEATABLE = frozenset({"squeue", "sinfo", "sacct", "sdiag", "sprio", "true", "stat", "cat", "head", "tail",
                         "ls", "find"})


def repeatable(argv: Sequence[str]) -> bool:
    """Whether ``argv`` only reads, so that asking it again after a lost answer changes nothing."""
    if not argv:
        return False
    prog = os.path.basename(argv[0])
    if prog == "scontrol":
        return len(argv) > 1 and argv[1] in ("show", "-o", "--oneliner") and "update" not in argv
    if prog == "sacctmgr":
        return any(w in ("show", "list") for w in argv[1:3])
    return prog in _REPEATABLE


#: The words of a login that needs a fresh key or certificate: the cluster's ``renew`` hint is added to them.
_RENEWABLE = ("your ssh certificate has expired", "the login was refused")
#: The words of a link that may come back by itself: a query is asked again, a follow resumes, after a backoff.
LINK_WORDS = ("the connection dropped", "the host is unreachable", "the shared ssh connection failed")


def classify_ssh(host: str, returncode: int, stderr: str, *, argv: Sequence[str] = (),
                 renew: str | None = None) -> SshError | None:
    """The :class:`SshError` a finished ssh call stands for: exit 255 with ssh's own words on stderr. Exit 255
    with none of them is the remote command's own status (kept, like every other). ``renew``: the command that
    renews the user's key or certificate for this cluster (e.g. ``sshproxy -u NAME``), said with an expired or
    refused login."""
    if returncode != SSH_FAILED:
        return None
    for line in stderr.splitlines():
        text = line.strip()
        for pattern, words in _SSH_WORDS:
            if text and pattern.search(text):
                said = words.format(host=host)
                if renew and said.startswith(_RENEWABLE):
                    said = f"{said}; to renew it here: {renew}"
                return SshError(f"ssh to {host}: {said} (ssh: {text})", host=host, words=said, argv=argv,
                                stderr=stderr)
    return None


# ---------------------------------------------------------------- a stream read here


#: ``sh -c`` script around a long-lived command whose output is read here (``ntui gpus``' step): its output is
#: relayed line by line through a FIFO; once a line cannot be written (this side went away: the channel closed), the
#: command gets SIGTERM (srun then ends its step) instead of living on unread. Fixed text; the command is "$@".
_RELAY = ('d=$(mktemp -d) || exit 1; mkfifo "$d/o" || { rmdir "$d"; exit 1; }; "$@" >"$d/o" & p=$!; '
          "trap '' PIPE; "
          'while IFS= read -r l; do printf "%s\\n" "$l" || { kill -TERM "$p"; break; }; done <"$d/o"; '
          'rm -rf "$d"; wait "$p"')


# ---------------------------------------------------------------- a terminal handed to ssh


@contextlib.contextmanager
def kept_terminal(fd: int | None = None) -> Iterator[None]:
    """Put the settings of the terminal on ``fd`` (default: standard input) back as they were when the block ends,
    however it ends: ``ssh -t`` holds the terminal raw while it runs and may be killed before it restores it."""
    if fd is None:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):
            fd = -1
    saved: list[Any] | None = None
    if fd >= 0 and os.isatty(fd):
        try:
            saved = termios.tcgetattr(fd)
        except termios.error:
            saved = None
    try:
        yield
    finally:
        if saved is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(fd, termios.TCSADRAIN, saved)


# ---------------------------------------------------------------- the version, asked with the first query

#: ``sh -c`` script run instead of a query that carries the version question: $1 a marker, $2 the cluster's
#: ``sinfo``, then the query's argv. The query runs as it would alone (its streams and exit status kept); then the
#: marker and ``sinfo --version``'s answer follow on standard output. Fixed text: no value is ever shell code.
_WITH_VERSION = 'm=$1; s=$2; shift 2; "$@"; r=$?; printf %s "$m"; "$s" --version 2>&1; exit $r'
#: ``sinfo --version``: answered from the first query's channel once said there.
VERSION_ARGV = ("sinfo", "--version")


def _is_version_question(argv: Sequence[str]) -> bool:
    return len(argv) == 2 and (os.path.basename(argv[0]), argv[1]) == VERSION_ARGV


def split_version(stdout: str, marker: str) -> tuple[str, str | None]:
    """The query's own standard output and what ``sinfo --version`` said after ``marker`` (None: the marker is not
    there, the script did not get that far)."""
    at = stdout.rfind(marker)
    if at < 0:
        return stdout, None
    return stdout[:at], stdout[at + len(marker):]


# ---------------------------------------------------------------- the runner


@dataclass(frozen=True)
class SshTarget:
    """One cluster's login: the ssh host and what ntui adds to ssh's own config for it."""

    host: str
    control_dir: Path
    persist_s: int = CONTROL_PERSIST_S
    config_file: str | None = None  # ``ssh -F`` (default: ssh's own, ~/.ssh/config)
    bin_dir: str | None = None  # where the Slurm clients are on the cluster, when not on its PATH
    ssh: str = "ssh"
    renew: str | None = None  # the command that renews the key or certificate (said when a login is refused)

    @property
    def control_path(self) -> str:
        return str(self.control_dir / "%C")


class SshRunner:
    """Runs each command on ``target.host`` over the shared master (see the module's docstring). Raises
    :class:`SshError` for ssh's own failures, :class:`SlurmTimeout` (the local ssh process group killed after
    ``timeout``), :class:`SlurmNotInstalled` (no ssh here, or the command not on the cluster's PATH). Thread-safe;
    ``calls`` counts every attempted command.

    When the link drops under a command that only reads (:func:`repeatable`), it is asked again up to ``retries``
    times after a :class:`Backoff` wait (ssh reopens the master: a dead master's socket is refused, and
    ``ControlMaster=auto`` then logs in afresh); an action (sbatch, scancel, ...) is never repeated: its answer
    lost, it may have been done, and the caller checks (``ntui submit`` looks for its job by its comment)."""

    def __init__(self, target: SshTarget, *, name: str | None = None, retries: int = 2,
                 backoff: Backoff | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.target = target
        self.name = name or target.host
        self.retries = retries
        self.backoff = backoff or Backoff()
        self._sleep = sleep
        self._process = SubprocessRunner()
        self._calls = 0
        self._lock = threading.Lock()
        self._dir_ready = False
        # The first call opens the master; calls that start beside it would each log in on their own (ssh
        # disables multiplexing for a client that finds the socket taken): they wait for it instead.
        self._opening = threading.Lock()
        self._opened = False
        # ``sinfo --version`` as said with the first query (None: not yet); asked that way once per runner
        self._version: CommandResult | None = None
        self._version_asked = False

    @property
    def calls(self) -> int:
        return self._calls

    def resolve(self, program: str) -> str:
        """A Slurm client under the cluster's ``bin_dir`` when one is set (not checked from here); any other
        program (``mkdir``) as is, from the cluster's PATH."""
        if self.target.bin_dir and "/" not in program and program in SLURM_CLIENTS:
            return f"{self.target.bin_dir.rstrip('/')}/{program}"
        return program

    def ssh_argv(self, argv: Sequence[str], *, version_marker: str | None = None, terminal: bool = False
                 ) -> list[str]:
        """The ssh argv that runs ``argv`` on the cluster; ``version_marker``: followed by that marker and
        ``sinfo --version``'s answer, in the same channel (:data:`_WITH_VERSION`); ``terminal``: ``ssh -t``."""
        t = self.target
        remote = [self.resolve(argv[0]), *argv[1:]]
        if argv[0].rsplit("/", 1)[-1] in TIMED_CLIENTS:  # its times in Slurm's standard form, whatever the login sets
            remote = ["env", "=".join(TIME_FORMAT_ENV), *remote]
        if version_marker is not None:
            remote = ["sh", "-c", _WITH_VERSION, "ntui", version_marker, self.resolve("sinfo"), *remote]
        return build_ssh_argv(t.host, remote, control_path=t.control_path, persist_s=t.persist_s,
                              config_file=t.config_file, ssh=t.ssh, terminal=terminal)

    def stream_argv(self, argv: Sequence[str]) -> list[str]:
        """The ssh argv of a long-lived command whose standard output is read here line by line (a GPU watch step),
        over the master (opened first where none is up): :data:`_RELAY` ends it with SIGTERM once this side stops
        reading, so that killing the local ssh process stops the command on the cluster too."""
        if not argv:
            raise ValueError("empty argv")
        self.ensure_master()
        self._prepare()
        remote = [self.resolve(argv[0]), *argv[1:]]
        return self.ssh_argv(["sh", "-c", _RELAY, "ntui", *remote])

    def run_terminal(self, argv: Sequence[str]) -> int:
        """``argv`` on the cluster on this process's terminal (``ssh -t`` over the master, opened first where none
        is up: the terminal is never the one a login prompts on) until it ends; its exit status (255: ssh's own
        failure, said by ssh on the terminal). The terminal's settings are put back as they were on every way out
        (ssh killed while it held the terminal raw included); Ctrl-C goes to the command, not to this process."""
        if not argv:
            raise ValueError("empty argv")
        self.ensure_master()
        self._prepare()
        command = self.ssh_argv(argv, terminal=True)
        with kept_terminal():
            try:
                proc = subprocess.Popen(command)
            except FileNotFoundError:
                raise SlurmNotInstalled(f"ssh not found on PATH: ntui reaches cluster {self.name} through "
                                        "OpenSSH's client", argv=tuple(argv)) from None
            while True:
                try:
                    return proc.wait()
                except KeyboardInterrupt:  # the terminal's Ctrl-C reached ssh too: it decides
                    continue

    def _carries_version(self, argv: Sequence[str], input: str | None) -> bool:  # noqa: A002
        """Whether this call asks the version too: the runner's first Slurm query that only reads (an action's
        own output and status are never touched)."""
        if self._version_asked or input is not None or not argv:
            return False
        prog = os.path.basename(argv[0])
        return prog in SLURM_CLIENTS and prog != "srun" and repeatable(argv) and not _is_version_question(argv)

    @property
    def known_version(self) -> str | None:
        """What ``sinfo --version`` said with the first query (None: not asked that way, or it failed)."""
        return self._version.stdout if self._version is not None else None

    def control(self, operation: str, *, timeout: float = 10.0) -> CommandResult:
        """``ssh -O OPERATION``: ``check`` (is the master up? exit 0 and ``Master running (pid=N)``) or ``exit``."""
        t = self.target
        return self._process.run(build_control_argv(t.host, operation, control_path=t.control_path,
                                                    config_file=t.config_file, ssh=t.ssh), timeout=timeout)

    def _prepare(self) -> None:
        with self._lock:
            self._calls += 1
            if not self._dir_ready:
                ensure_private_dir(self.target.control_dir)
                self._dir_ready = True

    def open_channel(self, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """A long-lived command on the cluster (the agent) over the master: its standard input and output are
        pipes of the returned process (binary), its standard error one too. The master is opened first where
        none is up (so that no second login starts beside another call's)."""
        if not argv:
            raise ValueError("empty argv")
        self.ensure_master()
        self._prepare()
        try:
            return subprocess.Popen(self.ssh_argv(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise SlurmNotInstalled(f"ssh not found on PATH: ntui reaches cluster {self.name} through OpenSSH's "
                                    "client", argv=tuple(argv)) from None

    def ensure_master(self) -> None:
        """Open the master where none is up, alone (a long-lived channel or a terminal never starts it: a login
        would then last as long as they do, and calls beside it would each log in). One that another process opened
        is found with ``ssh -O check``, which opens no channel."""
        if self._opened:
            return
        if self.master_up():
            self._opened = True
            return
        self.run(["true"], timeout=60)

    def master_up(self) -> bool:
        """Whether this cluster's master answers (``ssh -O check``; no login)."""
        try:
            return self.control("check").returncode == 0
        except SlurmError:
            return False

    def classify(self, returncode: int, stderr: str, argv: Sequence[str] = ()) -> SshError | None:
        """:func:`classify_ssh` for this cluster (its host and renew hint)."""
        return classify_ssh(self.target.host, returncode, stderr, argv=argv, renew=self.target.renew)

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        input: str | None = None,  # noqa: A002 - mirrors CommandRunner
    ) -> CommandResult:
        if _is_version_question(argv) and self._version is not None:
            return self._version  # said with the first query: no channel
        attempt = 0
        while True:
            try:
                res = self._run_once(argv, timeout=timeout, env=env, input=input)
            except SshError as exc:
                if not exc.link_down or attempt >= self.retries or not repeatable(argv):
                    raise
                attempt += 1
                self._sleep(self.backoff.delay())
                continue
            self.backoff.reset()
            return res

    def _run_once(self, argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None,
                  input: str | None) -> CommandResult:  # noqa: A002 - mirrors CommandRunner
        if not argv:
            raise ValueError("empty argv")
        self._prepare()
        remote = (self.resolve(argv[0]), *argv[1:])
        prog = os.path.basename(argv[0])
        marker = f"ntui-version-{secrets.token_hex(8)}:" if self._carries_version(argv, input) else None
        ssh_argv = self.ssh_argv(argv, version_marker=marker)
        try:
            if self._opened:
                res = self._process.run(ssh_argv, timeout=timeout, env=env, input=input)
            else:
                with self._opening:
                    res = self._process.run(ssh_argv, timeout=timeout, env=env, input=input)
                    self._opened = res.returncode != SSH_FAILED
        except SlurmTimeout as exc:
            raise SlurmTimeout(f"{prog} on {self.name} did not answer within {timeout:g} s (over ssh to "
                               f"{self.target.host})", timeout=timeout, stdout=exc.stdout, argv=remote,
                               stderr=exc.stderr) from None
        except SlurmNotInstalled as exc:
            raise SlurmNotInstalled(f"ssh not found on PATH: ntui reaches cluster {self.name} through OpenSSH's "
                                    "client", argv=ssh_argv, stderr=exc.stderr) from None
        problem = self.classify(res.returncode, res.stderr, argv=remote)
        if problem is None and res.returncode == SSH_FAILED and not res.stderr.strip() and not self.master_up():
            # a channel whose master died under it ends 255 without a word (LogLevel=ERROR): the link dropped
            said = "the connection dropped"
            problem = SshError(f"ssh to {self.target.host}: {said} (the shared connection closed under {prog})",
                               host=self.target.host, words=said, argv=remote, stderr=res.stderr)
        if problem is not None:
            self._opened = False  # the next call opens the master again, alone
            raise problem
        if res.returncode == 127 and re.search(r"not found|no such file", res.stderr, re.IGNORECASE):
            hint = (": is the Slurm client on the PATH of a non-interactive login there? (else set the cluster's "
                    "bin-dir in the settings)") if prog in SLURM_CLIENTS else ""
            raise SlurmNotInstalled(f"{prog} not found on cluster {self.name} ({self.target.host}){hint}",
                                    argv=remote, stderr=res.stderr, returncode=res.returncode)
        stdout = res.stdout
        if marker is not None:
            stdout, said_version = split_version(res.stdout, marker)
            self._version_asked = True  # once: a failure is asked again on its own, as on a login node
            if said_version is not None and re.search(r"\d+\.\d+", said_version):
                self._version = CommandResult(argv=(self.resolve("sinfo"), "--version"), returncode=0,
                                              stdout=said_version, stderr="", duration_s=0.0)
        return CommandResult(argv=remote, returncode=res.returncode, stdout=stdout, stderr=res.stderr,
                             duration_s=res.duration_s)
