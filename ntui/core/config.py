"""User settings from ``$XDG_CONFIG_HOME/ntui/config.yaml`` (all optional).

```yaml
queue:
  active-interval: 15     # seconds between squeue calls while own jobs pend or run
  idle-interval: 60       # ... when none do
  max-backoff: 300        # ceiling of the exponential back-off after controller errors
  all-users: false        # start with everyone's jobs shown
slurm:
  timeout: 15             # seconds before a Slurm command is killed
  bin-dir: null           # where sbatch/squeue/... live, when not on PATH
gpu:
  interval: 2             # nvidia-smi -l N inside the watch step
  idle-after: 60          # seconds at 0% before a GPU is flagged idle
logs:
  poll-interval: 0.5      # seconds; polling, since inotify is unreliable on Lustre/NFS
  window: 5000            # lines kept in memory per rank
```
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from ntui.core.paths import config_dir
from ntui.core.problems import Problem, Source


@dataclass(frozen=True)
class QueueSettings:
    active_interval: float = 15.0
    idle_interval: float = 60.0
    max_backoff: float = 300.0
    all_users: bool = False


@dataclass(frozen=True)
class SlurmSettings:
    timeout: float = 15.0
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
class Settings:
    queue: QueueSettings = field(default_factory=QueueSettings)
    slurm: SlurmSettings = field(default_factory=SlurmSettings)
    gpu: GpuSettings = field(default_factory=GpuSettings)
    logs: LogSettings = field(default_factory=LogSettings)


def config_path() -> Path:
    return config_dir() / "config.yaml"


def _section(cls: type[Any], raw: Any, name: str, path: str, problems: list[Problem]) -> Any:
    default = cls()
    if raw is None:
        return default
    if not isinstance(raw, dict):
        problems.append(Problem(Source(path), name, "expected a mapping"))
        return default
    values: dict[str, Any] = {}
    known = {f.name: f for f in fields(cls)}
    for key, value in raw.items():
        attr = str(key).replace("-", "_")
        if attr not in known:
            problems.append(Problem(Source(path), f"{name}.{key}", "unknown setting"))
            continue
        want = type(getattr(default, attr))
        if getattr(default, attr) is None:
            values[attr] = None if value is None else str(value)
        elif want is bool:
            if not isinstance(value, bool):
                problems.append(Problem(Source(path), f"{name}.{key}", f"expected true/false, got {value!r}"))
                continue
            values[attr] = value
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            problems.append(Problem(Source(path), f"{name}.{key}", f"expected a positive number, got {value!r}"))
        else:
            values[attr] = want(value)
    return cls(**{**{f: getattr(default, f) for f in known}, **values})


def load_settings(path: Path | None = None) -> tuple[Settings, list[Problem]]:
    """Settings plus problems (bad values fall back to defaults; ntui still starts)."""
    path = path or config_path()
    problems: list[Problem] = []
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return Settings(), [Problem(Source(str(path)), "", f"ignored: {exc}")]
    if raw is None:
        return Settings(), problems
    if not isinstance(raw, dict):
        return Settings(), [Problem(Source(str(path)), "", "expected a mapping")]
    sections = {"queue": QueueSettings, "slurm": SlurmSettings, "gpu": GpuSettings, "logs": LogSettings}
    for key in raw:
        if key not in sections:
            problems.append(Problem(Source(str(path)), str(key), "unknown section"))
    built = {k: _section(cls, raw.get(k), k, str(path), problems) for k, cls in sections.items()}
    return Settings(**built), problems
