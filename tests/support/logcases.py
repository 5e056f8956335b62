"""The real dev-cluster logs of ``tests/data/logs/<case>/`` with the file times they had when captured.

Lines without a timestamp (a Python traceback, say) are dated by their file's mtime, as on a live cluster.
A git checkout gives every file the checkout time instead, which would put a rank's traceback an hour
after the launcher's timestamped lines. ``case.json`` keeps each log's mtime from the capture
(``mtimes``); :func:`restore_mtimes` puts them back before a test reads the files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "logs"


def restore_mtimes(case_dir: Path) -> dict[str, object]:
    """Set each log's mtime to the captured one; return the case's metadata."""
    meta: dict[str, object] = json.loads((case_dir / "case.json").read_text())
    mtimes = meta.get("mtimes")
    if not isinstance(mtimes, dict) or not mtimes:
        raise AssertionError(f"{case_dir}/case.json has no captured mtimes")
    for name, when in mtimes.items():
        os.utime(case_dir / name, (float(when), float(when)))
    return meta
