"""scripts/simulated-nvidia-smi: the CSV subset, parsed by ntui.core.gpu.smi, and clean exits."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.gpu.smi import QUERY_FIELDS, GpuBoard, parse_gpu_line
from ntui.core.gpu.usage import read_node_file
from ntui.core.jobfiles.samplefiles import SAMPLE_FIELDS
from tests.support.simulated_gpu import simulator
from tests.support.waits import WAIT_BOUND_S

SCRIPT = Path(__file__).resolve().parent.parent.parent / "scripts" / "simulated-nvidia-smi"
QUERY = ["--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv,noheader,nounits"]


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("SLURM_GPUS_ON_NODE", "CUDA_VISIBLE_DEVICES")}
    base.update(SLURMD_NODENAME="nid001", NTUI_SIM_SEED="7")
    base.update(extra)
    return base


def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env(**extra), timeout=30
    )


def test_script_header_and_help_say_simulated() -> None:
    text = SCRIPT.read_text()
    assert text.startswith("#!/usr/bin/env python3\n") and "SIMULATED" in text.splitlines()[1]
    assert os.access(SCRIPT, os.X_OK)
    out = run("--help")
    assert out.returncode == 0 and "SIMULATED" in out.stdout


def test_one_sample_parses_and_is_deterministic() -> None:
    first = run(*QUERY)
    assert first.returncode == 0, first.stderr
    samples = [parse_gpu_line(line) for line in first.stdout.splitlines()]
    assert len(samples) == 4 and all(s is not None for s in samples)
    for i, s in enumerate(samples):
        assert s is not None
        assert s.index == i and s.simulated and s.name == "SIMULATED GPU (ntui dev)"
        assert s.uuid.startswith("GPU-SIM-")
        assert s.util_gpu is not None and 0 <= s.util_gpu <= 100
        assert s.mem_used_mib is not None and s.mem_total_mib is not None
        assert 0 < s.mem_used_mib <= s.mem_total_mib
        assert s.power_w is not None and s.temp_c is not None
    assert run(*QUERY).stdout == first.stdout  # same seed, same node
    assert run(*QUERY, NTUI_SIM_SEED="8").stdout != first.stdout


def test_gpu_count_from_the_environment() -> None:
    assert len(run(*QUERY, SLURM_GPUS_ON_NODE="2").stdout.splitlines()) == 2
    assert len(run(*QUERY, CUDA_VISIBLE_DEVICES="0,1,5").stdout.splitlines()) == 3
    none = run(*QUERY, SLURM_GPUS_ON_NODE="0")
    assert none.returncode == 6 and "No devices were found" in none.stdout


def test_field_subset_and_order() -> None:
    out = run("--query-gpu=memory.total,index", "--format=csv,noheader,nounits", SLURM_GPUS_ON_NODE="2")
    assert out.stdout.splitlines() == ["81559, 0", "81559, 1"]


@pytest.mark.parametrize(
    "args",
    [
        ["--query-gpu=index,bogus.field", "--format=csv,noheader,nounits"],
        ["--query-gpu=index", "--format=csv"],
        ["--query-gpu=index", "--format=csv,noheader,nounits", "-i", "0"],
        ["-q"],
        [],
        ["--query-gpu=index", "--format=csv,noheader,nounits", "-l", "0"],
    ],
)
def test_unsupported_usage_exits_2(args: list[str]) -> None:
    out = run(*args)
    assert out.returncode == 2 and out.stderr and not out.stdout


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_loop_streams_blocks_and_exits_cleanly_on_signal(sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *QUERY, "-l", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(SLURM_GPUS_ON_NODE="2", NTUI_SIM_IDLE="1"),
    )
    assert proc.stdout is not None
    board = GpuBoard(["nid001"], interval_s=1)
    lines = []
    try:
        for _ in range(4):  # two blocks of two GPUs: the second arrives after the 1 s sleep
            line = proc.stdout.readline()
            lines.append(line)
            assert board.feed("0: " + line, now=float(len(lines))) is not None, line
    finally:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=WAIT_BOUND_S)
    assert proc.returncode == 0 and err == ""
    assert board.util_history("nid001", 1) == (0.0, 0.0)  # NTUI_SIM_IDLE=1
    assert lines[0] != lines[2]  # values vary between samples
    assert board.summary(now=4.0).simulated


def test_closed_pipe_exits_cleanly() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *QUERY, "-l", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(SLURM_GPUS_ON_NODE="1"),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away; the next block's write fails
    assert proc.wait(timeout=WAIT_BOUND_S) == 0
    assert proc.stderr.read() == b""


SAMPLER_QUERY = ["--query-gpu=" + ",".join(SAMPLE_FIELDS), "--format=csv,noheader,nounits"]


def test_sampler_fields_with_a_timestamp_parse_in_the_usage_reader(tmp_path: Path) -> None:
    out = run(*SAMPLER_QUERY, SLURM_GPUS_ON_NODE="2")
    assert out.returncode == 0, out.stderr
    stamp = out.stdout.split(",", 1)[0]
    assert re.fullmatch(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}", stamp), stamp
    path = tmp_path / "n.csv"
    path.write_text(out.stdout)
    node = read_node_file("nid001", str(path))
    assert node.bad_lines == 0 and [g.index for g in node.gpus] == [0, 1]


def simulated_values(profile: str, node: str, i: int, t: int) -> list[str]:
    mod = simulator()
    vals = mod.values("7", node, i, t, 4, False, mod.Profile(profile), 0.0)
    return [vals["utilization.gpu"], vals["memory.used"], vals["memory.total"], vals["power.draw"]]


def test_profile_idle_gpu_low_memory_and_straggler() -> None:
    steady = [10, 11, 12, 13, 14, 15, 16, 17]  # past the warm-up, before the eval dip
    for t in steady:
        normal = [simulated_values("", "nid001", i, t) for i in range(4)]
        scripted = [simulated_values("idle-gpu,low-mem,straggler=nid002", "nid001", i, t) for i in range(4)]
        slow = [simulated_values("idle-gpu,low-mem,straggler=nid002", "nid002", i, t) for i in range(4)]
        assert all(int(u) >= 70 for u, *_ in normal)
        assert int(scripted[3][0]) <= 2 and all(int(u) >= 70 for u, *_ in scripted[:3])  # the last GPU idles
        assert all(int(m) <= 0.16 * int(total) for _, m, total, _ in scripted)  # low-mem: about 15 %
        assert all(int(m) >= 0.5 * int(total) for _, m, total, _ in normal)
        assert all(30 <= int(u) <= 55 for u, *_ in slow[:3])  # the straggler: half the utilisation
        assert float(slow[0][3]) < 0.75 * float(scripted[0][3])


def test_unknown_profile_word_exits_2() -> None:
    out = run(*QUERY, NTUI_SIM_GPU_PROFILE="idle-gpu,bogus")
    assert out.returncode == 2 and "bogus" in out.stderr and not out.stdout


def test_usr1_and_a_second_signal_exit_cleanly() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *SAMPLER_QUERY, "-l", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(SLURM_GPUS_ON_NODE="1"),
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.send_signal(signal.SIGUSR1)
    proc.send_signal(signal.SIGTERM)  # a step's signal reaches every process: the wrapper sends one more
    _, err = proc.communicate(timeout=WAIT_BOUND_S)
    assert proc.returncode == 0 and err == b""
