"""ntui.core.slurm.sacct: argv, parser (captured 22.05 output), and the multi-node, multi-task arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.slurm.durations import parse_cpu_time
from ntui.core.slurm.runner import SlurmError
from ntui.core.slurm.sacct import (
    STEP_FIELDS,
    build_sacct_steps_argv,
    parse_memory_kib,
    parse_sacct_steps,
    step_accounting,
    steps_of,
)
from tests.support.fakes import FakeRunner, result

DATA = Path(__file__).resolve().parent.parent / "data" / "slurm"


def test_argv_one_call_parsable_no_unit_conversion() -> None:
    argv = build_sacct_steps_argv("12")
    assert argv[:3] == ["sacct", "-j", "12"] and "--noconvert" in argv and "-P" in argv
    assert argv[-1] == ",".join(STEP_FIELDS)
    with pytest.raises(ValueError):
        build_sacct_steps_argv("12;rm")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("00:00.056", 0.056), ("01:02:03", 3723.0), ("1-00:00:01", 86401.0), ("12:34.5", 754.5), ("", None),
     ("abc", None), ("1:2:3:4", None)],
)
def test_cpu_time(text: str, seconds: float | None) -> None:
    got = parse_cpu_time(text)
    assert got == (pytest.approx(seconds) if seconds is not None else None)


def test_memory_units() -> None:
    assert parse_memory_kib("1720320") == pytest.approx(1680.0)  # --noconvert: bytes
    assert parse_memory_kib("2048K") == 2048 and parse_memory_kib("1.5G") == 1.5 * 1024 * 1024
    assert parse_memory_kib("") is None and parse_memory_kib("lots") is None


def test_captured_two_node_job() -> None:
    rows = parse_sacct_steps((DATA / "sacct_steps_2node.stdout").read_text())
    acc = steps_of(rows, "12")
    assert acc.available and acc.job is not None
    assert acc.job.state == "FAILED" and acc.job.alloc_cpus == 4 and acc.job.time_limit_s == 300
    assert [s.step for s in acc.steps] == ["batch", "0", "1"]
    launch = acc.steps[1]
    assert (launch.tasks, launch.nodes, launch.max_rss_node, launch.max_rss_task) == (4, 2, "nid001", 1)
    assert launch.node_rss_bound_kib == pytest.approx(2 * 1680.0)  # 2 tasks per node
    assert acc.steps[2].name == "ntui-gpu-sampler"
    # steps summed (0.033 + 0.016 + 0.006), not the allocation row (0.056, which aggregates them)
    assert acc.total_cpu_s == pytest.approx(0.055)
    assert acc.cpu_efficiency == pytest.approx(0.055 / (9 * 4))


def test_multi_node_multi_task_efficiency_uses_all_cpus_of_all_nodes() -> None:
    text = "\n".join([
        "5|train|COMPLETED|0:0|3600|10:00:00|256|4|||||01:00:00|nid[1-4]",
        "5.batch|batch|COMPLETED|0:0|3600|00:01:00|64|1|1|1G|nid1|0||nid1",
        "5.0|python|COMPLETED|0:0|3540|3-00:00:00|256|4|16|20G|nid3|9||nid[1-4]",
    ])
    acc = steps_of(parse_sacct_steps(text), "5")
    assert acc.job is not None and acc.job.alloc_cpus == 256
    # 72 h + 1 min of CPU over 1 h x 256 CPUs
    assert acc.cpu_efficiency == pytest.approx((72 * 3600 + 60) / (3600 * 256))
    step = acc.steps[1]
    assert step.cpu_efficiency == pytest.approx(72 * 3600 / (3540 * 256))
    assert step.max_rss_kib == 20 * 1024 * 1024
    assert step.node_rss_bound_kib == 4 * 20 * 1024 * 1024  # 16 tasks on 4 nodes
    assert acc.max_rss_kib == 20 * 1024 * 1024


def test_no_accounting_is_an_answer_not_an_error() -> None:
    stderr = (DATA / "sacct_no_accounting.stderr").read_text()
    runner = FakeRunner({"sacct": result(stderr=stderr, returncode=1)})
    acc = step_accounting(runner, "12")
    assert not acc.available and acc.reason is not None and "accounting is disabled" in acc.reason
    assert acc.cpu_efficiency is None


def test_other_sacct_failures_raise() -> None:
    runner = FakeRunner({"sacct": result(stderr="sacct: error: slurmdbd: Connection refused", returncode=1)})
    with pytest.raises(SlurmError):
        step_accounting(runner, "12")


def test_unknown_job() -> None:
    runner = FakeRunner({"sacct": result(stdout="")})
    acc = step_accounting(runner, "99")
    assert not acc.available and acc.reason == "sacct has no record of job 99"
