"""``ntui.core.compose.sitecheck``: a job against the cluster's partitions, from captured ``scontrol``/``sinfo`` output.

Captures (``tests/data/slurm/``, dev cluster, Slurm 22.05.8): ``scontrol_show_partition`` (``debug`` only:
default, MaxTime 02:00:00, 2 nodes) and ``*_multi`` with three temporary partitions next to it: ``long``
(nid001 only, MaxTime UNLIMITED, MaxNodes 1), ``maint`` (nid002, 00:30:00, State DOWN) and ``acctonly``
(AllowAccounts physics, AllowQos normal, 1-00:00:00).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.sitecheck import PartitionLimits, check_against_cluster, partition_limits
from ntui.core.compose.spec import JobSpec, validate
from ntui.core.problems import Problem
from ntui.core.slurm.scontrol import parse_scontrol_partitions
from ntui.core.slurm.sinfo import parse_sinfo_partitions

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"
ONE = parse_scontrol_partitions((DATA / "scontrol_show_partition.stdout").read_text())
MULTI = parse_scontrol_partitions((DATA / "scontrol_show_partition_multi.stdout").read_text())
SINFO_MULTI = parse_sinfo_partitions((DATA / "sinfo_partitions_multi.stdout").read_text())
SINFO_IDLE = (DATA / "sinfo_partitions_idle.stdout").read_text()


def spec(*overrides: str) -> JobSpec:
    loaded = load_preset("local-srun", overrides)
    got, problems = validate(loaded)
    assert got is not None, problems
    return got


def errors(problems: list[Problem]) -> list[str]:
    return [str(p) for p in problems if p.is_error]


def warnings(problems: list[Problem]) -> list[str]:
    return [str(p) for p in problems if not p.is_error]


def test_limits_from_scontrol_and_sinfo_agree() -> None:
    from_scontrol = {p.name: p for p in partition_limits(MULTI)}
    from_sinfo = {p.name: p for p in partition_limits(SINFO_MULTI)}
    assert list(from_scontrol) == ["debug", "long", "maint", "acctonly"] == list(from_sinfo)
    for name, p in from_scontrol.items():
        s = from_sinfo[name]
        assert (p.default, p.max_time_s, p.total_nodes, p.up) == (s.default, s.max_time_s, s.total_nodes, s.up), name
    assert from_scontrol["debug"].max_time_s == 7200 and from_scontrol["debug"].default
    assert from_scontrol["long"].max_time_s is None and from_scontrol["long"].max_nodes == 1
    assert from_scontrol["acctonly"].allow_accounts == ("physics",) and from_sinfo["acctonly"].allow_accounts is None
    assert not from_scontrol["maint"].up


def test_sinfo_lines_of_one_partition_in_several_states_are_summed() -> None:
    line = "debug*\x1fup\x1f2:00:00\x1f{n}\x1f{state}\x1fnid[001-002]\x1fgpu:4"
    text = line.format(n=1, state="idle") + "\n" + line.format(n=3, state="allocated") + "\n"
    (limits,) = partition_limits(parse_sinfo_partitions(text))
    assert limits.total_nodes == 4 and limits.default


def test_a_job_within_the_limits_has_no_problem() -> None:
    assert check_against_cluster(spec(), ONE) == []
    assert check_against_cluster(spec("sbatch.time=2:00:00"), ONE) == []
    assert check_against_cluster(spec("sbatch.time=0"), ONE) == []  # no limit asked: the partition's applies
    assert check_against_cluster(spec("sbatch.time=9:00:00"), []) == []  # nothing known: nothing said


def test_time_over_the_default_partition_is_an_error_when_nothing_else_fits() -> None:
    problems = check_against_cluster(spec("sbatch.time=3:00:00"), ONE)
    assert errors(problems) == [
        "sbatch.time: 03:00:00 is over the MaxTime of the default partition debug (02:00:00): Slurm would accept "
        "it and the job would pend forever (reason PartitionTimeLimit)"
    ]


def test_time_over_a_named_partition_is_an_error_even_when_another_fits() -> None:
    problems = check_against_cluster(spec("sbatch.time=3:00:00", "sbatch.partition=debug"), MULTI)
    assert len(errors(problems)) == 1 and "MaxTime of partition debug (02:00:00)" in errors(problems)[0]
    # a job naming several partitions may run in any of them: fine when one fits
    assert errors(check_against_cluster(spec("sbatch.time=3:00:00", "sbatch.nodes=1", "sbatch.partition=debug,long"),
                                        MULTI)) == []


def test_time_over_the_default_but_fitting_another_partition_is_a_warning() -> None:
    """Sites may route a job without a partition elsewhere (job_submit plugins): only a warning."""
    problems = check_against_cluster(spec("sbatch.time=3:00:00"), MULTI)
    assert errors(problems) == []
    (warning,) = warnings(problems)
    assert "over the MaxTime of the default partition debug" in warning and "fits: long, acctonly" in warning
    # ... unless sbatch --test-only said where Slurm would put it
    chosen = check_against_cluster(spec("sbatch.time=3:00:00"), MULTI, partition="debug")
    assert errors(chosen) and "partition debug (where Slurm would put it)" in errors(chosen)[0]
    assert check_against_cluster(spec("sbatch.time=3:00:00", "sbatch.nodes=1"), MULTI, partition="long") == []


def test_unknown_partition_names_the_partitions() -> None:
    problems = check_against_cluster(spec("sbatch.partition=nosuchpart"), MULTI)
    assert errors(problems) == [
        "sbatch.partition: no partition nosuchpart on this cluster (partitions: debug, long, maint, acctonly); "
        "Slurm would refuse the job: Invalid partition name specified"
    ]


def test_more_nodes_than_the_partition_has_or_allows() -> None:
    (err,) = errors(check_against_cluster(spec("sbatch.nodes=3"), ONE))
    assert err.startswith("sbatch.nodes: 3 nodes, but the default partition debug has 2: Slurm would refuse it")
    (err,) = errors(check_against_cluster(spec("sbatch.partition=long"), MULTI))  # long has 1 node
    assert err.startswith("sbatch.nodes: 2 nodes, but partition long has 1: Slurm would refuse it")
    capped = parse_scontrol_partitions((DATA / "scontrol_show_partition.stdout").read_text()
                                       .replace("MaxNodes=UNLIMITED", "MaxNodes=1"))
    (err,) = errors(check_against_cluster(spec(), capped))
    assert "2 nodes is over the MaxNodes of the default partition debug (1)" in err and "PartitionNodeLimit" in err


def test_down_partition_account_and_qos_are_warnings() -> None:
    problems = check_against_cluster(spec("sbatch.nodes=1", "sbatch.partition=maint"), MULTI)
    assert errors(problems) == [] and warnings(problems) == [
        "warning: sbatch.partition: maint DOWN: the job would wait until an administrator brings it up"]
    problems = check_against_cluster(spec("sbatch.partition=acctonly", "sbatch.account=nosuchacct",
                                          "sbatch.qos=high"), MULTI)
    assert errors(problems) == []
    assert [p.field for p in problems] == ["sbatch.account", "sbatch.qos"]
    assert "nosuchacct is not allowed in partition acctonly (AllowAccounts acctonly: physics)" in warnings(problems)[0]
    assert check_against_cluster(spec("sbatch.partition=acctonly", "sbatch.account=physics"), MULTI) == []


def test_problems_name_the_preset_file_and_line(tmp_path: Path) -> None:
    preset = tmp_path / "long.yaml"
    preset.write_text("extends: local-srun\nname: long\nsbatch:\n  time: '3:00:00'\n")
    loaded = load_preset(str(preset))
    got, _ = validate(loaded)
    assert got is not None
    (problem,) = check_against_cluster(got, ONE, loaded=loaded)
    assert str(problem).startswith(f"{preset}:4: sbatch.time: 03:00:00 is over the MaxTime")


@pytest.mark.parametrize("limits", [PartitionLimits("p", True, "UP", "UNLIMITED")])
def test_unlimited_partition_accepts_anything(limits: PartitionLimits) -> None:
    assert check_against_cluster(spec("sbatch.time=30-00:00:00", "sbatch.nodes=2000"), [limits]) == []


def test_the_idle_sinfo_capture_parses_for_the_compose_view() -> None:
    """The compose view's sinfo line format (7 fields) vs the capture's longer one: extra fields are ignored."""
    (limits,) = partition_limits(parse_sinfo_partitions(SINFO_IDLE.replace("|", "\x1f")))
    assert (limits.name, limits.max_time_s, limits.total_nodes) == ("debug", 7200, 2)


# ---------------------------------------------------------------- the check around sbatch (CLI and compose view)


def test_cluster_limits_from_one_scontrol_call_and_none_when_it_fails() -> None:
    from ntui.core.compose.sitecheck import cluster_limits
    from ntui.core.slurm.runner import ControllerUnreachable
    from tests.support.fakes import FakeRunner, result

    fake = FakeRunner({"scontrol show partition": result(stdout=(DATA / "scontrol_show_partition_multi.stdout")
                                                         .read_text())})
    assert [p.name for p in cluster_limits(fake)] == ["debug", "long", "maint", "acctonly"]
    assert fake.argvs() == [("scontrol", "show", "partition", "-o")]
    down = FakeRunner({"scontrol": ControllerUnreachable("Unable to contact slurm controller")})
    assert cluster_limits(down) == ()


def test_check_test_only_checks_the_partition_slurm_chose() -> None:
    from ntui.core.compose.sitecheck import check_test_only
    from tests.support.fakes import FakeRunner, result

    accepted = (DATA / "sbatch_test_only_time_over_limit.stderr").read_text()  # "... in partition debug", rc 0
    job = spec("sbatch.time=3:00:00")  # over debug's MaxTime 02:00:00
    fake = FakeRunner({"sbatch --test-only": result(stderr=accepted)})
    res, problems = check_test_only(job, fake, MULTI)
    assert res.ok and res.partition == "debug"
    assert errors(problems) == ["sbatch.time: 03:00:00 is over the MaxTime of partition debug (where Slurm would put "
                                "it) (02:00:00): Slurm would accept it and the job would pend forever (reason "
                                "PartitionTimeLimit)"]
    # what the caller already reported is left out; a refusal has no partition to check
    assert check_test_only(job, fake, MULTI, reported=problems)[1] == []
    refused = FakeRunner({"sbatch --test-only": result(stderr="sbatch: error: Invalid account\n", returncode=1)})
    res, problems = check_test_only(job, refused, MULTI)
    assert not res.ok and problems == []
