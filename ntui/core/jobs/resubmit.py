"""Resubmitting a job ntui recorded: which preset to load, with which overrides, and what changed in the script.

One home for both ways in: ``ntui resubmit`` (:mod:`ntui.cli.history`) and the jobs view's resubmit key, which
opens the compose view with :attr:`ResubmitPlan.ref` and :attr:`ResubmitPlan.overrides` (and, for a report's
finding, the suggested override on top). :func:`script_diff` is the one diff both show when the preset changed
since the job was submitted.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass

from ntui.core.records.history import HistoryEntry

__all__ = ["ResubmitPlan", "plan_resubmit", "preset_ref", "script_diff", "without_preset"]


def script_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff of two scripts ("" when they are equal)."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=old_name, tofile=new_name))


def preset_ref(entry: HistoryEntry) -> str:
    """The preset to load again: the file it was loaded from while that still exists, else its name."""
    return entry.preset_path if entry.preset_path and os.path.isfile(entry.preset_path) else entry.preset


@dataclass(frozen=True)
class ResubmitPlan:
    """What resubmitting ``job_id`` means now."""

    job_id: str
    ref: str  # preset name or path (:func:`preset_ref`)
    overrides: tuple[str, ...]  # the recorded ones, then the extra ones
    diff: str = ""  # recorded script -> the preset rendered now with the recorded overrides ("" same)
    problem: str | None = None  # why it cannot be resubmitted from its preset (None: it can)


def without_preset(entry: HistoryEntry, job_id: str, where: str = "") -> str | None:
    """Why a history entry cannot be submitted again (it was recovered without its preset: only its script is
    known), in words with what to do instead, or None. ``where``: after "with sbatch" (" on perlmutter")."""
    if entry.preset == "?" or not entry.script:
        return (f"job {job_id} was recovered without its preset; resubmit its script "
                f"({entry.script_path or 'unknown'}) with sbatch{where}")
    return None


def plan_resubmit(entry: HistoryEntry, extra: Sequence[str] = ()) -> ResubmitPlan:
    """*Thread-side* (reads the preset): the plan to resubmit ``entry``'s job, with ``extra`` overrides on top.
    The diff compares the recorded script with the preset rendered now with the recorded overrides only."""
    from ntui.core.compose.presets import load_preset
    from ntui.core.compose.render import render
    from ntui.core.compose.spec import validate
    from ntui.core.problems import PresetError

    job_id = entry.job_id or "?"
    overrides = (*entry.overrides, *extra)
    if (recovered := without_preset(entry, job_id)) is not None:
        return ResubmitPlan(job_id, entry.preset, overrides, problem=recovered)
    ref = preset_ref(entry)
    try:
        loaded = load_preset(ref, entry.overrides)
    except PresetError as exc:
        first = exc.problems[0] if exc.problems else exc
        return ResubmitPlan(job_id, ref, overrides, problem=f"preset {ref} no longer loads: {first}")
    spec, problems = validate(loaded)
    if spec is None:
        errors = [p for p in problems if p.is_error]
        first_error = str(errors[0]) if errors else "it does not validate"
        return ResubmitPlan(job_id, ref, overrides,
                            problem=f"preset {ref} no longer renders with its overrides: {first_error}")
    now = render(spec)
    diff = script_diff(entry.script, now, f"job {job_id}", "now") if now != entry.script else ""
    return ResubmitPlan(job_id, ref, overrides, diff)
