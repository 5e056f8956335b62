"""The Slurm clients behind "why it waits" and "what would start sooner", on outputs captured from Slurm 22.05.8
(tests/data/slurm/README.md, "Waiting"): squeue --start, sprio, sacctmgr limits, a job's Dependency=, its batch
script, sbatch --test-only across versions, and the srun shell's argv."""

from __future__ import annotations

from datetime import datetime

import pytest

from ntui.core.slurm.runner import CommandResult, JobNotFound
from ntui.core.slurm.sacctmgr import (
    build_assoc_limits_argv,
    build_qos_limits_argv,
    parse_assoc_limits,
    parse_qos_limits,
    qos_limits,
)
from ntui.core.slurm.sbatch import parse_sbatch_test_only
from ntui.core.slurm.scontrol import batch_script, build_batch_script_argv, parse_dependency, parse_scontrol_jobs
from ntui.core.slurm.sprio import build_sprio_argv, job_priority, parse_sprio
from ntui.core.slurm.squeue import build_start_argv, parse_start, start_estimates
from ntui.core.slurm.srun import build_shell_argv
from tests.support.fakes import FakeRunner, capture, result


def test_start_argv_uses_o_which_start_keeps() -> None:
    argv = build_start_argv(["113"])
    assert argv[:5] == ["squeue", "--local", "--noheader", "--start", "--jobs=113"]
    assert argv[5] == "-o" and argv[6].split("\x1f") == ["%i", "%T", "%r", "%S", "%Y", "%D", "%P"]
    assert build_start_argv()[4] == "--me"
    with pytest.raises(ValueError):
        build_start_argv(["113;rm"])


def test_start_estimate_from_the_capture() -> None:
    (est,) = parse_start(capture("squeue_start_fields").stdout)
    assert est.job_id == "113" and est.state == "PENDING" and est.reason == "Resources"
    assert est.start == datetime(2026, 12, 1, 10, 9, 18) and est.sched_nodes == "nid001"
    assert est.num_nodes == 1 and est.partition == "debug"
    # the same estimate as scontrol's StartTime (the details the app already has)
    (details,) = parse_scontrol_jobs(capture("scontrol_show_job_pending_resources").stdout)
    assert details.start_time == "2026-12-01T10:09:18" and details.raw["SchedNodeList"] == "nid001"


def test_start_ignores_the_default_columns_it_prints_with_O() -> None:
    assert parse_start(capture("squeue_start_O_ignored").stdout) == ()  # why -o, not -O


def test_start_estimates_one_call_and_none_for_a_held_job() -> None:
    held = "111\x1fPENDING\x1fJobHeldUser\x1fN/A\x1f(null)\x1f1\x1fdebug\n"
    runner = FakeRunner({"squeue": result(stdout=held)})
    (est,) = start_estimates(runner)
    assert est.start is None and est.sched_nodes == "" and runner.calls == 1


def test_sprio_on_priority_basic_says_so() -> None:
    runner = FakeRunner({"sprio": capture("sprio_job_fields")})
    p = job_priority(runner, "113")
    assert not p.available and "priority/basic" in p.note and "multifactor" in p.note


def test_sprio_multifactor_factors() -> None:
    runner = FakeRunner({"sprio": capture("sprio_multifactor_fields")})
    p = job_priority(runner, "1")
    assert p.available and p.priority == 1037 and p.partition == "debug"
    assert dict(p.factors) == {"job size": 38.0, "partition": 1000.0}  # zero factors left out
    nice = parse_sprio(capture("sprio_multifactor_fields_all").stdout.splitlines()[2])
    assert nice.job_id == "3" and dict(nice.factors)["nice"] == 100.0


def test_sprio_of_a_job_that_is_not_pending() -> None:
    runner = FakeRunner({"sprio": capture("sprio_multifactor_unknown")})
    p = job_priority(runner, "999")
    assert not p.available and "Unable to find jobs" in p.note


def test_sprio_argv() -> None:
    assert build_sprio_argv("12")[:4] == ["sprio", "--noheader", "-j", "12"]
    with pytest.raises(ValueError):
        build_sprio_argv("-x")


def test_qos_and_assoc_limits() -> None:
    assert build_qos_limits_argv("normal")[:6] == ["sacctmgr", "-nP", "show", "qos", "where", "name=normal"]
    assert "account=ntuidev" in build_assoc_limits_argv("root", "ntuidev")
    with pytest.raises(ValueError):
        build_qos_limits_argv("a,b")
    # the dev cluster's QOS have no limits: every field empty
    assert [(q.owner, q.values) for q in parse_qos_limits(capture("sacctmgr_qos_limits").stdout)] == [
        ("QOS normal", ()), ("QOS ntuilow", ())]
    assocs = parse_assoc_limits(capture("sacctmgr_assoc_limits").stdout, "root")
    assert [a.owner for a in assocs] == ["association ntuiother/root", "association ntuidev/root",
                                         "association root/root"]
    # a QOS with limits, in the same format (16 fields after the name)
    line = "gpu_regular|4|10|gres/gpu=16|||node=64|||2-00:00:00|||||||\n"
    (q,) = parse_qos_limits(line)
    assert q.get("MaxJobsPerUser") == "4" and q.get("MaxTRESPerUser") == "gres/gpu=16"
    assert q.get("MaxTRESPerJob") == "node=64" and q.get("MaxWall") == "2-00:00:00" and q.get("GrpJobs") is None


def test_qos_limits_without_accounting_is_none() -> None:
    runner = FakeRunner({"sacctmgr": capture("sacct_no_accounting")})
    assert qos_limits(runner, "normal") is None


def test_dependency_from_the_captures() -> None:
    (never,) = parse_scontrol_jobs(capture("scontrol_show_job_dependency_never").stdout)
    deps = parse_dependency(never.raw["Dependency"])
    assert never.reason == "DependencyNeverSatisfied"
    assert [(d.kind, d.job_id, d.state, d.failed) for d in deps.items] == [("afterok", "118", "failed", True)]
    (pending,) = parse_scontrol_jobs(capture("scontrol_show_job_dependency_or").stdout)
    deps = parse_dependency(pending.raw["Dependency"])
    assert deps.jobs == ("120",) and not deps.items[0].failed and not deps.any_of


@pytest.mark.parametrize(("text", "expect"), [
    ("(null)", []),
    ("afterany:12_*(unfulfilled)?afternotok:13+5(unfulfilled)",
     [("afterany", "12", True, 0), ("afternotok", "13", False, 5)]),
    ("singleton(unfulfilled),afterok:7_3(failed)", [("singleton", "", False, 0), ("afterok", "7_3", False, 0)]),
])
def test_dependency_syntax(text: str, expect: list[tuple[str, str, bool, int]]) -> None:
    deps = parse_dependency(text)
    assert [(d.kind, d.job_id, d.array, d.delay_min) for d in deps.items] == expect
    assert deps.any_of == ("?" in text)


def test_batch_script() -> None:
    assert build_batch_script_argv("113") == ["scontrol", "write", "batch_script", "113", "-"]
    runner = FakeRunner({"scontrol write batch_script": capture("scontrol_write_batch_script")})
    assert batch_script(runner, "113").startswith("#!/bin/sh\n# This script was created by sbatch --wrap.")
    runner = FakeRunner({"scontrol": capture("scontrol_show_job_unknown")})
    with pytest.raises(JobNotFound):
        batch_script(runner, "999999")


@pytest.mark.parametrize(("name", "start", "nodes"), [
    ("sbatch_test_only_2node_one_busy", "2026-12-01T10:09:28", "nid[001-002]"),
    ("sbatch_test_only_1node_one_busy", "2026-12-01T10:04:30", "nid002"),
    ("sbatch_test_only_full", "2026-12-01T10:14:18", "nid001"),
])
def test_test_only_captures(name: str, start: str, nodes: str) -> None:
    r = parse_sbatch_test_only(capture(name))
    assert r.ok and r.start == start and r.nodes == nodes and r.partition == "debug"


@pytest.mark.parametrize("line", [
    # 25.05+: a stray " a" (and " on cluster C") between the time and "using" (SchedMD/slurm src/api/allocate.c)
    "sbatch: Job 12 to start at 2026-12-01T10:04:30 a using 1 processors on nodes nid002 in partition debug",
    "sbatch: Job 12 to start at 2026-12-01T10:04:30 on cluster ntuidev a using 1 processors on nodes nid002 "
    "in partition debug",
    "sbatch: Job 12 to start at 2026-12-01T10:04:30 using 1 processors on nodes nid002 in partition debug",
])
def test_test_only_does_not_rely_on_the_words_before_using(line: str) -> None:
    r = parse_sbatch_test_only(CommandResult(("sbatch",), 0, "", line + "\n", 0.0))
    assert (r.ok, r.start, r.processors, r.nodes, r.partition) == (True, "2026-12-01T10:04:30", 1, "nid002",
                                                                   "debug")


def test_shell_argv() -> None:
    assert build_shell_argv("12") == ["srun", "--jobid=12", "--overlap", "--pty", "-N", "1", "-n", "1", "bash"]
    assert build_shell_argv("12_3", node="nid002")[-3:] == ["-w", "nid002", "bash"]
    for bad in ({"job_id": "12 13"}, {"job_id": "12", "node": "-x"}, {"job_id": "12", "node": "a b"}):
        with pytest.raises(ValueError):
            build_shell_argv(**bad)  # type: ignore[arg-type]
