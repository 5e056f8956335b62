"""Which filesystem a path is on, from the mount table: a local disk, or one shared by many hosts.

SQLite's WAL mode needs every process on one host (its readers share memory through the ``-shm`` file), and
POSIX locks over a network filesystem are unreliable, so ntui keeps its per-host index out of WAL mode on a
network filesystem (docs/architecture.md, "The job records"). The answer comes from ``/proc/self/mountinfo``: the
mount with the longest mount point that contains the path, its filesystem type (the field after ``-``).
:data:`NETWORK_TYPES` and any ``fuse.*`` type (sshfs, gcsfuse, ...) count as network filesystems; so does a path
whose mount cannot be told (no mount table: not Linux, or unreadable), since guessing "local" is the unsafe side.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MOUNTINFO", "NETWORK_TYPES", "Mount", "filesystem_of", "is_network_fs", "is_network_type",
           "parse_mountinfo"]

MOUNTINFO = "/proc/self/mountinfo"
#: Filesystems shared by many hosts (Perlmutter: global homes over DVS, scratch on Lustre, CFS on GPFS).
NETWORK_TYPES = frozenset({"nfs", "nfs4", "gpfs", "lustre", "dvs", "cifs", "smb3", "smbfs", "ceph", "glusterfs",
                           "beegfs", "afs", "9p", "panfs", "wekafs", "orangefs", "ocfs2", "gfs2"})


@dataclass(frozen=True)
class Mount:
    mount_point: str
    fstype: str
    source: str


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes (``\\040``)."""
    if "\\" not in field:
        return field
    out: list[str] = []
    i = 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[Mount]:
    """The mounts of a ``/proc/self/mountinfo`` text (proc(5)); malformed lines are skipped.

    ``36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue``: the 5th field is the mount
    point; after the optional fields and ``-`` come the type and the source."""
    mounts: list[Mount] = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 7 or "-" not in fields[6:]:
            continue
        sep = fields.index("-", 6)
        if sep + 1 >= len(fields):
            continue
        source = fields[sep + 2] if sep + 2 < len(fields) else ""
        mounts.append(Mount(_unescape(fields[4]), fields[sep + 1], _unescape(source)))
    return mounts


def is_network_type(fstype: str) -> bool:
    """``nfs``, ``nfs4``, ``gpfs``, ``lustre``, ``dvs``, ``fuse.sshfs``, ... (:data:`NETWORK_TYPES`, ``fuse*``)."""
    kind = fstype.lower()
    return kind in NETWORK_TYPES or kind == "fuse" or kind.startswith(("fuse.", "fuseblk.", "nfs"))


def _contains(mount_point: str, path: str) -> bool:
    if mount_point == "/":
        return True
    return path == mount_point or path.startswith(mount_point.rstrip("/") + "/")


def filesystem_of(path: str | os.PathLike[str], mountinfo: str | None = None) -> Mount | None:
    """The mount ``path`` is on (its deepest existing ancestor, symlinks resolved), or None when the mount table
    cannot be read. ``mountinfo``: the table's text (tests), else :data:`MOUNTINFO`."""
    if mountinfo is None:
        try:
            mountinfo = Path(MOUNTINFO).read_text(errors="replace")
        except OSError:
            return None
    where = Path(os.path.abspath(path))
    rest: list[str] = []
    while not where.exists() and where != where.parent:  # a directory not made yet is on its parent's mount
        rest.insert(0, where.name)
        where = where.parent
    try:
        base = where.resolve()
    except OSError:
        base = where
    resolved = str(base.joinpath(*rest))
    best: Mount | None = None
    for mount in parse_mountinfo(mountinfo):  # later mounts over the same point hide earlier ones: last wins
        if _contains(mount.mount_point, resolved) and (best is None
                                                        or len(mount.mount_point) >= len(best.mount_point)):
            best = mount
    return best


def is_network_fs(path: str | os.PathLike[str], mountinfo: str | None = None) -> bool:
    """True when ``path`` is on a network filesystem, or when that cannot be told (see the module doc)."""
    mount = filesystem_of(path, mountinfo)
    return mount is None or is_network_type(mount.fstype)
