"""Checking and saving preset YAML from the app (Textual-free).

``save_preset_text`` validates first (YAML syntax, then every preset rule, with file:line problems) and
writes atomically only when there is no error, so invalid YAML never overwrites a valid file.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from ntui.core.compose.presets import PresetInfo, load_preset
from ntui.core.compose.site import site_dir
from ntui.core.compose.spec import validate
from ntui.core.compose.yamlsrc import YamlProblem, load_yaml_with_lines
from ntui.core.paths import atomic_write, shipped_dir, user_presets_dir
from ntui.core.problems import PresetError, Problem, Source

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


def check_preset_name(name: str) -> str | None:
    """Why ``name`` cannot be a preset file name, or None."""
    if not name:
        return "a name is required"
    if not _NAME.match(name):
        return "letters, digits, '.', '_' and '-' only, starting with a letter or digit (at most 80)"
    if name.endswith((".yaml", ".yml")):
        return "give the name without .yaml"
    return None


def user_preset_path(name: str) -> Path:
    return user_presets_dir() / f"{name}.yaml"


def display_path(path: Path | str | None) -> str:
    """A short, checkout-independent name for a preset file: ``user: x.yaml`` / ``shipped: x.yaml``."""
    if path is None:
        return "<no file>"
    p = Path(path)
    site = site_dir()
    roots = [("user", user_presets_dir()), *([("site", site)] if site is not None else []),
             ("shipped", shipped_dir("presets"))]
    for label, root in roots:
        with contextlib.suppress(ValueError):
            return f"{label}: {p.resolve().relative_to(root.resolve())}"
    return f"file: {p.name}"


def problem_text(problem: Problem) -> str:
    """``str(problem)`` with the file shown as :func:`display_path` (no checkout or home paths)."""
    src = problem.source
    if not src.file or not os.path.isabs(src.file):
        return str(problem)
    where = display_path(src.file) + (f":{src.line}" if src.line else "")
    return str(Problem(Source(where, 0), problem.field, problem.message, problem.severity))


def is_writable_preset(info: PresetInfo) -> bool:  # site and shipped presets are read-only
    return info.origin == "user"


def check_preset_text(text: str, target: Path) -> list[Problem]:
    """Every problem ``text`` would have as the preset file ``target`` (nothing is written to ``target``)."""
    shown = str(target)
    try:
        doc = load_yaml_with_lines(text, shown)
    except YamlProblem as exc:
        return [exc.problem]
    if not isinstance(doc.data, dict):
        kind = "nothing" if doc.data is None else type(doc.data).__name__
        return [Problem(Source(shown, 1), "", f"expected a YAML mapping, got {kind}")]
    # Load through the real loader from a hidden file beside the target, so that `extends` and relative
    # paths resolve as they will once saved.
    target.parent.mkdir(parents=True, exist_ok=True)
    probe = target.with_name(f".{target.name}.{os.getpid()}.check")
    try:
        atomic_write(probe, text)
        try:
            loaded = load_preset(str(probe))
        except PresetError as exc:
            return [_rename(p, probe, target) for p in exc.problems]
        if loaded.name == probe.stem:
            loaded.name = target.stem
        _, problems = validate(loaded)
        return [_rename(p, probe, target) for p in problems]
    finally:
        with contextlib.suppress(FileNotFoundError):
            probe.unlink()


def _rename(problem: Problem, probe: Path, target: Path) -> Problem:
    src = problem.source
    file = src.file.replace(str(probe.resolve()), str(target)).replace(str(probe), str(target))
    message = problem.message.replace(str(probe.resolve()), str(target)).replace(str(probe), str(target))
    return Problem(Source(file, src.line), problem.field, message, problem.severity)


def save_preset_text(text: str, target: Path) -> list[Problem]:
    """Validate, then write atomically when there is no error. Returns all problems (warnings included)."""
    problems = check_preset_text(text, target)
    if any(p.is_error for p in problems):
        return problems
    atomic_write(target, text, mode=0o644)
    return problems


def first_error_line(problems: list[Problem], target: Path) -> int | None:
    """The 1-based line of the first error located in ``target`` (to move the editor's cursor there)."""
    for p in problems:
        if p.is_error and p.source.line and p.source.file == str(target):
            return p.source.line
    return None


class PresetSaveRefused(Exception):
    """Saving was refused: the text has errors (``problems``); nothing was written."""

    def __init__(self, target: Path, problems: list[Problem]) -> None:
        self.target = target
        self.problems = problems
        errors = [p for p in problems if p.is_error]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        first = problem_text(errors[0]) if errors else "invalid preset"
        super().__init__(f"not saved, {first}{more}")
