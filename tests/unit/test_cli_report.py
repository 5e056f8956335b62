"""``ntui report``: history lookup, Slurm facts from captured 22.05 output, text and JSON, exit codes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ntui import cli
from ntui.cli import report as cli_report
from ntui.core.jobfiles.runfile import run_path
from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLE_FIELDS, sample_path
from ntui.core.jobs.report import squeeze
from ntui.core.records.history import History
from ntui.core.slurm.durations import time_limit_from_script
from tests.support.fakes import FakeRunner, capture, result

T0 = 1_780_000_000.0


def _history(log_dir: Path, job_id: str = "12", extra: str = "") -> None:
    h = History()
    script = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=06:00:00\nset -euo pipefail\n" + extra
    h.record_intent(token="t", preset="local-torchrun", preset_path=None, overrides=["sbatch.nodes=2"],
                    job_name="try", launcher="torchrun", nodes=2, world_size=4, log_dir=str(log_dir),
                    log_stem="try", script=script)
    h.record_submitted("t", job_id, None, None)
    h.close()


def _samples(log_dir: Path, node: str, util: int, n: int = 30, job_id: str = "12") -> None:
    stamp = lambda t: time.strftime("%Y/%m/%d %H:%M:%S.000", time.gmtime(t))  # noqa: E731
    rows = "".join(f"{stamp(T0 + 10 * k)}, {i}, GPU-SIM-{node}-{i}, {util if i else 1}, 9000, 81559, 300.0, 50\n"
                   for k in range(n) for i in range(2))
    header = f"{HEADER_TAG} v1 job={job_id} node={node} interval=10 status=sampling fields={','.join(SAMPLE_FIELDS)}\n"
    Path(sample_path(str(log_dir), "try", job_id, node)).write_text(header + rows + f"{HEADER_TAG} end\n")


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> FakeRunner:
    fake = FakeRunner({
        ("scontrol", "show", "job"): capture("scontrol_show_job_unknown"),  # the controller forgot the job
        "sacct": capture("sacct_steps_2node"),
    })
    monkeypatch.setattr(cli_report, "cli_runner", lambda: fake)
    return fake


def test_report_text(tmp_path: Path, runner: FakeRunner, capsys: pytest.CaptureFixture[str]) -> None:
    _history(tmp_path)
    _samples(tmp_path, "nid001", 90)
    _samples(tmp_path, "nid002", 90)
    assert cli.run(["report", "12", "--width", "100"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("job 12 (FAILED): 2 node(s), 4 GPU(s) sampled  [SIMULATED nvidia-smi]")
    assert "elapsed 0:09 of 5:00 (3 %)" in out  # sacct: the job row's ElapsedRaw and Timelimit
    assert "GPU 0 on nid001 idle 100 % of the time" in out and "GPU 0 on nid002 idle 100 % of the time" in out
    assert "peak GPU memory 11 % of 80 GiB" in out
    assert "CPU (sacct): efficiency" in out and "ntui-gpu-sampler" in out
    assert [c.argv[0] for c in runner.history] == ["scontrol", "sacct"]


def test_report_json_and_short_run_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeRunner({
        ("scontrol", "show", "job"): capture("scontrol_show_job_unknown"),
        "sacct": capture("sacct_no_accounting"),
    })
    monkeypatch.setattr(cli_report, "cli_runner", lambda: fake)
    _history(tmp_path)
    _samples(tmp_path, "nid001", 90)
    assert cli.run(["report", "12", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["state"] is None and data["elapsed_source"] == "samples" and data["time_limit_s"] == 6 * 3600
    assert data["cpu"]["available"] is False and "accounting is disabled" in data["cpu"]["reason"]
    gpu1 = data["nodes"][0]["gpus"][1]
    assert gpu1["util_mean"] == 90 and gpu1["samples"] == 30 and len(gpu1["util_series"]) > 0
    # Slurm forgot the job, but every node's sampler wrote its end line: the script ended
    assert data["finished"] is True
    assert data["run"] is None  # not a long run
    (short,) = [f for f in data["findings"] if f["kind"] == "short-run"]
    assert short["fix"] == "sbatch.time=00:15:00"  # 300 s of samples x 1.5, rounded up to 15 min
    # without the end line (still running, or the state is unknown): no time-limit advice
    path = Path(sample_path(str(tmp_path), "try", "12", "nid001"))
    path.write_text(path.read_text().replace(f"{HEADER_TAG} end\n", ""))
    assert cli.run(["report", "12", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["finished"] is False and "short-run" not in [f["kind"] for f in data["findings"]]


def test_report_of_a_job_not_from_ntui_exits_2(runner: FakeRunner, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(["report", "4242"]) == 2
    assert "not submitted by ntui" in capsys.readouterr().err
    assert runner.calls == 0


def test_report_without_samples_says_where_it_looked(tmp_path: Path, runner: FakeRunner,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _history(tmp_path)
    (tmp_path / "try-12-gpu-srun.log").write_text("ntui: Slurm 21.08.8: --overlap shares GPUs only from 22.05\n")
    assert cli.run(["report", "12"]) == 0
    out = capsys.readouterr().out
    # sacct knows the job's nodes: each one is named with the file it should have written
    assert f"no GPU data: nid001: no sample file ({tmp_path}/try-12-gpu-nid001.csv)" in out
    assert f"no GPU data: nid002: no sample file ({tmp_path}/try-12-gpu-nid002.csv)" in out
    assert out.splitlines()[1] == "the sampler step said: ntui: Slurm 21.08.8: --overlap shares GPUs only from 22.05"


def test_slurm_failure_still_reports_samples_and_exits_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeRunner({("scontrol", "show", "job"): result(stderr="slurm_load_jobs error: Unable to contact "
                                                           "slurm controller (connect failure)", returncode=1)})
    monkeypatch.setattr(cli_report, "cli_runner", lambda: fake)
    _history(tmp_path)
    _samples(tmp_path, "nid001", 90)
    assert cli.run(["report", "12"]) == 3
    captured_out = capsys.readouterr()
    assert "report from the samples alone" in captured_out.err and "nid001" in captured_out.out


def test_helpers() -> None:
    assert time_limit_from_script("#SBATCH --time=01:30:00\n") == 5400
    assert time_limit_from_script("#SBATCH -t 30\n") == 1800
    assert time_limit_from_script("#SBATCH --time='2-00:00:00'\n") == 2 * 86400
    assert time_limit_from_script("#SBATCH --nodes=1\n") is None
    assert squeeze([0, 100, None, None, 50, 50], 3) == [50.0, None, 50.0]
    assert squeeze([1.0, 2.0], 5) == [1.0, 2.0]


def test_ended_job_gets_the_time_limit_fix_as_a_resubmit_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeRunner({
        ("scontrol", "show", "job"): capture("scontrol_show_job_completed"),  # RunTime 0 of TimeLimit 02:00:00
        "sacct": capture("sacct_no_accounting"),
    })
    monkeypatch.setattr(cli_report, "cli_runner", lambda: fake)
    _history(tmp_path, "26")
    assert cli.run(["report", "26", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["state"] == "COMPLETED" and data["finished"] and data["time_limit_s"] == 7200
    (short,) = [f for f in data["findings"] if f["kind"] == "short-run"]
    assert short["fix"] == "sbatch.time=00:15:00"
    assert short["fix_command"] == "ntui submit local-torchrun --set sbatch.nodes=2 --set sbatch.time=00:15:00"


def test_no_samples_and_no_known_nodes_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeRunner({
        ("scontrol", "show", "job"): capture("scontrol_show_job_unknown"),
        "sacct": capture("sacct_no_accounting"),
    })
    monkeypatch.setattr(cli_report, "cli_runner", lambda: fake)
    _history(tmp_path)
    assert cli.run(["report", "12"]) == 0
    out = capsys.readouterr().out
    assert f"no GPU data: (all nodes): no sample file ({tmp_path}/try-12-gpu-<node>.csv)" in out
    assert "CPU: Slurm accounting is disabled on this cluster (no slurmdbd): no CPU numbers" in out


def _ev(kind: str, t: float, job: str, **fields: object) -> str:
    return json.dumps({"v": 1, "ev": kind, "t": t, "job": job, "run": "12", **fields})


def test_a_chain_link_is_reported_as_an_allocation_of_its_run(tmp_path: Path, runner: FakeRunner,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _history(tmp_path, extra="NTUI_RUN_FILE=x\n")  # a run: only its first job (12) is in the history
    Path(run_path(str(tmp_path), "try", "12")).write_text("\n".join([
        _ev("alloc", T0, "12", restart=0, how="chain", max=5),
        _ev("signal", T0 + 60, "12", sig="USR2", elapsed=60, cause="timelimit"),
        _ev("continue", T0 + 65, "12", how="chain", cause="timelimit", count=1, next="13"),
        _ev("alloc", T0 + 80, "13", restart=1, how="chain", max=5),
        _ev("stop", T0 + 140, "13", why="done"),
    ]) + "\n")
    _samples(tmp_path, "nid001", 90, job_id="12")
    _samples(tmp_path, "nid001", 40, job_id="13")
    assert cli.run(["report", "13", "--width", "100"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("job 13 ")  # the link's own samples, found through its run's log dir and stem
    assert "run 12: 2 allocations (jobs 12, 13), done, 2:05 of training" in out
    assert "this report: job 13, allocation 2 of 2" in out and "the other allocations: ntui report 12" in out
    assert "  2. job 13 (restart 1): 1:00; done" in out
    assert cli.run(["report", "12", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["run"]["jobs"] == ["12", "13"] and data["run"]["this_report_allocations"] == [1]
    assert [a["ended_by"] for a in data["run"]["allocations"]] == ["time limit, checkpointed, chained", "done"]
    assert data["nodes"][0]["gpus"][1]["util_mean"] == 90  # job 12's samples, not its successor's
    assert cli.run(["report", "14"]) == 2  # not a link of any run


def test_a_requeued_run_is_reported_over_every_allocation(tmp_path: Path, runner: FakeRunner,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _history(tmp_path, extra="NTUI_RUN_FILE=x\n")
    Path(run_path(str(tmp_path), "try", "12")).write_text("\n".join([
        _ev("alloc", T0, "12", restart=0, how="requeue", max=5),
        _ev("continue", T0 + 65, "12", how="requeue", cause="timelimit", count=1),
        _ev("alloc", T0 + 300, "12", restart=1, how="requeue", max=5),
    ]) + "\n")
    _samples(tmp_path, "nid001", 90)
    assert cli.run(["report", "12"]) == 0
    out = capsys.readouterr().out
    assert "this report: job 12, allocations 1, 2 of 2" in out and "the other allocations" not in out
