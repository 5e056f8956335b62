"""User settings from ``$XDG_CONFIG_HOME/ntui/config.yaml`` (all optional).

```yaml
queue:
  active-interval: 15     # seconds between squeue calls while own jobs pend or run
  idle-interval: 60       # ... when none do
  max-backoff: 300        # ceiling of the exponential back-off after controller errors
  all-users: false        # start with everyone's jobs shown
  recent-days: 7          # the jobs view lists the jobs of the last N days under the queue
slurm:
  timeout: 15             # seconds before a Slurm query or action is killed
  submit-timeout: 60      # ... sbatch (it retries by itself while slurmctld is busy)
  bin-dir: null           # where sbatch/squeue/... live, when not on PATH
gpu:
  interval: 2             # nvidia-smi -l N inside the watch step
  idle-after: 60          # seconds at 0% before a GPU is flagged idle
logs:
  poll-interval: 0.5      # seconds; polling, since inotify is unreliable on Lustre/NFS
  window: 5000            # lines kept in memory per rank
notify:                   # the app (and ntui wait --notify) on a start, requeue or end of one of your jobs
  bell: true              # the terminal's bell
  desktop: true           # a desktop notification through the terminal (OSC 9 and OSC 777; tmux passthrough)
  states: [RUNNING, REQUEUED, ENDED]   # what notifies: RUNNING = started, ENDED = every end; or final states
                          # one by one (COMPLETED, FAILED, TIMEOUT, ...) to leave others out
progress:
  quiet-after: 300        # seconds: a running job with no progress and no log line for this long, and for ten of
                          # its own usual intervals, is said to be quiet (the queue row, a notice, ntui show)
clusters:                 # clusters reached over ssh (`ntui --cluster NAME ...`); none: Slurm here only
  perlmutter:             # the name ntui uses (letters, digits, . _ -)
    ssh: perlmutter       # a host of your ~/.ssh/config (ProxyJump, keys, certificates, MFA: ssh's business)
    bin-dir: null         # where the Slurm clients are on the cluster, when not on its PATH
    persist: 600          # seconds the shared connection stays open after its last call (ControlPersist)
    ssh-config: null      # another ssh config file than ~/.ssh/config (ssh -F)
    renew: null           # the command that renews your key there, said when a login is refused (sshproxy -u NAME)
    agent: null           # how `ntui agent --stdio` starts there when ntui is not on a login's PATH
```

Environment overrides (applied here, so the CLI and the app read the same values):
``NTUI_SLURM_TIMEOUT=SECONDS`` sets both ``slurm.timeout`` and ``slurm.submit-timeout``;
``NTUI_SLURM_BIN_DIR=DIR`` sets ``slurm.bin-dir`` (e.g. another Slurm version's clients: ``scripts/dev-cluster
env --slurm 26.05`` prints it; empty: the file's setting stays).
:func:`load_settings` is the one loader; :func:`slurm_runner` builds the runner those settings describe, and
:func:`cluster_runner` the one of a configured cluster (Slurm on its login node, over ssh).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ntui.core.paths import config_dir
from ntui.core.problems import Problem, Source
from ntui.core.slurm.common import _CATEGORY, DEFAULT_TIMEOUT, SUBMIT_TIMEOUT
from ntui.core.slurm.runner import CommandResult, CommandRunner, SubprocessRunner, TimeoutRunner
from ntui.core.slurm.ssh import CONTROL_PERSIST_S, SshRunner, SshTarget, control_dir, valid_host

__all__ = [
    "BIN_DIR_ENV",
    "TIMEOUT_ENV",
    "ClusterSettings",
    "UnknownCluster",
    "cluster_runner",
    "GpuSettings",
    "LogSettings",
    "NotifySettings",
    "ProgressSettings",
    "QueueSettings",
    "Settings",
    "SlurmSettings",
    "config_path",
    "load_settings",
    "SettingsRunner",
    "slurm_runner",
]

#: Environment override: seconds every Slurm command may take (queries, actions and sbatch alike).
TIMEOUT_ENV = "NTUI_SLURM_TIMEOUT"
#: Environment override: the directory of the Slurm clients (``slurm.bin-dir``).
BIN_DIR_ENV = "NTUI_SLURM_BIN_DIR"


@dataclass(frozen=True)
class QueueSettings:
    active_interval: float = 15.0
    idle_interval: float = 60.0
    max_backoff: float = 300.0
    all_users: bool = False
    recent_days: float = 7.0  # the recent-jobs list under the queue (= ntui.core.records.record.DEFAULT_RECENT_DAYS)


@dataclass(frozen=True)
class SlurmSettings:
    timeout: float = DEFAULT_TIMEOUT  # queries and actions
    submit_timeout: float = SUBMIT_TIMEOUT  # sbatch, also --test-only
    bin_dir: str | None = None


@dataclass(frozen=True)
class GpuSettings:
    interval: int = 2
    idle_after: float = 60.0


@dataclass(frozen=True)
class LogSettings:
    poll_interval: float = 0.5
    window: int = 5000


@dataclass(frozen=True)
class ProgressSettings:
    quiet_after: float = 300.0  # a running job is never quiet sooner (= ntui.core.progress.quiet.QUIET_FLOOR_S)


#: What ``notify.states`` may name besides final states: RUNNING (a start), REQUEUED, ENDED (every end).
NOTIFY_WORDS = ("RUNNING", "REQUEUED", "ENDED")


@dataclass(frozen=True)
class NotifySettings:
    bell: bool = True
    desktop: bool = True
    states: tuple[str, ...] = NOTIFY_WORDS  # upper-case state names (ntui.core.waiting.notify.wanted)


@dataclass(frozen=True)
class ClusterSettings:
    """A cluster ntui reaches over ssh: ``name`` as the user calls it, ``ssh`` a host of their ssh config."""

    name: str
    ssh: str
    bin_dir: str | None = None  # the Slurm clients' directory on the cluster
    persist: int = CONTROL_PERSIST_S  # ssh's ControlPersist, seconds
    ssh_config: str | None = None  # ssh -F FILE (default: ssh's own)
    renew: str | None = None  # the command that renews the user's key there (e.g. sshproxy), said when refused
    agent: tuple[str, ...] | None = None  # how `ntui agent --stdio` starts there (words), when not on its PATH


#: A cluster's name: what ``--cluster`` takes.
_CLUSTER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class Settings:
    queue: QueueSettings = field(default_factory=QueueSettings)
    slurm: SlurmSettings = field(default_factory=SlurmSettings)
    gpu: GpuSettings = field(default_factory=GpuSettings)
    logs: LogSettings = field(default_factory=LogSettings)
    notify: NotifySettings = field(default_factory=NotifySettings)
    progress: ProgressSettings = field(default_factory=ProgressSettings)
    clusters: tuple[ClusterSettings, ...] = ()

    def cluster(self, name: str) -> ClusterSettings | None:
        return next((c for c in self.clusters if c.name == name), None)


def config_path() -> Path:
    return config_dir() / "config.yaml"


#: Where each key of the settings file is: its path of keys -> its 1-based line.
Lines = Mapping[tuple[str, ...], int]


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line of every mapping key of ``text`` (YAML already read by ``yaml.safe_load``), by its path of keys;
    from the safe loader's node tree, which builds no object."""
    import yaml

    lines: dict[tuple[str, ...], int] = {}

    def walk(node: Any, at: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    here = (*at, str(key.value))
                    lines[here] = key.start_mark.line + 1
                    walk(value, here)

    with contextlib.suppress(yaml.YAMLError):
        walk(yaml.compose(text, Loader=yaml.SafeLoader), ())
    return lines


def _section(cls: type[Any], raw: Any, name: str, path: str, problems: list[Problem], lines: Lines) -> Any:
    default = cls()
    if raw is None:
        return default
    if not isinstance(raw, dict):
        problems.append(Problem(Source(path, lines.get((name,), 0)), name, "expected a mapping"))
        return default
    values: dict[str, Any] = {}
    known = {f.name: f for f in fields(cls)}
    for key, value in raw.items():
        attr = str(key).replace("-", "_")
        where = Source(path, lines.get((name, str(key)), 0))
        if attr not in known:
            problems.append(Problem(where, f"{name}.{key}", "unknown setting"))
            continue
        want = type(getattr(default, attr))
        if want is tuple:
            words = _state_words(value)
            if words is None:
                problems.append(Problem(where, f"{name}.{key}", "expected a list of job state names "
                                        f"({', '.join(NOTIFY_WORDS)}, COMPLETED, FAILED, ...), got {value!r}"))
                continue
            values[attr] = words
        elif getattr(default, attr) is None:
            values[attr] = None if value is None else str(value)
        elif want is bool:
            if not isinstance(value, bool):
                problems.append(Problem(where, f"{name}.{key}", f"expected true/false, got {value!r}"))
                continue
            values[attr] = value
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            problems.append(Problem(where, f"{name}.{key}", f"expected a positive number, got {value!r}"))
        else:
            values[attr] = want(value)
    return cls(**{**{f: getattr(default, f) for f in known}, **values})


def _state_words(value: Any) -> tuple[str, ...] | None:
    """A YAML list of job state names (or one name) -> upper-case names; None when it is not one."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        return None
    words = tuple(v.strip().upper() for v in items)
    known = set(_CATEGORY) | set(NOTIFY_WORDS)
    return words if all(w in known for w in words) else None


def load_settings(
    path: Path | None = None, environ: Mapping[str, str] | None = None
) -> tuple[Settings, list[Problem]]:
    """Settings from the file at ``path`` (default :func:`config_path`) with the environment's overrides
    (``environ``, default ``os.environ``), plus problems: bad values fall back to defaults; ntui still starts."""
    settings, problems = _load_file(path or config_path())
    return _apply_env(settings, os.environ if environ is None else environ, problems), problems


def _load_file(path: Path) -> tuple[Settings, list[Problem]]:
    problems: list[Problem] = []
    if not path.is_file():
        return Settings(), problems
    import yaml  # only with a settings file: the Slurm subcommands start without loading yaml

    try:
        text = path.read_text(encoding="utf-8")
        raw = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return Settings(), [Problem(Source(str(path)), "", f"ignored: {exc}")]
    if raw is None:
        return Settings(), problems
    if not isinstance(raw, dict):
        return Settings(), [Problem(Source(str(path)), "", "expected a mapping")]
    lines = _key_lines(text)
    sections = {"queue": QueueSettings, "slurm": SlurmSettings, "gpu": GpuSettings, "logs": LogSettings,
                "notify": NotifySettings, "progress": ProgressSettings}
    for key in raw:
        if key not in sections and key != "clusters":
            problems.append(Problem(Source(str(path), lines.get((str(key),), 0)), str(key), "unknown section"))
    built = {k: _section(cls, raw.get(k), k, str(path), problems, lines) for k, cls in sections.items()}
    clusters = _clusters(raw.get("clusters"), str(path), problems, lines)
    return Settings(**built, clusters=clusters), problems


def _command_words(value: object) -> tuple[str, ...] | None:
    """A command given as one line of shell words (split as a shell would, never run by one); None: not that."""
    if not isinstance(value, str) or "\n" in value:
        return None
    try:
        words = tuple(shlex.split(value))
    except ValueError:
        return None
    return words or None


def _clusters(raw: Any, path: str, problems: list[Problem], lines: Lines) -> tuple[ClusterSettings, ...]:
    """The ``clusters:`` section: ``NAME: {ssh: HOST, ...}`` each; a cluster with a problem is left out (the
    others stay usable), every problem named by file, line and field."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        problems.append(Problem(Source(path, lines.get(("clusters",), 0)), "clusters",
                                "expected a mapping of cluster names to {ssh: HOST}"))
        return ()
    out: list[ClusterSettings] = []
    for name, entry in raw.items():
        at = ("clusters", str(name))
        field_name = f"clusters.{name}"
        before = len(problems)

        def bad(key: str | None, message: str, at: tuple[str, ...] = at, field_name: str = field_name) -> None:
            keys = (*at, key) if key else at
            line = lines.get(keys, 0) or lines.get(at, 0)
            problems.append(Problem(Source(path, line), f"{field_name}.{key}" if key else field_name, message))

        if not isinstance(name, str) or not _CLUSTER_NAME.fullmatch(name):
            bad(None, "a cluster's name is letters, digits, '.', '_' and '-' (it is what --cluster takes)")
            continue
        if not isinstance(entry, dict):
            bad(None, "expected a mapping with ssh: HOST (a host of your ~/.ssh/config)")
            continue
        values: dict[str, Any] = {}
        for key, value in entry.items():
            attr = str(key).replace("-", "_")
            if attr == "ssh":
                if not isinstance(value, str) or not valid_host(value):
                    bad(str(key), f"expected a host of your ssh config (an alias or user@host), got {value!r}")
                else:
                    values["ssh"] = value
            elif attr in ("bin_dir", "ssh_config"):
                if value is not None and (not isinstance(value, str) or not value.strip() or "\n" in value):
                    bad(str(key), f"expected a path, got {value!r}")
                elif value is not None:
                    values[attr] = os.path.expanduser(value) if attr == "ssh_config" else value
            elif attr == "renew":
                if not isinstance(value, str) or not value.strip() or "\n" in value:
                    bad(str(key), f"expected a command on one line (e.g. sshproxy -u NAME), got {value!r}")
                else:
                    values["renew"] = value.strip()
            elif attr == "agent":
                words = _command_words(value)
                if words is None:
                    bad(str(key), f"expected a command on one line (e.g. ~/venvs/ntui/bin/ntui agent --stdio), "
                                  f"got {value!r}")
                else:
                    values["agent"] = words
            elif attr == "persist":
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    bad(str(key), f"expected a whole number of seconds > 0, got {value!r}")
                else:
                    values["persist"] = value
            else:
                bad(str(key), "unknown setting (ssh, bin-dir, persist, ssh-config, renew, agent)")
        if "ssh" not in values and not any(p.field == f"{field_name}.ssh" for p in problems[before:]):
            bad(None, "no ssh: HOST (a host of your ~/.ssh/config)")
        if len(problems) == before:
            out.append(ClusterSettings(name=name, **values))
    return tuple(out)


def _apply_env(settings: Settings, environ: Mapping[str, str], problems: list[Problem]) -> Settings:
    bin_dir = environ.get(BIN_DIR_ENV, "").strip()
    if bin_dir:
        if not os.path.isdir(bin_dir):
            problems.append(Problem(Source("environment"), "",
                                    f"{BIN_DIR_ENV}={bin_dir!r} is not a directory: Slurm's clients are looked "
                                    "up there, then on PATH"))
        settings = replace(settings, slurm=replace(settings.slurm, bin_dir=bin_dir))
    value = environ.get(TIMEOUT_ENV, "").strip()
    if not value:
        return settings
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < 86400:
        problems.append(Problem(Source("environment"), "", f"ignoring {TIMEOUT_ENV}={value!r} (expected seconds > 0)"))
        return settings
    return replace(settings, slurm=replace(settings.slurm, timeout=seconds, submit_timeout=seconds))


def slurm_runner(settings: SlurmSettings) -> CommandRunner:
    """The runner for these settings: Slurm clients under ``bin_dir`` (else on PATH), every command with the
    configured timeout (``submit_timeout`` for sbatch, ``timeout`` for the rest) whatever its caller passes."""
    return TimeoutRunner(SubprocessRunner(settings.bin_dir), query=settings.timeout, submit=settings.submit_timeout)


class UnknownCluster(ValueError):
    """``--cluster NAME`` names no cluster of the settings; the message lists those there are."""


def cluster_runner(settings: Settings, name: str | None, *, environ: Mapping[str, str] | None = None
                   ) -> CommandRunner:
    """The runner for cluster ``name`` of the settings (Slurm on its login node, over one shared ssh login,
    :class:`~ntui.core.slurm.ssh.SshRunner`), with the settings' timeouts; ``None``: Slurm here
    (:func:`slurm_runner`). :class:`UnknownCluster` when the settings have no such cluster."""
    if name is None:
        return slurm_runner(settings.slurm)
    found = settings.cluster(name)
    if found is None:
        known = ", ".join(c.name for c in settings.clusters)
        where = f"the settings name {known}" if known else f"the settings ({config_path()}) name no cluster"
        raise UnknownCluster(f"no cluster {name!r}: {where}")
    target = SshTarget(host=found.ssh, control_dir=control_dir(environ), persist_s=found.persist,
                       config_file=found.ssh_config, bin_dir=found.bin_dir, renew=found.renew)
    inner = SshRunner(target, name=found.name)
    return TimeoutRunner(inner, query=settings.slurm.timeout, submit=settings.slurm.submit_timeout)


class SettingsRunner:
    """:func:`slurm_runner` for settings that are read on the first Slurm call, not before: the app reads its
    settings file after its first frame, and its views may ask Slurm before that. Thread-safe."""

    def __init__(self, slurm_settings: Callable[[], SlurmSettings]) -> None:
        self._slurm_settings = slurm_settings
        self._runner: CommandRunner | None = None
        self._lock = threading.Lock()

    def _inner(self) -> CommandRunner:
        with self._lock:
            if self._runner is None:
                self._runner = slurm_runner(self._slurm_settings())
            return self._runner

    @property
    def inner(self) -> CommandRunner:
        """The runner the settings describe (built on first use)."""
        return self._inner()

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        input: str | None = None,  # noqa: A002 - mirrors CommandRunner
    ) -> CommandResult:
        return self._inner().run(argv, timeout=timeout, env=env, input=input)
