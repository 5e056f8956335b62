"""Progress on the real dev cluster: real libraries' output read from the jobs' rank-0 logs by ``ntui progress``.

Every case is submitted at once when the module starts (one node, one CPU each, except accelerate's two workers)
and runs ``examples/progress_train.py`` at a steady pace (0.4 s a step):

* the Hugging Face Trainer, a Lightning Trainer (its default tqdm bar), an accelerate script with a tqdm loop,
  plain ``step N/T loss X`` prints under torchrun read through the preset's ``progress:`` pattern, and the Megatron
  and torchtitan line forms: at the end each job's step (and total, where the program prints one) is right; where
  there is a total, the ETA said once the run is past half way is within 15 % of the real end (the rank-0 log's
  last write); ``--chart`` draws the loss;
* a run whose pace cannot meet its one-minute limit is said to be cut, with the step where (exit 1), then cancelled.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ntui.core.progress.board import ProgressBoard
from ntui.core.progress.lines import Pattern
from ntui.core.progress.series import estimate
from tests.cluster.conftest import REPO, DevCluster
from tests.cluster.test_e2e import ntui

pytestmark = pytest.mark.cluster

STEPS = 80
STEP_S = 0.4
EXAMPLE = REPO / "examples" / "progress_train.py"
PLAIN = r"^step (?P<step>\d+)/(?P<total>\d+) loss (?P<loss>\S+)$"
PATTERN = Pattern(re.compile(PLAIN))
ONE = {"sbatch": {"nodes": 1, "ntasks-per-node": 1, "cpus-per-task": 1, "time": "00:05:00"}}
#: How long a case may take from its submission to its end (imports of transformers on a loaded machine included).
CASE_TIMEOUT_S = 8 * 60


@dataclass
class Case:
    name: str
    base: str  # the shipped preset it extends
    style: str
    total: int | None  # what the program says of its total while it runs (None: it prints none)
    metric: str
    extra: dict[str, Any] = field(default_factory=dict)
    steps: int = STEPS
    #: the total known once the run has ended, where only its end line says it (Lightning's "`max_epochs=4`
    #: reached": its 4 epochs of 20 steps); else the total above
    ended_total: int | None = None
    job_id: str = ""
    log: Path = field(default_factory=Path)
    mid: dict[str, Any] | None = None  # the CLI's first estimate past half way
    viewed: dict[str, Any] | None = None  # the view's reader's first estimate past half way
    last: dict[str, Any] | None = None


CASES = {
    "hf": Case("hf", "local-srun", "hf", STEPS, "loss", ONE),
    "lightning": Case("lightning", "local-srun", "lightning", None, "train_loss", ONE, ended_total=STEPS),
    "accelerate-tqdm": Case("accelerate-tqdm", "local-accelerate", "tqdm", STEPS, "loss",
                            {"sbatch": {"nodes": 1}, "env": {"ACCELERATE_USE_CPU": "true"}}),
    "torchrun-plain": Case("torchrun-plain", "local-torchrun", "plain", STEPS, "loss",
                           {"sbatch": {"nodes": 1}, "progress": {"pattern": PLAIN}}),
    "megatron": Case("megatron", "local-srun", "megatron", STEPS, "lm_loss", ONE),
    "torchtitan": Case("torchtitan", "local-srun", "torchtitan", None, "loss", ONE),
}
CUT = Case("cut", "local-srun", "tqdm", 1000, "loss",
           {"sbatch": {**ONE["sbatch"], "time": "00:01:00"}}, steps=1000)


def _submit(cluster: DevCluster, case: Case, tmp: Path, state: Path) -> None:
    logs = tmp / case.name
    preset = tmp / f"{case.name}.yaml"
    preset.write_text(json.dumps({
        "extends": str(REPO / "presets" / f"{case.base}.yaml"), "name": f"progress-{case.name}",
        "script": str(EXAMPLE), "args": ["--style", case.style, "--steps", str(case.steps),
                                         "--step-seconds", str(STEP_S)],
        "logs": {"dir": str(logs)}, **case.extra}))
    res = ntui(cluster, "submit", str(preset), env={"XDG_STATE_HOME": str(state)}, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    case.job_id = res.stdout.strip().splitlines()[-1]
    case.log = logs / f"progress-{case.name}-{case.job_id}-rank-0.out"


def _progress(cluster: DevCluster, case: Case, state: Path, *extra: str) -> tuple[int, str]:
    res = ntui(cluster, "progress", case.job_id, *extra, env={"XDG_STATE_HOME": str(state)}, timeout=120)
    return res.returncode, res.stdout + res.stderr


def _past_half(step: int | None, steps: int) -> bool:
    """Past half way, with at least 30 % of the run left: an estimate whose error can be judged (the follow loop
    reads the views four times a second and asks the CLI as soon as a job's view is in this window)."""
    return step is not None and steps // 2 <= step < steps * 7 // 10


def _before_the_end(step: int | None, steps: int) -> bool:
    return step is not None and steps // 2 <= step < steps * 9 // 10


def _state(cluster: DevCluster, job_id: str) -> str:
    return cluster.run("squeue", "-h", "-j", job_id, "-o", "%T").stdout.strip()


@pytest.fixture(scope="module")
def followed(dev_cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Case], Path]:
    """Every case submitted, then followed until its job ends: the view's reader four times a second, ``ntui progress
    --json`` once the view is past half way (so that a busy machine's slow CLI calls never miss the window) and
    every couple of seconds for the job's state."""
    tmp = tmp_path_factory.mktemp("progress-jobs")
    state = tmp / "state"
    for case in CASES.values():
        _submit(dev_cluster, case, tmp, state)
    deadline = time.monotonic() + CASE_TIMEOUT_S  # a bound on the wait, not a claim about the jobs' speed
    live = dict(CASES)
    # the jobs view's reader beside the CLI, one per job (a board follows the jobs of its last call): lines without a
    # time of their own get the time they were read, so a log of plain prints has a pace there, not in one read
    boards = {name: ProgressBoard() for name in CASES}
    next_state = 0.0
    while live:
        assert time.monotonic() < deadline, {n: (c.job_id, c.last) for n, c in live.items()}
        states_now = time.monotonic() >= next_state
        for name, case in list(live.items()):
            if not case.log.exists():
                continue
            view = boards[name].poll({name: str(case.log)},
                                     {name: PATTERN} if "progress" in case.extra else None).get(name)
            now = time.time()
            guess = estimate(view.series(), now=now, time_left_s=None) if view is not None else None
            in_window = guess is not None and _past_half(guess.step, case.steps)
            if case.viewed is None and in_window and guess is not None and guess.eta_s is not None:
                case.viewed = {"at": now, "eta_s": guess.eta_s, "step": guess.step}
            if states_now or (case.mid is None and in_window):
                rc, out = _progress(dev_cluster, case, state, "--json")
                if rc in (0, 1):
                    got = json.loads(out[: out.rindex("}") + 1])
                    case.last = got
                    # asked while the view was in the window; a busy machine's CLI may answer a few steps on
                    if case.mid is None and _before_the_end(got["step"], case.steps) and got["eta_s"] is not None:
                        case.mid = got
            if states_now and not _state(dev_cluster, case.job_id):
                del live[name]
        if states_now:
            next_state = time.monotonic() + 2
        time.sleep(0.25)
    for case in CASES.values():  # the last word, from the whole log
        rc, out = _progress(dev_cluster, case, state, "--json")
        assert rc == 0, (case.name, out)
        case.last = json.loads(out[: out.rindex("}") + 1])
    return CASES, state


@pytest.mark.parametrize("name", list(CASES))
def test_each_jobs_step_is_right_at_its_end(followed: tuple[dict[str, Case], Path], name: str) -> None:
    case = followed[0][name]
    got = case.last
    assert got is not None, case
    total = case.total if case.ended_total is None else case.ended_total
    assert (got["step"], got["total"]) == (case.steps, total), (name, got)
    assert case.metric in got["metrics"], (name, got["metrics"])
    if total is not None:
        assert got["words"] == f"step {case.steps} of {case.steps}: done", got
    else:
        assert got["words"].startswith(f"step {case.steps} (no total printed)"), got


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.total is not None])
def test_the_eta_past_half_way_is_within_15_percent_of_the_real_end(followed: tuple[dict[str, Case], Path],
                                                                   name: str) -> None:
    case = followed[0][name]
    ended = case.log.stat().st_mtime  # the log's last write: the program's end
    said = [(who, got) for who, got in (("ntui progress", case.mid), ("the view", case.viewed)) if got is not None]
    # plain prints carry no time: one read of the whole file has no pace (the CLI then says so); the view has one
    assert case.viewed is not None and (case.mid is not None or case.style == "plain"), (name, case.last)
    for who, got in said:
        real = ended - got["at"]
        assert real > 0, (name, who, got, ended)
        # 15 %, and never less than 2 s: a short remainder's pace jitters by a step or two on a busy machine
        assert abs(got["eta_s"] - real) <= max(0.15 * real, 2.0), (name, who, got["eta_s"], real, got)


def test_the_chart_draws_the_loss(followed: tuple[dict[str, Case], Path], dev_cluster: DevCluster) -> None:
    cases, state = followed
    rc, out = _progress(dev_cluster, cases["hf"], state, "--chart", "--width", "60")
    assert rc == 0, out
    lines = out.splitlines()
    chart = lines[next(i for i, x in enumerate(lines) if x.startswith("loss over ")):]
    assert len(chart) >= 10 and all(len(x) <= 60 for x in chart), out
    assert chart[0].startswith("loss over ") and f" to {STEPS:,}" in chart[0], out
    assert any("┤" in x for x in chart) and chart[-1].split() == ["loss", "step"], out  # value ticks, axis names
    assert any("⠁" <= c <= "⣿" for x in chart for c in x), out  # the line itself, in braille dots


def test_a_run_that_its_limit_will_cut_is_said_so_with_the_step(dev_cluster: DevCluster, tmp_path: Path) -> None:
    state = tmp_path / "state"
    _submit(dev_cluster, CUT, tmp_path, state)
    try:
        deadline = time.monotonic() + 180
        said = ""
        while time.monotonic() < deadline:
            if CUT.log.exists() and _state(dev_cluster, CUT.job_id) == "RUNNING":
                rc, said = _progress(dev_cluster, CUT, state)
                if rc == 1:
                    break
            time.sleep(2)
        assert said.startswith("will be cut at about step "), said
        step = int(said.split("step ", 1)[1].split(" ", 1)[0].replace(",", ""))
        # about 2.5 steps a second for the time the minute has left: far short of 1,000
        assert 20 < step < 200, said
        assert "of 1,000" in said and "add " in said, said
    finally:
        dev_cluster.run("scancel", CUT.job_id)
