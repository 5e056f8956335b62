"""The long run's wait for its launch step (T10), run in bash: the status it returns is the step's own, also when
the checkpoint trap interrupted the wait and the step ended before the wait was asked again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ntui.core.compose.longrun import RunConf, run_lines

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the script's shell is bash")

#: The batch shell held in the trap until the step is gone: what a loaded login or compute node does to it now
#: and then (the run stopped as "failed" with status 140, SIGUSR2's, after its ranks had saved).
HELD_IN_TRAP = """
eval "$(declare -f ntui_run_checkpoint | sed '1s/ntui_run_checkpoint/ntui_run_checkpoint_first/')"
ntui_run_checkpoint() {
    ntui_run_checkpoint_first
    while kill -0 "$NTUI_RUN_STEP" 2>/dev/null; do sleep 0.02; done
}
"""


def wait_status(tmp: Path, step: str, hold: bool) -> tuple[int, str]:
    """The batch shell's status of a step (bash code, run in the background) that the checkpoint signal reaches
    0.3 s after it starts, as the script's lines have it."""
    script = "\n".join([
        "set -euo pipefail",
        *run_lines(RunConf(grace=5, time_limit_s=3600), str(tmp), "lr"),
        HELD_IN_TRAP if hold else "",
        f"bash -c {step!r} &",
        "NTUI_RUN_STEP=$!",
        "(sleep 0.3; kill -s USR2 $$) &",
        'if ntui_run_wait; then echo "status=0"; else echo "status=$?"; fi',
    ])
    res = subprocess.run(["bash", "-c", script], env={"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": "5"}, text=True,
                         capture_output=True, timeout=60, cwd=tmp, check=False)
    said = [line for line in res.stdout.splitlines() if line.startswith("status=")]
    assert res.returncode == 0 and said, res.stdout + res.stderr
    return int(said[-1].removeprefix("status=")), res.stdout


SAVES = 'trap "exit 0" USR2; while :; do sleep 0.05; done'


@pytest.mark.parametrize("hold", [False, True], ids=["prompt", "held-in-trap"])
def test_a_step_that_saved_on_the_signal_is_status_0(tmp_path: Path, hold: bool) -> None:
    status, out = wait_status(tmp_path, SAVES, hold)
    assert status == 0, out
    assert "SIGUSR2 after" in out  # the trap ran: the signal came while the shell waited


def test_a_step_that_fails_after_the_signal_keeps_its_status(tmp_path: Path) -> None:
    status, out = wait_status(tmp_path, 'trap "exit 3" USR2; while :; do sleep 0.05; done', hold=True)
    assert status == 3, out


def test_a_step_killed_by_a_signal_keeps_128_plus_n(tmp_path: Path) -> None:
    # SIGUSR2's default action (no handler in the step): the status the trap's interruption also gives
    status, out = wait_status(tmp_path, "while :; do sleep 0.05; done", hold=True)
    assert status == 128 + 12, out


def test_a_step_that_ends_before_the_signal_is_its_status(tmp_path: Path) -> None:
    status, out = wait_status(tmp_path, "exit 4", hold=False)
    assert status == 4, out


def _after_the_wait(tmp: Path, step: str) -> str:
    """The script's lines from the launch on (the wait, what a failure or a done run does), the step's status
    being the given bash code's; the run file's last event."""
    from ntui.core.compose.longrun import continue_line, launch_lines
    from ntui.core.jobfiles.journal import journal_lines

    script = "\n".join([
        "set -euo pipefail",
        *journal_lines(str(tmp), "lr"),  # as in every rendered script: the failure path calls into it
        *run_lines(RunConf(grace=5, time_limit_s=3600), str(tmp), "lr"),
        *launch_lines(f"bash -c {step!r}"),
        continue_line(),
        'echo "continued"',
    ])
    res = subprocess.run(["bash", "-c", script], env={"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": "5"}, text=True,
                         capture_output=True, timeout=60, cwd=tmp, check=False)
    events = (tmp / "lr-5.run").read_text().splitlines()
    return f"{res.returncode} {events[-1]}"


def test_a_program_that_said_done_and_then_died_of_the_signal_is_done(tmp_path: Path) -> None:
    # the warning fell due as the last step ended: the program wrote the done marker, and the signal killed it as
    # it shut down (128 + SIGUSR2)
    said = _after_the_wait(tmp_path, ': >>"$NTUI_RUN_DONE"; kill -s USR2 $$')
    assert said.startswith("0 ") and '"why":"done"' in said, said


def test_the_same_status_without_the_done_marker_is_a_failure(tmp_path: Path) -> None:
    said = _after_the_wait(tmp_path, "kill -s USR2 $$")
    assert said.startswith("140 ") and '"why":"failed"' in said and '"rc":140' in said, said
