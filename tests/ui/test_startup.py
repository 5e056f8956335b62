"""Start-up budget (bench/startup.py): what the app does before its first frame, checked without timing."""

from __future__ import annotations

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
