"""The core and the plain CLI never import Textual (fast start, UI-free logic); no module re-exports another's
names (docs/architecture.md: a name is imported from the module that defines it)."""

from __future__ import annotations

import ast
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
    # Slurm's vocabulary (its time forms, its option table, its log lines' forms, which the progress pattern's
    # reader knows) is no Slurm client: the preset's check reads it
    vocabulary = {"ntui.core.slurm", "ntui.core.slurm.durations", "ntui.core.slurm.options",
                  "ntui.core.slurm.srunlines"}
    assert not {m for m in rendered if m.startswith(heavy)} - vocabulary, sorted(rendered)

    checked = _ntui_modules_after(["check", "local-srun"])
    assert {"ntui.core.compose.sitecheck", "ntui.cli.slurm"} <= checked
    no_history = ("ntui.core.records", "ntui.core.jobs", "ntui.core.logs", "ntui.core.gpu", "ntui.ui",
                  "ntui.cli.history")
    assert not {m for m in checked if m.startswith(no_history)}, sorted(checked)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _target_names(target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {n for elt in target.elts for n in _target_names(elt)}
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _defined_names(body: list[ast.stmt]) -> set[str]:
    """The names a module's top level defines itself: functions, classes, assignments (also inside a top-level
    ``if``/``try``, but not under ``if TYPE_CHECKING``, which only imports for the type checker). Imports do not
    define."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n for t in node.targets for n in _target_names(t)}
        elif isinstance(node, ast.AnnAssign):
            names |= _target_names(node.target)
        elif sys.version_info >= (3, 12) and isinstance(node, ast.TypeAlias):
            names |= _target_names(node.name)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                names |= _defined_names(node.body)
            names |= _defined_names(node.orelse)
        elif isinstance(node, ast.Try):
            names |= _defined_names(node.body) | _defined_names(node.orelse) | _defined_names(node.finalbody)
            for handler in node.handlers:
                names |= _defined_names(handler.body)
    return names


def _dunder_all(tree: ast.Module) -> list[str]:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) and node.value is not None else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            assert isinstance(value, (ast.List, ast.Tuple)), "__all__ should be a literal list"
            return [elt.value for elt in value.elts if isinstance(elt, ast.Constant) and isinstance(elt.value, str)]
    return []


def _reexports(module: str, tree: ast.Module) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.asname is not None and alias.asname == alias.name:
                    source = f"from {node.module} " if isinstance(node, ast.ImportFrom) else ""
                    found.append(f"{module}:{node.lineno}: {source}import {alias.name} as {alias.asname}")
    defined = _defined_names(tree.body)
    found += [f"{module}: __all__ lists {name!r}, which it does not define" for name in _dunder_all(tree)
              if name not in defined]
    return found


def test_no_module_reexports_another_modules_names() -> None:
    """``import x as x`` / ``from m import x as x`` marks a re-export, and so does an ``__all__`` entry the module
    imports rather than defines: each such name must be imported from the module that defines it instead."""
    root = REPO / "ntui"
    paths = sorted(root.rglob("*.py"))
    assert paths
    found: list[str] = []
    for path in paths:
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        found += _reexports(module, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    assert not found, "re-exports (import each name from its defining module):\n" + "\n".join(found)
