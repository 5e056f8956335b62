"""ntui.core.errors.describe_error: the one wording of a failed call, for the core, the CLI and the UI."""

from __future__ import annotations

from pathlib import Path

from ntui.core.compose.presetfiles import PresetSaveRefused
from ntui.core.errors import NO_SLURM, describe_error
from ntui.core.problems import Problem, Severity, Source
from ntui.core.slurm.runner import SlurmNotInstalled, SlurmRejected


def test_slurms_reason_and_the_missing_client() -> None:
    assert describe_error(SlurmRejected("sbatch refused", reason="Invalid account")) == \
        "Slurm rejected it: Invalid account"
    assert describe_error(SlurmNotInstalled("no sbatch")) == NO_SLURM
    assert describe_error(None) == "failed"
    assert describe_error(ValueError("bad")) == "ValueError: bad"


def test_a_refused_save_is_said_as_it_is() -> None:
    problem = Problem(Source("p.yaml", 3), "sbatch.nodes", "expected a positive integer", Severity.ERROR)
    refused = PresetSaveRefused(Path("p.yaml"), [problem])
    assert describe_error(refused) == str(refused)
    assert not describe_error(refused).startswith("PresetSaveRefused")
