"""UI fixtures: fixture presets instead of the shipped ones, a FakeRunner cluster, a frozen clock.

Every screen these tests show is independent of the checkout location and of the user: the shipped
preset directory is replaced by ``tests/ui/data/shipped`` (absolute script and log paths), the user
directory is a fresh temporary XDG dir holding ``tests/ui/data/user``, the header shows no user, host or
version, and the clock is frozen.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ntui.core.paths as core_paths
from ntui.core.paths import user_presets_dir
from ntui.ui.app import NtuiApp, make_app
from tests.cluster.conftest import dev_cluster  # noqa: F401  (re-exported fixture for the cluster test)
from tests.support.demo import FROZEN_NOW, demo_runner, settle
from tests.support.fakes import FakeRunner
from tests.support.scene_paths import shown

DATA = Path(__file__).parent / "data"
SHIPPED = DATA / "shipped"
USER = DATA / "user"
FIXTURE_SCRIPTS = ("/global/homes/a/alice/", "/opt/ntui/examples/")

__all__ = ["DATA", "SHIPPED", "USER", "settle"]


def _shipped_dir(kind: str) -> Path:
    return SHIPPED if kind == "presets" else core_paths.shipped_dir(kind)


@pytest.fixture(autouse=True)
def ui_presets(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    """The fixture presets (shipped stand-ins + one user preset); returns the user preset directory.

    Tests marked ``cluster`` keep the real shipped presets (they submit ``local-torchrun``)."""
    if request.node.get_closest_marker("cluster") is not None:
        return user_presets_dir()
    monkeypatch.setattr("ntui.core.compose.presets.shipped_dir", _shipped_dir)
    monkeypatch.setattr("ntui.core.compose.presetfiles.shipped_dir", _shipped_dir)
    user = user_presets_dir()
    user.mkdir(parents=True, exist_ok=True)
    for p in USER.glob("*.yaml"):
        shutil.copy(p, user / p.name)
    return user


@pytest.fixture
def fixture_scripts_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    """For tests that submit: the fixture presets' scripts (absolute, user-independent paths that do not
    exist here) count as present on this host, so the app's ``s`` does not refuse them (F1)."""
    monkeypatch.setattr("ntui.core.compose.spec.script_exists", lambda path: path.startswith(FIXTURE_SCRIPTS))


AppFactory = Callable[..., NtuiApp]


@pytest.fixture
def app_factory() -> AppFactory:
    """``app_factory(runner=..., preset=...)``: the real app with deterministic services."""

    def factory(*, runner: FakeRunner | None = None, preset: str | None = "demo-torchrun", **kw: Any) -> NtuiApp:
        kw.setdefault("history_factory", lambda: None)
        return make_app(
            runner=runner if runner is not None else demo_runner(),
            clock=lambda: FROZEN_NOW,
            preset=preset,
            identity="",
            cursor_blink=False,
            **kw,
        )

    return factory


@pytest.fixture(autouse=True)
def snapshots_never_wait_on_the_progress_timer(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """In a snapshot test the jobs view's progress tick (every 5 s of wall time) never fires by itself: whether it
    had fired by the time of the picture depended on the machine's speed (a loaded one took the sweep's scene past
    5 s, and its rows grew a "60% ·" the picture did not have). A scene that shows progress runs the tick itself
    (``open_tab_after_progress_tick``), so every picture is of the same moment on any machine."""
    if "snap_compare" in request.fixturenames:
        monkeypatch.setattr("ntui.ui.screens.jobs.PROGRESS_TICK_S", 24 * 3600.0)


@pytest.fixture(autouse=True)
def snapshots_show_the_scenes_paths(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """A scene's log files live in this process's own directory (tests/support/scene_paths.py: two runs of the suite
    on one machine never share them); the pictures compared show them where every run's picture does."""
    if "snap_compare" in request.fixturenames:
        import textual._doc

        take = textual._doc.take_svg_screenshot

        def taken(*args: Any, **kwargs: Any) -> str:
            return shown(take(*args, **kwargs))

        monkeypatch.setattr(textual._doc, "take_svg_screenshot", taken)
