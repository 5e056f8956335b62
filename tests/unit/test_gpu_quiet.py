"""A quiet job's GPUs as evidence (ntui/core/gpu/quiet.py), on sample lines from scripts/simulated-nvidia-smi (the
SIMULATED tool: no GPU here; its ``hang=T:spin|idle`` profile plays a hung collective and a host-side wait) in the
in-job sampler's file format."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.gpu.quiet import gpu_evidence, points_of_lines, read_evidence
from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLE_FIELDS
from tests.support.simulated_gpu import simulator

SIM = Path(__file__).resolve().parents[2] / "scripts" / "simulated-nvidia-smi"
START = 1_796_000_000.0
INTERVAL = 10.0


def _file(tmp: Path, node: str, profile: str, samples: int = 12, gpus: int = 4) -> Path:
    """A sample file as the sampler writes it: its header, then one line per GPU per sample."""
    sim = simulator()
    prof = sim.Profile(profile)
    lines = [f"{HEADER_TAG} node={node} interval={INTERVAL:g}"]
    for t in range(samples):
        for i in range(gpus):
            vals = sim.values("0", node, i, t, gpus, False, prof, START + t * INTERVAL)
            lines.append(", ".join(vals[f] for f in SAMPLE_FIELDS))
    path = tmp / f"{node}.gpu"
    path.write_text("\n".join(lines) + "\n")
    return path


def _since(t: int) -> float:
    """The last sign of life: just before sample ``t`` (the samples' clock is the local time they print)."""
    return START + t * INTERVAL - INTERVAL / 2


@pytest.mark.parametrize(("how", "words"), [("spin", "at full utilisation on"), ("idle", "idle since then")])
def test_a_hang_seen_by_the_gpus_is_said(tmp_path: Path, how: str, words: str) -> None:
    files = {n: str(_file(tmp_path, n, f"hang=6:{how}")) for n in ("nid001", "nid002")}
    said = read_evidence(files, _since(6))
    assert said is not None and words in said and "its 8 GPUs" in said, said


def test_busy_gpus_say_nothing_and_too_few_samples_neither(tmp_path: Path) -> None:
    busy = {"nid001": str(_file(tmp_path, "nid001", ""))}
    assert read_evidence(busy, _since(6)) is None  # training on: the GPUs do not call it a hang
    hung = {"nid001": str(_file(tmp_path, "nid001", "hang=6:spin", samples=7))}
    assert read_evidence(hung, _since(6)) is None  # one sample since: not enough
    assert read_evidence({"nid009": str(tmp_path / "missing.gpu")}, 0.0) is None


def test_one_gpu_still_busy_is_no_spin(tmp_path: Path) -> None:
    lines = _file(tmp_path, "nid001", "hang=6:spin").read_text().splitlines()
    points = points_of_lines("nid001", lines)
    assert len(points) == 48
    busy = [p for p in points_of_lines("nid001", _file(tmp_path, "nid001", "").read_text().splitlines())
            if p.gpu == "nid001:3"]
    mixed = [p for p in points if p.gpu != "nid001:3"] + busy
    assert gpu_evidence(points, _since(6)) is not None
    assert gpu_evidence(mixed, _since(6)) is None
