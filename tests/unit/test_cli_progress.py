"""``ntui progress FILE``: the real progress captures (tests/data/progress/) read as a log file, whole or cut at
mid-run, with and without the time left."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "progress"


def _ntui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ntui", "progress", *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO)


def _capture(name: str) -> Path:
    return sorted(DATA.glob(f"*/{name}.out"))[-1]


def _mid_run(name: str, tmp_path: Path) -> Path:
    """The capture as it was half-way: cut before its first bar at step 40 of 80 was followed by the next."""
    text = _capture(name).read_bytes()  # (read_text would turn the bars' \r into newlines)
    cut = text.index(b"| 41/80")
    path = tmp_path / f"{name}.out"
    path.write_bytes(text[:text.rindex(b"\r", 0, cut)])
    return path


def test_a_finished_run_is_done_with_its_last_metrics() -> None:
    res = _ntui(str(_capture("hf-trainer")))
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == "step 80 of 80: done" and "loss " in res.stdout


def test_half_way_with_time_to_spare_finishes_before_the_limit(tmp_path: Path) -> None:
    res = _ntui(str(_mid_run("tqdm-loop", tmp_path)), "--time-left", "10:00")
    assert res.returncode == 0
    assert res.stdout.startswith("step 40 of 80: finishes in about ") and "before the limit" in res.stdout


def test_half_way_short_of_time_is_cut_and_exits_1(tmp_path: Path) -> None:
    res = _ntui(str(_mid_run("tqdm-loop", tmp_path)), "--time-left", "0:05", "--json")
    assert res.returncode == 1
    out = json.loads(res.stdout)
    assert out["step"] == 40 and out["total"] == 80 and 40 < out["cut_at"] < 80
    assert out["words"].startswith(f"will be cut at about step {out['cut_at']} of 80")


@pytest.mark.parametrize(("args", "said"), [
    (["--pattern", r"step (\d+"], "--pattern: not a regular expression"),
    (["--pattern", r"loss (?P<loss>\S+)"], "--pattern: it names no step"),
])
def test_a_bad_pattern_is_refused_with_exit_2(args: list[str], said: str) -> None:
    res = _ntui(str(_capture("tqdm-loop")), *args)
    assert res.returncode == 2 and said in res.stderr


def test_a_plain_print_read_with_a_pattern(tmp_path: Path) -> None:
    log = tmp_path / "train.out"
    log.write_text("".join(f"epoch 0 | iter {i}/50 | loss {1 / i:.3f}\n" for i in range(1, 21)))
    res = _ntui(str(log), "--pattern", r"iter (?P<step>\d+)/(?P<total>\d+) \| loss (?P<loss>\S+)", "--json")
    out = json.loads(res.stdout)
    assert (out["step"], out["total"], out["metrics"]["loss"]) == (20, 50, 0.05)


def test_neither_a_file_nor_a_job_exits_2(tmp_path: Path) -> None:
    res = _ntui(str(tmp_path / "no-such.out"))
    assert res.returncode == 2 and "neither a file nor a job submitted by ntui" in res.stderr
