"""What would start sooner (ntui/core/waiting/whatif.py): which shapes, how many test-only calls, the answers."""

from __future__ import annotations

from datetime import datetime

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.spec import validate
from ntui.core.slurm.runner import ControllerUnreachable
from ntui.core.slurm.scontrol import Partition, parse_scontrol_partitions
from ntui.core.waiting.whatif import (
    MAX_SHAPES,
    Shape,
    ShapeInput,
    ShapeResult,
    input_from_spec,
    plan_shapes,
    preset_tester,
    run_shapes,
    script_tester,
    summary,
)
from tests.support.fakes import FakeRunner, capture, result

NOW = datetime(2026, 12, 1, 10, 4, 0)
PARTS = parse_scontrol_partitions(capture("scontrol_show_partition_multi").stdout)


def test_shapes_one_change_each_and_bounded() -> None:
    job = ShapeInput(nodes=2, time_s=3600, qos="normal", partition="debug", account="ntuidev")
    shapes = plan_shapes(job, partitions=PARTS, qos_choices=("normal", "ntuilow"))
    assert [s.label for s in shapes] == [
        "as it is", "1 node instead of 2", "time limit 00:30:00 instead of 01:00:00", "QOS ntuilow instead of normal"]
    assert [s.override for s in shapes] == [None, "sbatch.nodes=1", "sbatch.time=00:30:00", "sbatch.qos=ntuilow"]
    assert [s.option for s in shapes] == [None, "--nodes=1", "--time=00:30:00", "--qos=ntuilow"]
    assert len(shapes) <= MAX_SHAPES
    # no other partition fits a 2-node job: long has 1 node, maint is down, acctonly wants account physics


def test_another_partition_that_fits() -> None:
    job = ShapeInput(nodes=1, time_s=600, partition="debug")
    shapes = plan_shapes(job, partitions=PARTS)
    assert [s.label for s in shapes] == ["as it is", "time limit 00:05:00 instead of 00:10:00",
                                         "partition long instead of debug"]


def test_nothing_to_change_is_just_the_job() -> None:
    assert [s.label for s in plan_shapes(ShapeInput(nodes=1))] == ["as it is"]
    assert len(plan_shapes(ShapeInput(nodes=8, time_s=7200, qos="a"), qos_choices=("b",), limit=2)) == 2


def test_the_form_shape_is_validated_before_slurm_is_asked(tmp_path: pytest.TempPathFactory) -> None:
    runner = FakeRunner({"sbatch --test-only": [capture("sbatch_test_only_2node_one_busy"),
                                                capture("sbatch_test_only_1node_one_busy")]})
    loaded = load_preset("local-srun")
    spec, _ = validate(loaded)
    assert spec is not None
    job = input_from_spec(spec)
    assert (job.nodes, job.time_s) == (2, 600)
    shapes = [Shape("as it is"), Shape("1 node instead of 2", "sbatch.nodes", "1"),
              Shape("bad", "sbatch.nodes", "0")]
    seen: list[ShapeResult] = []
    results = run_shapes(shapes, preset_tester(runner, "local-srun", ()), on_result=seen.append)
    assert seen == list(results) and runner.calls == 2  # the invalid shape never reached sbatch
    base, one, bad = results
    assert base.ok and base.start == datetime(2026, 12, 1, 10, 9, 28) and base.nodes == "nid[001-002]"
    assert one.ok and one.start == datetime(2026, 12, 1, 10, 4, 30) and one.nodes == "nid002"
    assert not bad.ok and bad.reason.startswith("not valid: sbatch.nodes")
    scripts = [c.argv[-1] for c in runner.history]
    assert all(s.endswith("job.sbatch") for s in scripts)
    now = datetime(2026, 12, 1, 10, 4, 20)
    assert one.starts_now(now) and not base.starts_now(now)
    assert summary(results, now) == "1 node instead of 2 starts now: 5 min sooner than as it is"


def test_a_submitted_script_gets_the_option_on_the_command_line() -> None:
    runner = FakeRunner({"sbatch --test-only": capture("sbatch_test_only_1node_one_busy")})
    test = script_tester(runner, "#!/bin/sh\n#SBATCH --nodes=2\ntrue\n")
    run_shapes([Shape("as it is"), Shape("1 node", "sbatch.nodes", "1")], test)
    assert runner.argvs()[0][:2] == ("sbatch", "--test-only") and runner.argvs()[0][2].endswith("job.sbatch")
    assert runner.argvs()[1][2] == "--nodes=1"


def test_refusals_are_answers_and_an_unreachable_controller_stops() -> None:
    runner = FakeRunner({"sbatch --test-only": capture("sbatch_test_only_gpus5")})
    (r,) = run_shapes([Shape("as it is")], script_tester(runner, "#!/bin/sh\ntrue\n"))
    assert not r.ok and "Requested node configuration is not available" in r.reason
    down = FakeRunner({"sbatch": result(returncode=1, stderr="sbatch: error: Batch job submission failed: "
                                                              "Unable to contact slurm controller (connect failure)")})
    with pytest.raises(ControllerUnreachable):
        run_shapes([Shape("as it is"), Shape("x", "sbatch.nodes", "1")], script_tester(down, "#!/bin/sh\n"))
    assert down.calls == 1


def test_summary_words() -> None:
    base = ShapeResult(Shape("as it is"), True, datetime(2026, 12, 1, 10, 30))
    later = ShapeResult(Shape("QOS x", "sbatch.qos", "x"), True, datetime(2026, 12, 1, 11, 0))
    assert summary([base, later], NOW).startswith("as it is starts first, at 10:30 (in 26 min)")
    assert summary([ShapeResult(Shape("as it is"), False, reason="no")], NOW) == \
        "Slurm gave no start estimate for any shape"
    close = ShapeResult(Shape("1 node", "sbatch.nodes", "1"), True, datetime(2026, 12, 1, 10, 29, 30))
    assert summary([base, close], NOW) == "no shape starts sooner than as it is, at 10:30 (in 26 min)"


def test_partition_model_in_use() -> None:
    assert {p.name for p in PARTS} >= {"debug", "long", "maint", "acctonly"}
    assert isinstance(PARTS[0], Partition)
