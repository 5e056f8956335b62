"""Where the screenshot scenes' log files live: one private directory per test process.

The pictures (the snapshot tests' SVGs, ``screenshots/``) show the scenes' log paths under :data:`SHOWN`. The files
themselves are written under :data:`ROOT`, a directory of this process alone whose path is exactly as long as
:data:`SHOWN` (so every line is laid out the same), made afresh with mode 0700: two runs of the suite on one
machine (two sessions, two users) never share or block each other's files. :func:`shown` turns a picture of
:data:`ROOT` into the picture of :data:`SHOWN`, its SVG ids included.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import string
import zlib

__all__ = ["ROOT", "SHOWN", "shown"]

SHOWN = "/tmp/ntui-snapshots"
_RANDOM = 5  # the characters of SHOWN's end that each process's own directory has its own of
_ALPHABET = string.ascii_lowercase + string.digits
_ID_RE = re.compile(r"terminal-\d+")


def _private_root() -> str:
    for _ in range(1000):
        path = SHOWN[:-_RANDOM] + "".join(secrets.choice(_ALPHABET) for _ in range(_RANDOM))
        if path == SHOWN:
            continue
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        atexit.register(shutil.rmtree, path, True)
        return path
    raise RuntimeError(f"no free directory named like {SHOWN} under /tmp")


ROOT = _private_root()


def shown(svg: str) -> str:
    """``svg`` as it would be had the scene's files been under :data:`SHOWN`: the paths, and the SVG's id (Rich
    derives it from the text drawn), made again from the text as shown. A picture without :data:`ROOT` is kept."""
    if ROOT not in svg:
        return svg
    svg = svg.replace(ROOT, SHOWN)
    ids = set(_ID_RE.findall(svg))
    if len(ids) != 1:
        return svg
    old = ids.pop()
    return svg.replace(old, "terminal-" + str(zlib.adler32(svg.replace(old, "terminal-").encode("utf-8"))))
