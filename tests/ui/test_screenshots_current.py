"""The README's pictures (``screenshots/``) are the app as it is: ``scripts/screenshots`` run afresh draws the same
pictures (their SVG ids aside, which Rich derives from the text). A change to what the app shows regenerates them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

_ID_RE = re.compile(r"terminal-\d+")


def _drawn(path: Path) -> str:
    return _ID_RE.sub("terminal-0", path.read_text(encoding="utf-8"))


def test_the_screenshots_are_the_app_as_it_is(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "tests.support.screenshots", "--out", str(tmp_path)], cwd=REPO,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    made = sorted(p.name for p in tmp_path.glob("*.svg"))
    kept = sorted(p.name for p in (REPO / "screenshots").glob("*.svg"))
    assert made == kept, (made, kept)
    stale = [name for name in made if _drawn(tmp_path / name) != _drawn(REPO / "screenshots" / name)]
    assert not stale, f"run scripts/screenshots: {stale} no longer show the app"
