"""ntui.core.gpu.smi: the watch step's argv, the nvidia-smi CSV parser, and the GpuBoard aggregator.

Sample output follows NVIDIA's documented ``--query-gpu=... --format=csv,noheader,nounits`` format (one line
per GPU, values separated by ", ", ``[N/A]`` / ``[Not Supported]`` for missing values), as printed through
``srun --label`` (``<task id>: `` prefix).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ntui.core.gpu.smi import (
    QUERY_FIELDS,
    GpuBoard,
    GpuSample,
    build_gpu_step_argv,
    no_gpus_allocated,
    parse_gpu_csv,
    parse_gpu_line,
    sparkline,
    task_node_order,
)
from ntui.core.slurm.srun import step_env

DATA = Path(__file__).resolve().parent.parent / "data" / "gpus"
NODES = ("nid001", "nid002")
DOC_LINE = "0, GPU-5d0c8b1e-3f7a-4c2e-9d1b-2a6e8f0c1d3b, NVIDIA A100-SXM4-40GB, 37, 12, 10240, 40960, 45, 250.12"


# ------------------------------------------------------------------------------------------------- argv


def test_build_gpu_step_argv() -> None:
    argv = build_gpu_step_argv("4242", ["nid002", "nid001", "nid003"], 2, 37)
    assert argv == [
        "srun",
        "--jobid=4242",
        "--overlap",
        "--nodes=3",
        "--ntasks=3",
        "--ntasks-per-node=1",
        "--nodelist=nid[001-003]",
        "--label",
        "--mem=100M",
        "--time=37",
        "--unbuffered",
        "--job-name=ntui-gpu-watch",
        "nvidia-smi",
        "--query-gpu=index,uuid,name,utilization.gpu,utilization.memory,memory.used,memory.total,"
        "temperature.gpu,power.draw",
        "--format=csv,noheader,nounits",
        "-l",
        "2",
    ]
    assert not any(a.startswith(("--gres", "--gpus")) for a in argv)


def test_build_gpu_step_argv_options_and_errors() -> None:
    argv = build_gpu_step_argv("7_3", ["gpu7"], 5, None, nvidia_smi="/opt/sim/nvidia-smi")
    assert not any(a.startswith("--time") for a in argv)
    assert "/opt/sim/nvidia-smi" in argv and argv[-1] == "5"
    assert "--time=1" in build_gpu_step_argv("7", ["gpu7"], 5, 0)
    assert "--gres=gpu:8" in build_gpu_step_argv("7", ["gpu7"], 5, 10, gres="gpu:8")
    assert "--nodes=1" in build_gpu_step_argv("7", ["gpu7", "gpu7"], 5, 10)  # duplicates dropped
    with pytest.raises(ValueError):
        build_gpu_step_argv("7", [], 2, 10)
    with pytest.raises(ValueError):
        build_gpu_step_argv("7", ["a"], 0, 10)
    with pytest.raises(ValueError):
        build_gpu_step_argv("7; rm -rf ~", ["a"], 2, 10)


def test_task_order_and_env() -> None:
    assert task_node_order(["nid010", "nid002", "gpu1"]) == ("gpu1", "nid002", "nid010")
    env = step_env(
        {"PATH": "/bin", "SLURM_CONF": "/etc/slurm.conf", "SLURM_STEP_GRES": "none", "SLURM_GPUS_PER_TASK": "1",
         "SRUN_CPUS_PER_TASK": "8", "SBATCH_PARTITION": "x", "HOME": "/h"}
    )  # fmt: skip
    assert env == {"PATH": "/bin", "SLURM_CONF": "/etc/slurm.conf", "HOME": "/h"}


# ------------------------------------------------------------------------------------------------ parser


def test_parse_documented_line_without_label() -> None:
    s = parse_gpu_line(DOC_LINE)
    assert s == GpuSample(
        node="",
        index=0,
        uuid="GPU-5d0c8b1e-3f7a-4c2e-9d1b-2a6e8f0c1d3b",
        name="NVIDIA A100-SXM4-40GB",
        util_gpu=37.0,
        util_mem=12.0,
        mem_used_mib=10240.0,
        mem_total_mib=40960.0,
        temp_c=45.0,
        power_w=250.12,
        task=None,
    )
    assert s.mem_fraction == 0.25 and not s.simulated


def test_parse_labelled_file() -> None:
    samples = parse_gpu_csv((DATA / "two-nodes-label.txt").read_text(), NODES)
    assert [(s.node, s.index) for s in samples] == [(n, i) for n in NODES for i in range(4)]
    bad = samples[6]
    assert (bad.node, bad.index, bad.util_gpu, bad.util_mem, bad.temp_c, bad.power_w) == (
        "nid002",
        2,
        None,
        None,
        None,
        None,
    )
    assert bad.mem_used_mib == 37805.0


def test_parse_malformed_lines() -> None:
    lines = (DATA / "malformed.txt").read_text().splitlines()
    parsed = [parse_gpu_line(line, NODES) for line in lines]
    # messages, a partial line, too many fields, a non-numeric index: no sample
    assert parsed[:5] == [None] * 5
    lost = parsed[5]
    assert lost is not None and lost.index == 2 and lost.uuid == "" and lost.name == ""
    assert lost.util_gpu is None and lost.power_w is None
    wide = parsed[6]  # a wide label (" 11: "), odd spacing; task 11 is not in the node list
    assert wide is not None and wide.node == "task11" and wide.task == 11
    assert (wide.index, wide.name, wide.util_gpu, wide.power_w) == (3, "NVIDIA H100 80GB HBM3", 45.0, 600.5)
    assert parsed[7:] == [None, None]


@pytest.mark.parametrize(
    "value",
    ["[N/A]", "[Not Supported]", "", "N/A", "[Unknown Error]", "nan", "inf", "abc", "[Insufficient Permissions]"],
)
def test_missing_values(value: str) -> None:
    fields = DOC_LINE.split(", ")
    fields[8] = value
    s = parse_gpu_line("0: " + ", ".join(fields), NODES)
    assert s is not None and s.power_w is None and s.node == "nid001"


@given(st.text(max_size=200))
def test_parser_never_raises(line: str) -> None:
    s = parse_gpu_line(line, NODES)
    assert s is None or s.index >= 0


# ------------------------------------------------------------------------------------------------- board


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def block(node_task: int, utils: list[int], mem: int = 30000) -> list[str]:
    return [
        f"{node_task}: {i}, GPU-{node_task}-{i}, NVIDIA A100-SXM4-40GB, {u}, {u // 2}, {mem}, 40960, 50, {100 + u}.00"
        for i, u in enumerate(utils)
    ]


def test_board_latest_history_and_averages() -> None:
    clock = Clock()
    board = GpuBoard(NODES, interval_s=2, history=3, clock=clock)
    board.feed_many((DATA / "two-nodes-label.txt").read_text().splitlines())
    assert board.messages[0].startswith("srun: Job 4242 step creation temporarily disabled")
    latest = board.latest()
    assert sorted(latest) == ["nid001", "nid002"] and sorted(latest["nid002"]) == [0, 1, 2, 3]
    summ = board.summary()
    assert summ.gpus == 8 and summ.nodes == 2 and not summ.simulated
    # nid002 GPU 2 has [N/A] utilisation: the mean is over the 7 known values
    assert summ.util_gpu_mean == pytest.approx((37 + 98 + 97 + 99 + 0 + 96 + 95) / 7)
    assert summ.mem_total_mib == 8 * 40960
    assert summ.power_w == pytest.approx(250.12 + 398.50 + 391.07 + 402.33 + 55.21 + 385.90 + 380.02)
    for u in (10, 20, 30, 40):
        clock.t += 2
        board.feed_many(block(0, [u]))
    assert board.util_history("nid001", 0) == (20.0, 30.0, 40.0)  # bounded
    assert board.mem_history("nid001", 0)[-1] == pytest.approx(100 * 30000 / 40960)
    assert board.util_history("nope", 0) == () and board.sample("nid001", 0) is not None


def test_idle_detection_uses_the_callers_clock() -> None:
    clock = Clock()
    board = GpuBoard(NODES, interval_s=2, idle_after_s=60, stale_after_intervals=100, clock=clock)
    for _ in range(31):  # 0 % for 60 s on GPU 3
        board.feed_many(block(1, [90, 91, 92, 0]))
        clock.t += 2
    clock.t -= 2
    idle = board.idle_gpus()
    assert [(g.node, g.index) for g in idle] == [("nid002", 3)]
    assert idle[0].describe() == "nid002 GPU 3: 0% for 60 s"
    clock.t += 2
    board.feed_many(block(1, [90, 91, 92, 1]))  # any activity resets it
    assert board.idle_gpus() == []
    board.feed_many(block(1, [90, 91, 92, 0]))
    assert board.idle_gpus(now=clock.t + 59) == []
    assert len(board.idle_gpus(now=clock.t + 60)) == 1


def test_unknown_utilisation_is_not_idle() -> None:
    clock = Clock()
    board = GpuBoard(["n1"], idle_after_s=10, stale_after_intervals=100, clock=clock)
    board.feed("0: 0, GPU-x, A, 0, 0, 1, 2, 3, 4", now=0)
    board.feed("0: 0, GPU-x, A, [N/A], 0, 1, 2, 3, 4", now=5)
    board.feed("0: 0, GPU-x, A, 0, 0, 1, 2, 3, 4", now=6)
    assert board.idle_gpus(now=15) == []
    assert len(board.idle_gpus(now=16)) == 1


def test_stale_and_missing_nodes() -> None:
    clock = Clock()
    board = GpuBoard(("nid001", "nid002", "nid003"), interval_s=2, stale_after_intervals=3, clock=clock)
    assert board.missing_nodes() == []  # too early to say
    board.feed_many(block(0, [50, 50]) + block(1, [50, 50]))
    clock.t += 6
    assert board.stale_nodes() == [] and board.missing_nodes() == ["nid003"]
    board.feed_many(block(0, [50, 50]))
    clock.t += 1
    assert board.stale_nodes() == ["nid002"]
    kinds = {(i.kind, i.node) for i in board.issues()}
    assert kinds == {("stale", "nid002"), ("never_reported", "nid003")}
    assert board.summary().nodes == 1  # only fresh data is averaged


def test_gpu_count_against_allocation() -> None:
    clock = Clock()
    expected = {"nid001": (0, 1, 2, 3), "nid002": (4, 5, 6, 7)}
    board = GpuBoard(("nid001", "nid002", "nid009"), expected=expected, interval_s=2, clock=clock)
    board.feed_many(block(0, [90, 90, 90]))  # one GPU of four missing
    board.feed_many(block(1, [90] * 8))  # devices not constrained: all 8 of the node visible
    board.feed_many(block(2, [5]))  # a node without GPUs in the allocation
    msgs = {i.kind: i.message for i in board.issues()}
    assert msgs["fewer_gpus"] == "nid001: 3 of 4 allocated GPUs reporting"
    assert msgs["more_gpus"] == "nid002: 8 GPUs visible, 4 allocated"
    assert msgs["unexpected_node"] == "nid009: reports GPUs but has none allocated"
    # job averages count only the allocated indices of nid002 (4-7), not its other four
    assert board.summary().gpus == 3 + 4 + 1


def test_a_job_without_gpus_has_no_allocated_gpus_and_says_what_is_visible() -> None:
    """Issue 15: a CPU job's node (an empty GRES on its ``-d`` line) read "4 GPUs visible, 0 allocated"."""
    clock = Clock()
    expected: dict[str, tuple[int, ...]] = {"nid001": ()}
    assert no_gpus_allocated(expected) and not no_gpus_allocated({}) and not no_gpus_allocated(None)
    assert not no_gpus_allocated({"nid001": (), "nid002": (0,)})
    board = GpuBoard(("nid001",), expected=expected, interval_s=2, clock=clock)
    board.feed_many(block(0, [93] * 4))
    assert [(i.kind, i.message) for i in board.issues()] == [
        ("more_gpus", "nid001: no GPUs allocated; nvidia-smi shows 4, not the job's")]
    assert board.summary().gpus == 0 and board.idle_gpus() == []


def test_simulated_samples_are_flagged() -> None:
    board = GpuBoard(["n1"])
    board.feed("0: 0, GPU-SIM-1234, SIMULATED GPU (ntui dev), 50, 20, 100, 200, 40, 300.00", now=0)
    assert board.summary(now=0).simulated


def test_sparkline() -> None:
    assert sparkline([0, 50, 100, None, 250, -5]) == "▁▅█ █▁"
    assert sparkline([]) == ""
    assert len(QUERY_FIELDS) == 9
