"""ntui.core.slurm.options: one table of sbatch's and srun's options, and the views the rest of ntui reads."""

from __future__ import annotations

import re

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.slurm.options import (
    GPU_OPTIONS,
    INT_OPTIONS,
    OPTIONS,
    SBATCH,
    SBATCH_ALIASES,
    SBATCH_FLAGS,
    SBATCH_OPTIONS,
    SBATCH_PURE_FLAGS,
    SBATCH_SHORT,
    SRUN,
    SRUN_FLAGS,
    SRUN_SHORT,
    srun_word,
)


def test_one_row_per_option_and_command_and_short_forms_unique() -> None:
    rows = [(o.name, o.sbatch, o.srun) for o in OPTIONS]
    assert len(rows) == len(set(rows))
    assert all(o.sbatch or o.srun for o in OPTIONS)
    for command, short in (("sbatch", SBATCH_SHORT), ("srun", SRUN_SHORT)):
        rows = [o for o in OPTIONS if getattr(o, command)]
        forms = [f for f in (getattr(o, f"{command}_short") for o in rows) if f]
        assert len(forms) == len(set(forms)) == len(short), command
        assert all(re.fullmatch(r"-[A-Za-z]", f) for f in forms)


def test_the_views_are_the_tables() -> None:
    assert SBATCH_PURE_FLAGS < SBATCH_FLAGS <= SBATCH_OPTIONS
    assert {"exclusive", "nice", "no-kill"} <= SBATCH_FLAGS - SBATCH_PURE_FLAGS  # --opt[=VALUE]: never the next word
    assert INT_OPTIONS == ("nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "cpus-per-gpu", "mincpus")
    assert GPU_OPTIONS == ("gpus-per-node", "gpus-per-task", "gpus", "gres")
    assert SBATCH_SHORT["-N"] == "nodes" and SRUN_SHORT["-l"] == "label" and "-l" not in SBATCH_SHORT
    assert SBATCH_ALIASES == {"tasks-per-node": "ntasks-per-node"}
    assert SBATCH["wait"].takes == "none" and SRUN["wait"].takes == "value"  # sbatch -W waits; srun -W=SECONDS
    assert "label" in SRUN_FLAGS and "label" not in SBATCH_OPTIONS


@pytest.mark.parametrize(("name", "value", "word"), [("gpu-bind", "none", "--gpu-bind=none"),
                                                     ("label", None, "--label"),
                                                     ("kill-on-bad-exit", "1", "--kill-on-bad-exit=1")])
def test_srun_words(name: str, value: str | None, word: str) -> None:
    assert srun_word(name, value) == word


@pytest.mark.parametrize(("name", "value"), [("gpus-per-nod", "4"), ("array", "0-3"), ("nodes", None),
                                             ("label", "1")])
def test_srun_word_refuses_what_srun_would(name: str, value: str | None) -> None:
    with pytest.raises(ValueError):
        srun_word(name, value)


def test_every_option_of_the_rendered_srun_line_is_srun_s() -> None:
    spec, problems = validate(load_preset("local-torchrun", ("sbatch.exclusive=true",)))
    assert spec is not None, [str(p) for p in problems]
    script = render(spec)
    srun_line = next(line for line in script.splitlines() if line.startswith("srun "))
    names = re.findall(r"(?<= )--([a-z-]+)", srun_line)
    assert names and all(n in SRUN for n in names), names
    directives = re.findall(r"^#SBATCH --([a-z-]+)", script, re.MULTILINE)
    assert directives and all(d in SBATCH_OPTIONS for d in directives), directives


def test_a_preset_may_write_a_flag_sbatch_has_that_the_old_list_lacked() -> None:
    spec, problems = validate(load_preset("local-torchrun", ("sbatch.quiet=true",)))
    assert spec is not None and not [p for p in problems if p.is_error], [str(p) for p in problems]
    _, problems = validate(load_preset("local-torchrun", ("sbatch.quiet=yes-please",)))
    assert any(p.rule == "V3" for p in problems), [str(p) for p in problems]
