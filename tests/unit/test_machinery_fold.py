"""The folded view of a generated script: the job whole and first, each block of ntui's machinery one marked line;
the script itself (what is submitted, what ``ntui render`` pipes) unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.jobfiles.machinery import MARK, fold_machinery
from tests.unit.test_render import SHIPPED, render_preset

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("preset", SHIPPED)
def test_every_shipped_preset_folds_to_its_job(preset: str) -> None:
    script = render_preset(preset)
    folded = fold_machinery(script)
    shown = folded.text.splitlines()
    lines = script.splitlines()
    # the job's lines, all of them and in order: directives, environment, setup, the launch
    shown_cut = [ln.split(": ")[0] if ln.startswith(MARK) else ln for ln in shown]
    # ... missing only ntui's blocks, and the blank lines beside their folded lines
    assert [ln for ln in shown_cut if ln] == [ln for ln in fold_machinery_kept(lines) if ln]
    assert [ln for ln in lines if ln.startswith("#SBATCH")] == [ln for ln in shown if ln.startswith("#SBATCH")]
    launch = lines.index(next(ln for ln in lines if ln.startswith("# Launch:")))
    assert lines[launch + 1:launch + 3] == shown[shown.index(lines[launch]) + 1:shown.index(lines[launch]) + 3]
    # each block of ntui's is one marked line that says how many lines it holds; nothing of it shows
    marks = [ln for ln in shown if ln.startswith(MARK)]
    assert len(marks) == folded.folds >= 1
    assert sum(int(m.split(": ")[1].split()[0]) for m in marks) == folded.machinery_lines
    assert not any(ln.startswith("ntui_journal()") or "nvidia-smi -l" in ln for ln in shown)
    assert folded.job_lines + folded.machinery_lines == sum(1 for ln in lines if ln)
    assert len(shown) < len(lines) - 50


def fold_machinery_kept(lines: list[str]) -> list[str]:
    """The script's lines with each marked block replaced by its first line (an independent reading)."""
    out: list[str] = []
    skipping = False
    for i, ln in enumerate(lines):
        if ln.startswith(MARK) and (i == 0 or lines[i - 1] == ""):
            out.append(ln.split(": ")[0])
            skipping = True
        elif skipping and ln:
            continue
        else:
            skipping = False
            out.append(ln)
    return out


def test_a_script_without_marks_shows_as_it_is() -> None:
    old = "#!/bin/bash\n#SBATCH -N 2\n\n# The job's event journal (J2): an older script\nntui_journal() { :; }\n"
    folded = fold_machinery(old)
    assert folded.text == old and folded.folds == 0 and folded.machinery_lines == 0


def test_a_mark_inside_a_block_is_not_a_fold() -> None:
    script = f"#!/bin/bash\nset -e\n{MARK}not at a block's start\necho job\n"
    assert fold_machinery(script).text == script


def test_ntui_render_piped_is_the_whole_script() -> None:
    res = subprocess.run([sys.executable, "-m", "ntui", "render", "local-torchrun"], capture_output=True,
                         text=True, timeout=60, cwd=REPO)
    assert res.returncode == 0, res.stderr
    assert res.stdout == render_preset("local-torchrun")
    assert fold_machinery(res.stdout).folds >= 1
