"""The core and the plain CLI never import Textual (fast start, UI-free logic)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import ntui.core
from tests.conftest import REPO

CORE_MODULES = sorted(
    f"ntui.core.{m.name}" for m in pkgutil.iter_modules(ntui.core.__path__) if not m.name.startswith("_")
)


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True, text=True, cwd=REPO, timeout=60, check=True,
    )
    return set(out.stdout.split())


def test_core_modules_exist() -> None:
    assert {"ntui.core.render", "ntui.core.spec", "ntui.core.presets"} <= set(CORE_MODULES)


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
