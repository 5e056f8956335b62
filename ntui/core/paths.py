"""Where ntui finds its shipped data and keeps the user's files (XDG)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent


def shipped_dir(kind: str) -> Path:
    """``presets`` or ``examples``: inside an installed wheel, else the source checkout."""
    packaged = _PKG / "_data" / kind
    if packaged.is_dir():
        return packaged
    return _PKG.parent / kind


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value and os.path.isabs(value) else Path.home() / default


def config_dir() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "ntui"


#: Overrides the state directory (the job records and their per-host index), like ``IPYTHONDIR``: e.g. a local
#: disk, or one directory shared on purpose.
STATE_DIR_ENV = "NTUI_STATE_DIR"


def state_dir() -> Path:
    """``$NTUI_STATE_DIR`` (an absolute path), else ``$XDG_STATE_HOME/ntui`` (default ``~/.local/state/ntui``)."""
    override = os.environ.get(STATE_DIR_ENV)
    if override and os.path.isabs(override):
        return Path(override)
    return _xdg("XDG_STATE_HOME", ".local/state") / "ntui"


def user_presets_dir() -> Path:
    return config_dir() / "presets"


def atomic_write(path: Path, data: str | bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never a mix.

    Temp file in the same directory, fsync, then ``os.replace``; the directory is fsynced too.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    _remove_stale_temps(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dfd = os.open(path.parent, os.O_RDONLY)  # make the rename durable
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _remove_stale_temps(path: Path) -> None:
    """Remove ``.<name>.<pid>.tmp`` files left by writers that died (kill -9) on this host.

    A live writer's temp file is kept: its pid still exists. (On a shared filesystem a pid may
    belong to another host's writer; then the file stays until that pid is gone here too.)
    """
    prefix = f".{path.name}."
    try:
        entries = os.listdir(path.parent)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        pid_text = entry[len(prefix):-4]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.parent / entry)
        except PermissionError:
            pass
