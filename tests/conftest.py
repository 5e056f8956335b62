"""Shared fixtures: keep the user's config and state out of every test."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent
# ``tests.support`` (fakes, demo data, screenshot scenes) is imported as a package from the repository root,
# also when pytest is started as ``pytest`` rather than ``python -m pytest``.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("fuzz", max_examples=10_000, deadline=None)
settings.load_profile(os.environ.get("NTUI_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    return home
