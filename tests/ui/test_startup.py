"""Start-up budget (bench/startup.py): what the app does before its first frame, checked without timing."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from ntui.core.config import Settings, SettingsRunner
from ntui.core.slurm.runner import SubprocessRunner
from ntui.ui.app import make_app

REPO = Path(__file__).resolve().parents[2]


def test_default_runner_is_the_settings_runner_built_once_on_first_use() -> None:
    app = make_app(settings=Settings())
    assert app._runner is None  # nothing built with the app
    runner = app.runner
    assert isinstance(runner, SettingsRunner)
    assert app.runner is runner


def test_a_given_runner_is_used_and_can_be_replaced() -> None:
    given, other = SubprocessRunner(), SubprocessRunner()
    app = make_app(runner=given, settings=Settings())
    assert app.runner is given
    app.runner = other
    assert app.runner is other


def test_creating_the_app_imports_neither_yaml_nor_the_slurm_layer() -> None:
    code = (
        "import sys\n"
        "from ntui.ui.app import make_app\n"
        "make_app()\n"
        "print(sorted(m for m in ('yaml', 'ntui.core.config', 'ntui.core.slurm', 'ntui.core.slurm.runner')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


async def test_the_start_up_heap_is_frozen_once_the_first_frame_shows_and_freed_with_the_app() -> None:
    """The collector's full passes leave out what start-up built (a refresh of 10,000 new squeue lines paid them
    over the whole heap, bench/queue_scale.py --offline); the freeze ends with the app, so a process that runs apps
    in turn frees each one's cycles."""
    from tests.support.screenshots_jobs import demo_jobs_runner, jobs_app, settle_jobs

    gc.unfreeze()  # whatever froze before this test: the count below is the app's own
    app = jobs_app(runner=demo_jobs_runner())
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        assert app.first_frame_shown
        assert gc.get_freeze_count() > 0
        assert not any(obj is app for obj in gc.get_objects())  # frozen objects are not the collector's to scan
    assert gc.get_freeze_count() == 0
    assert any(obj is app for obj in gc.get_objects())
