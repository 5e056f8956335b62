"""ntui.core.compose.sampler: the script lines, and the per-node payload (ntui.core.jobfiles.samplefiles) run by
plain bash with the SIMULATED nvidia-smi.

What Slurm does with the step (GPUs seen, exit code kept, nothing left behind) is tested on the real dev
cluster in tests/cluster/test_sampler.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ntui.core.compose.sampler import sampler_lines
from ntui.core.gpu.smi import GpuSample
from ntui.core.gpu.usage import read_node_file
from ntui.core.gpu.vendors import parse_amd_smi_json, parse_rocm_smi_json, parse_xpu_smi_dump
from ntui.core.jobfiles.samplefiles import (
    HEADER_TAG,
    SAMPLE_FIELDS,
    SAMPLER_NAME,
    SAMPLER_PAYLOAD,
    find_sample_files,
    sample_path,
    sample_prefix,
)
from tests.support.waits import WAIT_BOUND_S

SIM = Path(__file__).resolve().parents[2] / "scripts" / "simulated-nvidia-smi"


def test_lines_parse_as_bash_and_explain_themselves(tmp_path: Path) -> None:
    lines = sampler_lines("/scratch/u/logs", "train", interval_s=10)
    assert lines[0].startswith("# [ntui] GPU usage for `ntui report`: one nvidia-smi -l 10 per node")
    assert any("monitor: {gpu: false}" in ln for ln in lines if ln.startswith("#"))
    script = tmp_path / "s.sh"
    script.write_text("#!/bin/bash\nset -euo pipefail\n" + "\n".join(lines) + "\n")
    check = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    text = "\n".join(lines)
    assert "--overlap" in text and "--gres" not in text and "trap ntui_gpu_sampler_stop EXIT" in text
    assert "--kill-on-bad-exit=0" in text and "--output=/dev/null" in text
    assert ",".join(SAMPLE_FIELDS) in text
    assert "--gres=gpu:4" in "\n".join(sampler_lines("/l", "s", gres="gpu:4"))
    with pytest.raises(ValueError):
        sampler_lines("/l", "s", interval_s=0)


def test_paths_are_one_rule(tmp_path: Path) -> None:
    assert sample_prefix("/l", "s", "9") == "/l/s-9-gpu-"
    assert sample_path("/l", "s", "9", "nid001") == "/l/s-9-gpu-nid001.csv"
    for node in ("nid001", "nid010"):
        Path(sample_path(str(tmp_path), "s", "9", node)).write_text("")
    Path(sample_path(str(tmp_path), "s", "19", "nid001")).write_text("")  # another job
    assert list(find_sample_files(str(tmp_path), "s", "9")) == ["nid001", "nid010"]


#: The payloads the running test started (each its own session: it samples until told to stop).
_STARTED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _no_payload_left() -> Iterator[None]:
    """A test that fails before it stops its payload would leave it sampling for the rest of the run."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def _payload(tmp: Path, path_dirs: list[str], **env: str) -> subprocess.Popen[bytes]:
    full = {
        "PATH": ":".join([*path_dirs, "/usr/bin", "/bin"]),
        "SLURMD_NODENAME": "nid001",
        "SLURM_JOB_ID": "7",
        "SLURM_GPUS_ON_NODE": "2",
        **env,
    }
    prefix = sample_prefix(str(tmp), "job", "7")
    proc = subprocess.Popen(
        ["bash", "-c", SAMPLER_PAYLOAD, SAMPLER_NAME, prefix, "1", ",".join(SAMPLE_FIELDS)],
        env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    _STARTED.append(proc)
    return proc


def _sim_dir(tmp: Path) -> str:
    d = tmp / "bin"
    d.mkdir(exist_ok=True)
    (d / "nvidia-smi").symlink_to(SIM)
    return str(d)


def _wait_lines(path: Path, n: int, timeout: float = WAIT_BOUND_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") >= n:
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} has fewer than {n} lines: {path.read_text() if path.exists() else 'missing'}")


@pytest.mark.parametrize("to_group", [False, True], ids=["signal-to-shell", "signal-to-every-process"])
def test_payload_samples_until_usr1_then_ends_cleanly(tmp_path: Path, to_group: bool) -> None:
    proc = _payload(tmp_path, [_sim_dir(tmp_path)])
    path = Path(sample_path(str(tmp_path), "job", "7", "nid001"))
    _wait_lines(path, 1 + 2 * 2)  # header + two blocks of two GPUs
    if to_group:  # as slurmstepd does: every process of the step
        os.killpg(proc.pid, signal.SIGUSR1)
    else:
        proc.send_signal(signal.SIGUSR1)
    out, err = proc.communicate(timeout=WAIT_BOUND_S)
    assert proc.returncode == 0 and out == b"" and err == b""
    text = path.read_text()
    assert text.startswith(f"{HEADER_TAG} v1 job=7 node=nid001 interval=1 visible= status=sampling fields=")
    assert text.rstrip("\n").endswith(f"{HEADER_TAG} end")
    node = read_node_file("nid001", str(path))
    assert node.status == "ended" and node.bad_lines == 0, node.messages
    assert [g.index for g in node.gpus] == [0, 1] and all(g.samples >= 2 for g in node.gpus)
    assert node.interval_s == 1


def test_payload_without_nvidia_smi_writes_one_line_and_exits_0(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = _payload(tmp_path, [str(empty)], PATH=str(empty) + ":/usr/bin:/bin")
    assert proc.wait(timeout=WAIT_BOUND_S) == 0
    path = Path(sample_path(str(tmp_path), "job", "7", "nid001"))
    (only,) = path.read_text().splitlines()
    assert "status=no-gpu-tool" in only and "none of nvidia-smi, amd-smi, rocm-smi, xpu-smi on PATH" in only
    assert read_node_file("nid001", str(path)).why_no_data() == (
        "nid001: no GPU tool on the node (nvidia-smi, amd-smi, rocm-smi, xpu-smi): no GPU samples"
    )


def test_payload_when_nvidia_smi_fails_exits_0_and_keeps_its_message(tmp_path: Path) -> None:
    proc = _payload(tmp_path, [_sim_dir(tmp_path)], SLURM_GPUS_ON_NODE="0")  # "No devices were found", exit 6
    assert proc.wait(timeout=WAIT_BOUND_S) == 0
    path = Path(sample_path(str(tmp_path), "job", "7", "nid001"))
    lines = path.read_text().splitlines()
    assert lines[1:] == ["No devices were found", f"{HEADER_TAG} end status=nvidia-smi-exit-6"]
    node = read_node_file("nid001", str(path))
    assert node.gpus == () and "No devices were found" in (node.why_no_data() or "")


VENDOR_SIM = Path(__file__).resolve().parents[1] / "support" / "simulated-vendor-smi"
VENDOR_DATA = Path(__file__).resolve().parents[1] / "data" / "gpus" / "vendors"


@pytest.mark.parametrize(("tool", "data", "parse"), [
    ("amd-smi", "amd-smi-monitor.json", parse_amd_smi_json),
    ("rocm-smi", "rocm-smi-new.json", parse_rocm_smi_json),
    ("xpu-smi", "xpu-smi-dump.csv", parse_xpu_smi_dump),
])
def test_payload_on_an_amd_or_intel_node_samples_its_tool_each_tick(
        tmp_path: Path, tool: str, data: str, parse: Callable[[str, str], list[GpuSample]]) -> None:
    """No nvidia-smi on the node: the payload finds the vendor's tool (SIMULATED here: it prints the tool's
    documented output), runs it once a tick between tick lines, and the report's reader gets the same GPUs and
    values the vendor parser reads from that output; ROCm's visible-devices variable is the header's."""
    d = tmp_path / "bin"
    d.mkdir()
    (d / tool).symlink_to(VENDOR_SIM)
    proc = _payload(tmp_path, [str(d)], ROCR_VISIBLE_DEVICES="0,1")
    path = Path(sample_path(str(tmp_path), "job", "7", "nid001"))
    deadline = time.monotonic() + WAIT_BOUND_S
    while not path.exists() or path.read_text().count("@.\n") < 2:
        assert time.monotonic() < deadline, path.read_text() if path.exists() else "no sample file"
        time.sleep(0.1)
    proc.send_signal(signal.SIGUSR1)
    assert proc.wait(timeout=WAIT_BOUND_S) == 0
    text = path.read_text()
    assert text.startswith(f"{HEADER_TAG} v1 job=7 node=nid001 interval=1 visible=0,1 status=sampling tool={tool}")
    assert text.count(f"@ {tool} ") >= 2 and text.rstrip("\n").endswith(f"{HEADER_TAG} end")
    node = read_node_file("nid001", str(path))
    assert node.status == "ended" and node.bad_lines == 0 and node.tool == tool, node.messages
    want = parse((VENDOR_DATA / data).read_text(), "nid001")
    assert [g.index for g in node.gpus] == [s.index for s in want] and all(g.samples >= 2 for g in node.gpus)
    for got, s in zip(node.gpus, want, strict=True):
        assert s.util_gpu is not None and got.util_mean is not None
        assert abs(got.util_mean - s.util_gpu) <= 0.5  # the report keeps whole percents
        assert got.mem_total_mib == s.mem_total_mib and got.mem_peak_mib == pytest.approx(s.mem_used_mib, abs=1e-3)


def test_the_stop_after_nvidia_smi_was_reaped_writes_only_the_end_line(tmp_path: Path) -> None:
    """The node payload's stop (its USR1/TERM trap) as bash runs it when bash no longer knows nvidia-smi as its child
    (ended and reaped): the trap's ``wait`` must not write bash's "pid N is not a child of this shell" into the
    samples file (the 26.05 lane once read it there as a line that is not a sample). Here ``p`` names a process
    that is surely no child of the shell (pid 1), which makes bash say it every time."""
    import re
    import subprocess

    from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLE_SUFFIX, SAMPLER_PAYLOAD

    trap = re.search(r"trap '(.*?)' USR1 TERM INT HUP; nice -n 19 nvidia-smi", SAMPLER_PAYLOAD)
    assert trap is not None, SAMPLER_PAYLOAD
    prefix = str(tmp_path / "smp-")
    scenario = ('n=nid001; exec >>"$1$n' + SAMPLE_SUFFIX + '" 2>&1 </dev/null; '
                'echo "0, 1, 2"; p=1; ' + trap.group(1))
    subprocess.run(["bash", "-c", scenario, "payload", prefix], check=True, timeout=60)
    assert (tmp_path / f"smp-nid001{SAMPLE_SUFFIX}").read_text().splitlines() == ["0, 1, 2", f"{HEADER_TAG} end"]
