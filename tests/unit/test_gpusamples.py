"""The GPU pane's file source (ntui/core/gpu/samples.py) over files written the way the in-job sampler writes them
(tests/support/bigjob.py's writer, and hand-written lines for the states). No Textual, no timings."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.gpu import sampletail
from ntui.core.gpu.samples import SampleBoard
from ntui.core.gpu.usage import SERIES_BUCKETS
from ntui.core.jobfiles.samplefiles import HEADER_TAG, sample_path
from tests.support.bigjob import SAMPLE_FIELDS_TEXT, STEM, _stamp, make_bigjob


class Clock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _board(job_root: Path, job_id: str, clock: Clock | None = None) -> SampleBoard:
    board = SampleBoard(job_id, str(job_root / "logs"), STEM, monotonic=clock or Clock())
    board.load()
    return board


def header(node: str, status: str = "sampling", interval: int = 10, visible: str = "0,1,2,3") -> str:
    return (f"{HEADER_TAG} v1 job=7 node={node} interval={interval} visible={visible} status={status} "
            f"fields={SAMPLE_FIELDS_TEXT}\n")


def line(t: float, gpu: int, util: float, mem: float = 1000.0, power: str = "300.00", temp: int = 60) -> str:
    return f"{_stamp(t)}, {gpu}, GPU-{gpu:04d}, {util:.0f}, {mem:.0f}, 40960, {power}, {temp}\n"


def test_a_jobs_files_become_the_panes_samples_with_history_from_the_first_sample(tmp_path: Path) -> None:
    job = make_bigjob(tmp_path, nodes=2, steps=12, idle_gpus=((1, 2),), lagging_node=None, fail_rank=None)
    board = _board(tmp_path, job.job_id)
    assert board.nodes == ["nid000001", "nid000002"]
    assert board.interval_s == 10.0
    assert board.expected == {"nid000001": (0, 1, 2, 3), "nid000002": (0, 1, 2, 3)}
    latest = board.latest()
    assert sorted(latest) == ["nid000001", "nid000002"] and sorted(latest["nid000002"]) == [0, 1, 2, 3]
    u, mem, power, temp = job.reading(1, 3, job.steps - 1)
    s = latest["nid000002"][3]
    assert (s.util_gpu, s.mem_used_mib, s.mem_total_mib, s.power_w, s.temp_c) == (u, mem, 40960.0, power, temp)
    assert s.uuid == "GPU-0000103-big" and s.node == "nid000002"
    hist = board.util_series("nid000001", 0, 120)
    assert len(hist) == job.steps  # one point per sample: never more points than samples
    assert hist == tuple(float(job.reading(0, 0, k)[0]) for k in range(job.steps))
    assert board.util_series("nid000001", 0, 4) == tuple(
        sum(job.reading(0, 0, k)[0] for k in range(3 * p, 3 * p + 3)) / 3 for p in range(4))
    idle = [i for i in board.issues() if i.kind == "idle"]
    assert [(i.node, i.index) for i in idle] == [("nid000002", 2)] and "100 % of the run" in idle[0].message
    summary = board.summary()
    assert summary.gpus == 8 and summary.nodes == 2 and summary.util_mem_mean is None
    assert not board.ended and board.node_status("nid000001") == "sampling"
    board.close()


def test_reads_each_file_at_most_every_interval_and_only_the_new_bytes(tmp_path: Path) -> None:
    job = make_bigjob(tmp_path, nodes=2, steps=6, idle_gpus=(), lagging_node=None, fail_rank=None)
    clock = Clock(100.0)
    board = _board(tmp_path, job.job_id, clock)
    read0 = board.tail.bytes_read()
    assert read0 == sum(p.stat().st_size for p in job.sample_files.values())
    t_last = job.now - job.interval
    extra = "".join(line(t_last + 10, g, 50) for g in range(4))
    for p in job.sample_files.values():
        with open(p, "a") as fh:
            fh.write(extra)
    assert not board.poll(105.0)  # read at 100: not due before 110
    assert board.tail.bytes_read() == read0
    assert board.poll(110.0) and board.poll(111.0)  # spread: one file per 1 s tick (2 files, 10 s)
    assert not board.poll(112.0)
    assert board.tail.bytes_read() - read0 == 2 * len(extra)
    assert board.latest()["nid000001"][0].util_gpu == 50.0
    assert board.util_series("nid000001", 0, 120)[-1] == 50.0 and len(board.util_series("nid000001", 0, 120)) == 7
    board.close()


def test_a_partial_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = sample_path(str(tmp_path), "job", "7", "nid001")
    text = header("nid001") + line(1000.0, 0, 10) + line(1010.0, 0, 20)
    Path(path).write_text(text + line(1020.0, 0, 30)[:20])
    board = SampleBoard("7", str(tmp_path), "job", monotonic=Clock())
    board.load()
    assert board.latest()["nid001"][0].util_gpu == 20.0
    with open(path, "a") as fh:
        fh.write(line(1020.0, 0, 30)[20:])
    board.poll(10.0)
    assert board.latest()["nid001"][0].util_gpu == 30.0
    assert board.messages() == []  # the cut line was never parsed as garbage


def test_states_from_the_header_and_end_lines(tmp_path: Path) -> None:
    d = str(tmp_path)
    Path(sample_path(d, "job", "7", "nid001")).write_text(
        header("nid001") + "".join(line(1000.0 + 10 * k, g, 90) for k in range(3) for g in range(4)))
    Path(sample_path(d, "job", "7", "nid002")).write_text(
        header("nid002", status="no-nvidia-smi (nvidia-smi not found on PATH: no GPU samples on this node)"))
    Path(sample_path(d, "job", "7", "nid003")).write_text(
        header("nid003") + "".join(line(1000.0 + 10 * k, g, 80) for k in range(3) for g in range(4))
        + f"{HEADER_TAG} end\n")
    board = SampleBoard("7", d, "job", monotonic=Clock())
    board.load()
    assert [board.node_status(n) for n in board.nodes] == ["sampling", "no-nvidia-smi", "ended"]
    messages = {i.node: (i.kind, i.message) for i in board.issues()}
    assert messages["nid002"] == (
        "no_nvidia_smi", "nid002: no GPU tool on the node (nvidia-smi, amd-smi, rocm-smi, xpu-smi): no GPU samples")
    assert messages["nid003"] == ("ended", "nid003: sampling ended")
    assert "nid002" not in board.latest() and not board.ended
    with open(sample_path(d, "job", "7", "nid001"), "a") as fh:
        fh.write(f"{HEADER_TAG} end\n")
    board.poll(100.0)
    assert board.ended  # every node ended (or had no nvidia-smi): the job's work is over
    assert [i.kind for i in board.issues()] == ["no_nvidia_smi"]


def test_a_node_whose_samples_stop_is_stale_on_the_samples_clock(tmp_path: Path) -> None:
    d = str(tmp_path)
    Path(sample_path(d, "job", "7", "nid001")).write_text(
        header("nid001") + "".join(line(1000.0 + 10 * k, 0, 90) for k in range(10)))
    Path(sample_path(d, "job", "7", "nid002")).write_text(
        header("nid002") + "".join(line(1000.0 + 10 * k, 0, 90) for k in range(4)))
    board = SampleBoard("7", d, "job", monotonic=Clock())
    board.load()
    assert board.stale_nodes() == ["nid002"]
    stale = [i for i in board.issues() if i.kind == "stale"]
    assert [i.message for i in stale] == ["nid002: no samples for 60 s while the other nodes go on"]
    assert board.summary().nodes == 1


def test_a_day_of_samples_keeps_bounded_history_over_the_whole_run(tmp_path: Path) -> None:
    d = str(tmp_path)
    n = 8640  # 24 h at 10 s
    body = "".join(line(1000.0 + 10 * k, 0, 0 if k < n // 2 else 100) for k in range(n))
    Path(sample_path(d, "job", "7", "nid001")).write_text(header("nid001", visible="0") + body)
    board = SampleBoard("7", d, "job", monotonic=Clock())
    board.load()
    acc = board._readers["nid001"].gpus[0]
    assert len(acc.series.sums) <= 2 * SERIES_BUCKETS
    hist = board.util_series("nid001", 0, 60)
    assert len(hist) == 60 and hist[:29] == (0.0,) * 29 and hist[31:] == (100.0,) * 29


def test_a_replaced_file_starts_that_node_over(tmp_path: Path) -> None:
    path = Path(sample_path(str(tmp_path), "job", "7", "nid001"))
    path.write_text(header("nid001") + "".join(line(1000.0 + 10 * k, 0, 90) for k in range(5)))
    board = SampleBoard("7", str(tmp_path), "job", monotonic=Clock())
    board.load()
    assert len(board.util_series("nid001", 0, 120)) == 5
    path.unlink()
    path.write_text(header("nid001") + line(5000.0, 0, 7))
    board.poll(100.0)
    assert board.latest()["nid001"][0].util_gpu == 7.0


def test_a_node_file_that_appears_later_is_found(tmp_path: Path) -> None:
    d = str(tmp_path)
    Path(sample_path(d, "job", "7", "nid001")).write_text(header("nid001") + line(1000.0, 0, 90))
    clock = Clock(0.0)
    board = SampleBoard("7", d, "job", monotonic=clock)
    board.load()
    Path(sample_path(d, "job", "7", "nid002")).write_text(header("nid002") + line(1000.0, 0, 40))
    board.poll(30.0)
    assert board.nodes == ["nid001"]  # the directory is listed rarely
    board.poll(61.0)
    assert board.nodes == ["nid001", "nid002"] and board.latest()["nid002"][0].util_gpu == 40.0


def test_a_file_longer_than_one_read_is_caught_up_on_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sampletail, "MAX_READ", 100)  # a few lines per read
    path = Path(sample_path(str(tmp_path), "job", "7", "nid001"))
    path.write_text(header("nid001", visible="0") + "".join(line(1000.0 + 10 * k, 0, k) for k in range(20)))
    board = SampleBoard("7", str(tmp_path), "job", monotonic=Clock())
    board.load()
    assert board.util_series("nid001", 0, 120) == tuple(float(k) for k in range(20))
    assert board.tail.tails["nid001"].behind == 0 and board.messages() == []
