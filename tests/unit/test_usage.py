"""ntui.core.gpu.usage: the sample-file reader, the statistics, the series and the findings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ntui.core.gpu.usage import (
    IDLE_GPU_FRACTION,
    LOW_MEMORY_PEAK_FRACTION,
    SERIES_BUCKETS,
    JobFacts,
    _Series,
    build_report,
    read_node_file,
    suggest_time_limit,
)
from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLE_FIELDS, find_sample_files, sample_path

FIELDS = ",".join(SAMPLE_FIELDS)
T0 = 1_780_000_000.0  # an arbitrary epoch second


def stamp(t: float) -> str:
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t)) + f".{int(round(t % 1 * 1000)):03d}"


def header(node: str, interval: int = 10) -> str:
    return f"{HEADER_TAG} v1 job=7 node={node} interval={interval} status=sampling fields={FIELDS}\n"


def line(t: float, idx: int, util: object, mem: object = 1000, total: object = 81920, power: object = 100.0) -> str:
    return f"{stamp(t)}, {idx}, GPU-{idx:04d}, {util}, {mem}, {total}, {power}, 50\n"


def write(tmp: Path, node: str, body: str) -> str:
    path = sample_path(str(tmp), "job", "7", node)
    Path(path).write_text(body)
    return path


def test_statistics_are_exact(tmp_path: Path) -> None:
    # GPU 0: utilisation 0..99 once each, 10 s apart, 200 W constant; memory peaks at 40960 of 81920 MiB.
    body = header("nid001") + "".join(
        line(T0 + 10 * k, 0, k, mem=40960 if k == 50 else 1000, power=200.0) for k in range(100)
    )
    path = write(tmp_path, "nid001", body + f"{HEADER_TAG} end\n")
    node = read_node_file("nid001", path)
    assert node.status == "ended" and node.bad_lines == 0 and node.gaps == 0
    (g,) = node.gpus
    assert g.samples == 100
    assert g.util_mean == pytest.approx(49.5)
    assert (g.util_p50, g.util_p90) == (49, 89)
    assert g.idle_fraction == pytest.approx(0.05)  # 0..4 are below 5 %
    assert g.mem_peak_mib == 40960 and g.mem_peak_fraction == pytest.approx(0.5)
    assert g.power_mean_w == pytest.approx(200.0)
    # 100 samples x 10 s x 200 W = 200,000 J = 55.56 Wh
    assert g.energy_wh == pytest.approx(200 * 1000 / 3600)
    assert g.covered_s == pytest.approx(1000)
    # busy GPU-hours: sum(util/100 x 10 s) = 4950 % x 10 s / 100 = 495 s
    assert g.busy_gpu_h == pytest.approx(495 / 3600)


def test_na_values_count_as_unknown_for_that_statistic_only(tmp_path: Path) -> None:
    body = header("nid001") + "".join(
        line(T0 + 10 * k, 0, "[N/A]" if k % 2 else 80, power="[Not Supported]", mem="[N/A]") for k in range(10)
    )
    (g,) = read_node_file("nid001", write(tmp_path, "nid001", body)).gpus
    assert g.samples == 10 and g.util_mean == 80 and g.util_p90 == 80
    assert g.power_mean_w is None and g.energy_wh is None and g.mem_peak_mib is None


def test_partial_last_line_is_skipped_and_bad_lines_name_file_line_and_field(tmp_path: Path) -> None:
    body = (
        header("nid001")
        + line(T0, 0, 50)
        + "Unable to determine the device handle for GPU0000:41:00.0: Unknown Error\n"
        + line(T0 + 10, 0, 60).replace(stamp(T0 + 10), "yesterday")
        + line(T0 + 20, 0, 70).replace(", 0, GPU", ", x, GPU")
        + "\x00\x00\x00\n"
        + line(T0 + 30, 0, 90)
        + line(T0 + 40, 0, 10)[:30]  # being written: no newline yet
    )
    path = write(tmp_path, "nid001", body)
    node = read_node_file("nid001", path)
    (g,) = node.gpus
    assert g.samples == 2 and g.util_mean == 70  # 50 and 90
    assert node.bad_lines == 4
    assert node.messages[0].startswith(f"{path}:3: not a sample")
    assert node.messages[1] == f"{path}:4: field timestamp: 'yesterday' is not a time"
    assert node.messages[2] == f"{path}:5: field index: 'x' is not a GPU index"
    assert "\\0" in node.messages[3]


def test_a_sample_the_stop_cut_short_is_not_damage_but_one_elsewhere_is(tmp_path: Path) -> None:
    """The sampler's stop may cut the tool's last line; the end line then follows it on a line of its own (the
    payload starts one). That cut line is not counted; the same short line anywhere else is."""
    cut = line(T0 + 20, 0, 70)[:40] + "\n"
    path = write(tmp_path, "nid001", header("nid001") + line(T0, 0, 50) + line(T0 + 10, 0, 60) + cut
                 + f"{HEADER_TAG} end\n")
    node = read_node_file("nid001", path)
    assert node.bad_lines == 0 and node.status == "ended" and node.gpus[0].samples == 2
    path = write(tmp_path, "nid002", header("nid002") + line(T0, 0, 50) + cut + line(T0 + 30, 0, 60))
    node = read_node_file("nid002", path)
    assert node.bad_lines == 1 and node.messages[0].startswith(f"{path}:3: not a sample (4 fields")
    path = write(tmp_path, "nid003", header("nid003") + line(T0, 0, 50) + cut)  # cut, and nothing after it
    assert read_node_file("nid003", path).bad_lines == 1


def test_gaps_and_clock_jumps_count_one_interval_each(tmp_path: Path) -> None:
    times = [T0, T0 + 10, T0 + 20, T0 + 620, T0 + 630, T0 + 300, T0 + 310]  # a 600 s gap, then 330 s back
    body = header("nid001") + "".join(line(t, 0, 100, power=360.0) for t in times)
    node = read_node_file("nid001", write(tmp_path, "nid001", body))
    (g,) = node.gpus
    assert node.gaps == 1 and node.longest_gap_s == pytest.approx(600)
    assert node.clock_backwards == 1
    assert g.covered_s == pytest.approx(70)  # 7 samples x 10 s: neither the gap nor the jump counts
    assert g.energy_wh == pytest.approx(360 * 70 / 3600)


def test_no_nvidia_smi_and_missing_files_say_why(tmp_path: Path) -> None:
    path = write(tmp_path, "nid002", f"{HEADER_TAG} v1 job=7 node=nid002 interval=10 status=no-nvidia-smi (x)\n")
    write(tmp_path, "nid001", header("nid001") + "".join(line(T0 + 10 * k, 0, 90) for k in range(8)))
    files = find_sample_files(str(tmp_path), "job", "7")
    assert list(files) == ["nid001", "nid002"] and files["nid002"] == path
    report = build_report(files, JobFacts("7"), expected_nodes=["nid001", "nid002", "nid003"])
    reasons = report.no_data_reasons
    assert reasons[0] == "nid002: no GPU tool on the node (nvidia-smi, amd-smi, rocm-smi, xpu-smi): no GPU samples"
    assert reasons[1].startswith("nid003: no sample file")
    assert report.gpus == 1 and report.elapsed_source == "samples" and report.elapsed_s == pytest.approx(80)


def test_restart_header_starts_a_new_segment(tmp_path: Path) -> None:
    first = "".join(line(T0 + 10 * k, 0, 90) for k in range(3))
    second = "".join(line(T0 + 3600 + 10 * k, 0, 30) for k in range(3))
    node = read_node_file("nid001", write(tmp_path, "nid001", header("nid001") + first + header("nid001") + second))
    (g,) = node.gpus
    assert node.restarts == 1 and node.gaps == 0 and g.samples == 6 and g.util_mean == 60


def test_series_is_bounded_and_keeps_the_shape() -> None:
    s = _Series(10.0)
    n = 65536  # 7.6 days at 10 s (half of it ends on a bucket edge)
    for k in range(n):
        s.add(10.0 * k, 100.0 if k < n // 2 else 0.0)
    assert len(s.sums) <= 2 * SERIES_BUCKETS
    pts = s.points(0.0, 10.0 * n, 10)
    assert pts[:5] == (100.0,) * 5 and pts[5:] == (0.0,) * 5


def test_series_of_a_gpu_aligns_with_the_job_time(tmp_path: Path) -> None:
    # nid002 starts sampling half-way through nid001's run: its first half of the series is unknown.
    write(tmp_path, "nid001", header("nid001") + "".join(line(T0 + 10 * k, 0, 80) for k in range(40)))
    write(tmp_path, "nid002", header("nid002") + "".join(line(T0 + 200 + 10 * k, 0, 20) for k in range(20)))
    report = build_report(find_sample_files(str(tmp_path), "job", "7"), JobFacts("7"), points=4)
    a, b = (n.gpus[0].util_series for n in report.nodes)
    assert a == (80.0, 80.0, 80.0, 80.0)
    assert b == (None, None, 20.0, 20.0)


def _job(tmp: Path, nodes: dict[str, list[tuple[int, int, float]]], samples: int = 20) -> dict[str, str]:
    """nodes: node -> per GPU (util, mem MiB, power W), constant over ``samples`` samples."""
    for node, gpus in nodes.items():
        rows = [line(T0 + 10 * k, i, u, mem=m, power=p) for k in range(samples) for i, (u, m, p) in enumerate(gpus)]
        write(tmp, node, header(node) + "".join(rows))
    return find_sample_files(str(tmp), "job", "7")


BUSY = (95, 70000, 600.0)


def test_findings_idle_gpu_low_memory_straggler(tmp_path: Path) -> None:
    files = _job(tmp_path, {
        "nid001": [(95, 14000, 600.0), (95, 14000, 600.0), (2, 14000, 70.0)],
        "nid002": [(50, 14000, 300.0), (50, 14000, 300.0), (50, 14000, 300.0)],
    })
    report = build_report(files, JobFacts("7", "RUNNING", False, 200, 3600))
    kinds = [f.kind for f in report.findings]
    assert kinds == ["idle-gpu", "low-memory", "straggler"], report.findings
    idle, mem, strag = report.findings
    assert idle.message.startswith("GPU 2 on nid001 idle 100 % of the time")
    assert mem.message.startswith("peak GPU memory 17 % of 80 GiB") and "a bigger batch fits" in mem.message
    assert mem.numbers["peak_fraction"] < LOW_MEMORY_PEAK_FRACTION
    # nid001: 1270 W; nid002: 900 W -> 29 % less
    assert strag.message == "nid002 drew 29 % less power than the other nodes: a straggler?"
    assert all(f.fix is None for f in report.findings)  # running: no time-limit finding yet


def test_no_findings_for_a_busy_balanced_job(tmp_path: Path) -> None:
    files = _job(tmp_path, {"nid001": [BUSY] * 4, "nid002": [BUSY] * 4})
    report = build_report(files, JobFacts("7", "COMPLETED", True, 200, 300))
    assert report.findings == ()
    assert report.gpu_hours_allocated == pytest.approx(8 * 200 / 3600)
    assert report.gpu_hours_busy == pytest.approx(8 * 0.95 * 200 / 3600)


def test_short_run_suggests_a_time_limit_as_an_override(tmp_path: Path) -> None:
    files = _job(tmp_path, {"nid001": [BUSY]})
    report = build_report(files, JobFacts("7", "COMPLETED", True, 43 * 60, 6 * 3600))
    (f,) = report.findings
    assert f.kind == "short-run" and f.fix == "sbatch.time=01:15:00"
    assert f.message == "used 12 % of its 6 h limit (43 min): `time: 01:15:00` would start sooner (backfill)"
    assert suggest_time_limit(43 * 60) == 75 * 60 and suggest_time_limit(1) == 15 * 60


def test_too_few_samples_give_no_findings(tmp_path: Path) -> None:
    files = _job(tmp_path, {"nid001": [(0, 10, 50.0)], "nid002": [BUSY]}, samples=3)
    assert build_report(files, JobFacts("7", "RUNNING")).findings == ()


def test_thresholds_are_sane() -> None:
    assert 0 < IDLE_GPU_FRACTION <= 1 and 0 < LOW_MEMORY_PEAK_FRACTION < 1


def test_gpus_outside_the_steps_visible_devices_are_not_counted(tmp_path: Path) -> None:
    head = header("nid001").replace(" status=", " visible=1,3 status=")
    body = "".join(line(T0 + 10 * k, i, 50) for k in range(3) for i in range(4))
    node = read_node_file("nid001", write(tmp_path, "nid001", head + body))
    assert [g.index for g in node.gpus] == [1, 3] and node.other_gpus == (0, 2)
    # with device cgroups nvidia-smi shows only the job's GPUs: nothing to drop
    node = read_node_file("nid001", write(tmp_path, "nid001", head.replace("1,3", "0,1,2,3") + body))
    assert len(node.gpus) == 4 and node.other_gpus == ()
    node = read_node_file("nid001", write(tmp_path, "nid001", head.replace("1,3", "GPU-a,GPU-b") + body))
    assert len(node.gpus) == 4
