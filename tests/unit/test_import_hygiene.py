"""The core and the plain CLI never import Textual (fast start, UI-free logic)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import ntui.core
from tests.conftest import REPO

CORE_MODULES = sorted(
    m.name for m in pkgutil.walk_packages(ntui.core.__path__, "ntui.core.")
    if not m.name.rsplit(".")[-1].startswith("_")
)


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True, text=True, cwd=REPO, timeout=60, check=True,
    )
    return set(out.stdout.split())


def test_core_modules_exist() -> None:
    assert {"ntui.core.compose.render", "ntui.core.compose.spec", "ntui.core.compose.presets"} <= set(CORE_MODULES)


def test_core_never_imports_textual() -> None:
    mods = _modules_after("\n".join(f"import {m}" for m in CORE_MODULES))
    assert "textual" not in mods
    assert "rich" not in mods
    assert set(CORE_MODULES) <= mods


def test_cli_render_check_presets_do_not_import_textual() -> None:
    code = (
        "import io, contextlib\n"
        "from ntui.cli import run\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):\n"
        "    assert run(['render', 'local-torchrun']) == 0\n"
        "    assert run(['check', 'local-srun']) == 0\n"
        "    assert run(['presets']) == 0\n"
        "assert '#SBATCH' in buf.getvalue()\n"
    )
    mods = _modules_after(code)
    assert "ntui.cli" in mods
    assert "textual" not in mods


def _ntui_modules_after(argv: list[str]) -> set[str]:
    code = (
        "import io, contextlib\n"
        "from ntui.cli import run\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        run({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    return {m for m in _modules_after(code) if m.startswith("ntui")}


def test_cli_imports_only_the_running_subcommand() -> None:
    """The CLI's table of commands: ``--help`` lists every subcommand importing none of them; ``render`` loads
    the compose code and nothing of Slurm, the history, logs or GPUs; ``check`` adds the Slurm clients it calls
    and the settings, still no history, logs or GPUs."""
    helped = _ntui_modules_after(["--help"])
    assert not {m for m in helped if m.startswith(("ntui.core.compose", "ntui.core.slurm", "ntui.core.records"))}
    assert {m for m in helped if m.startswith("ntui.cli.")} == {"ntui.cli.common"}

    rendered = _ntui_modules_after(["render", "local-srun"])
    assert "ntui.core.compose.render" in rendered
    heavy = ("ntui.core.slurm", "ntui.core.config", "ntui.core.records", "ntui.core.jobs", "ntui.core.logs",
             "ntui.core.gpu", "ntui.ui", "ntui.cli.history", "ntui.cli.jobs", "ntui.cli.slurm")
    assert not {m for m in rendered if m.startswith(heavy)}, sorted(rendered)

    checked = _ntui_modules_after(["check", "local-srun"])
    assert {"ntui.core.compose.sitecheck", "ntui.cli.slurm"} <= checked
    no_history = ("ntui.core.records", "ntui.core.jobs", "ntui.core.logs", "ntui.core.gpu", "ntui.ui",
                  "ntui.cli.history")
    assert not {m for m in checked if m.startswith(no_history)}, sorted(checked)
