"""The resubmit plan (:mod:`ntui.core.jobs.resubmit`), shared by ``ntui resubmit`` and the jobs view's key."""

from __future__ import annotations

from pathlib import Path

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.jobs.resubmit import plan_resubmit, preset_ref, script_diff
from ntui.core.records.history import HistoryEntry

PRESET = "local-srun"


def _entry(script: str, *, preset: str = PRESET, preset_path: str | None = None,
           overrides: tuple[str, ...] = ("sbatch.time=0:10:00",)) -> HistoryEntry:
    return HistoryEntry(token="t", job_id="41", cluster=None, preset=preset, preset_path=preset_path,  # noqa: S106
                        overrides=overrides, job_name="x", launcher="srun", nodes=1, world_size=1, log_dir="/tmp",
                        log_stem="x", script=script, script_path=None, created_at=0.0, submitted_at=0.0,
                        status="submitted")


def _render(overrides: tuple[str, ...]) -> str:
    spec, _ = validate(load_preset(PRESET, overrides))
    assert spec is not None
    return render(spec)


def test_an_unchanged_preset_gives_no_diff_and_extra_overrides_go_on_top() -> None:
    same = _render(("sbatch.time=0:10:00",))
    plan = plan_resubmit(_entry(same), ("sbatch.nodes=2",))
    assert (plan.problem, plan.diff, plan.ref) == (None, "", PRESET)
    assert plan.overrides == ("sbatch.time=0:10:00", "sbatch.nodes=2")


def test_a_changed_preset_gives_the_unified_diff() -> None:
    now = _render(("sbatch.time=0:10:00",))
    old = now.replace("#SBATCH --time=00:10:00", "#SBATCH --time=00:20:00")
    assert old != now
    plan = plan_resubmit(_entry(old))
    assert plan.diff == script_diff(old, now, "job 41", "now")
    assert "-#SBATCH --time=00:20:00" in plan.diff and "+#SBATCH --time=00:10:00" in plan.diff


def test_problems_are_said_not_raised(tmp_path: Path) -> None:
    recovered = plan_resubmit(_entry("", preset="?"))
    assert recovered.problem is not None and "recovered without its preset" in recovered.problem
    gone = plan_resubmit(_entry("#!/bin/bash\n", preset="no-such-preset"))
    assert gone.problem is not None and "no-such-preset" in gone.problem
    bad = plan_resubmit(_entry("#!/bin/bash\n", overrides=("sbatch.nodes=0",)))
    assert bad.problem is not None and "no longer renders" in bad.problem
    path = tmp_path / "p.yaml"
    assert preset_ref(_entry("", preset_path=str(path))) == PRESET  # the file is gone: by name
    path.write_text("x")
    assert preset_ref(_entry("", preset_path=str(path))) == str(path)
