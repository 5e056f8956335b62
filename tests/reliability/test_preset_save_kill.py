"""Preset save under ``kill -9`` at random moments: the file is always the old or the new version.

A forked child saves a preset in a tight loop with :func:`ntui.core.paths.atomic_write` (the function the
app's preset editor and ``ntui render -o`` use), alternating two valid versions and counting completed
writes in shared memory. The parent SIGKILLs it after a random delay, ``KILLS`` times. After every kill
the preset parses with ``yaml.safe_load``, validates without errors, and is byte for byte either the
last version whose write had returned or the one being written (nothing else, never a mix).

Temp files: ``atomic_write`` writes ``.<name>.<pid>.tmp`` next to the target and renames it over the
target; a writer killed between open and rename leaves its temp file behind. Those are ignored by preset
discovery (dot files, ``.tmp`` suffix). The policy the second test asks for: a save removes the temp
files of writers that are no longer alive, so at most the one of the last killed writer remains.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest
import yaml

from ntui.core.compose.presets import load_preset
from ntui.core.compose.spec import validate
from ntui.core.paths import atomic_write
from tests.support.waits import WAIT_BOUND_S

KILLS = 250
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ddp_check.py"


def _version(tag: str, nodes: int, log_dir: Path) -> bytes:
    args = "".join(f'  - "--{tag}-{i:04d}=value {i}"\n' for i in range(300))  # ~10 KB: writes take a while
    return (
        f"name: kill-test\n"
        f"description: version {tag}\n"
        f"launcher:\n  type: srun\n"
        f"sbatch:\n  nodes: {nodes}\n  ntasks-per-node: 2\n  time: \"00:10:00\"\n"
        f"script: {EXAMPLE}\n"
        f"logs: {{dir: {log_dir}}}\n"
        f"args:\n{args}"
    ).encode()


def _writer(path: str, versions: tuple[bytes, bytes], first: int, done: object, started: object) -> None:
    started.value = 1  # type: ignore[attr-defined]
    k = 0
    while True:
        atomic_write(Path(path), versions[(first + k) % 2], mode=0o644)
        k += 1
        done.value = k  # type: ignore[attr-defined]


def _temps(directory: Path, name: str) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.startswith(f".{name}.") and p.name.endswith(".tmp"))


def _save_loop(tmp_path: Path) -> tuple[Path, list[int], list[int]]:
    """Run the kill loop; returns the preset path, the temp-file count after each kill, and the versions seen."""
    ctx = multiprocessing.get_context("fork")
    directory = tmp_path / "presets"
    path = directory / "kill-test.yaml"
    versions = (_version("a", 2, tmp_path), _version("b", 1, tmp_path))
    atomic_write(path, versions[0], mode=0o644)
    current = 0
    rng = random.Random(os.environ.get("NTUI_RELIABILITY_SEED", "1234"))
    temps_after: list[int] = []
    seen: list[int] = []
    for i in range(KILLS):
        done = ctx.Value("q", 0, lock=False)
        started = ctx.Value("b", 0, lock=False)
        first = 1 - current
        child = ctx.Process(target=_writer, args=(str(path), versions, first, done, started), daemon=True)
        child.start()
        deadline = time.monotonic() + WAIT_BOUND_S
        while not started.value:
            assert time.monotonic() < deadline, "writer did not start"
            time.sleep(0.0005)
        # Every other kill comes after a completed write: the versions then change whatever a write costs on
        # this machine (a write slower than the random delay would otherwise make every kill land in the first).
        while i % 2 and not done.value:
            assert time.monotonic() < deadline, "writer never completed a write"
            time.sleep(0.0005)
        time.sleep(rng.uniform(0, 0.015))
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join(WAIT_BOUND_S)
        assert child.exitcode == -signal.SIGKILL
        k = done.value
        last_done = current if k == 0 else (first + k - 1) % 2
        in_flight = (first + k) % 2
        data = path.read_bytes()
        assert data in (versions[last_done], versions[in_flight]), (
            f"kill {i}: after {k} completed writes the file is neither the old nor the new version "
            f"({len(data)} bytes)")
        current = versions.index(data)
        seen.append(current)
        doc = yaml.safe_load(data)
        assert isinstance(doc, dict) and doc["description"] == f"version {'ab'[current]}"
        _, problems = validate(load_preset(str(path)))
        assert not [p for p in problems if p.is_error], problems
        temps_after.append(len(_temps(directory, path.name)))
    return path, temps_after, seen


@pytest.fixture(scope="module")
def save_loop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int], list[int], float]:
    start = time.monotonic()
    path, temps_after, seen = _save_loop(tmp_path_factory.mktemp("kill-save"))
    return path, temps_after, seen, time.monotonic() - start


def test_preset_save_survives_kill_9(save_loop: tuple[Path, list[int], list[int], float]) -> None:
    path, temps_after, seen, elapsed = save_loop
    mid_write = sum(1 for a, b in zip([0, *temps_after], temps_after, strict=False) if b > a)
    print(f"\n[reliability] {KILLS} kills in {elapsed:.1f}s; {mid_write} landed mid-write; versions seen "
          f"a={seen.count(0)} b={seen.count(1)}; stray temp files at the end: {temps_after[-1]}")
    assert len(seen) == KILLS
    assert 0 < seen.count(0) < KILLS, "the kills never landed between two different versions"
    assert mid_write > 0, "no kill landed inside a write: the loop tests nothing"
    # (its pace is measured in bench/reliability_costs.py: a test never asserts a time)


def test_no_stray_temp_files_accumulate(save_loop: tuple[Path, list[int], list[int], float]) -> None:
    _, temps_after, _, _ = save_loop
    assert max(temps_after) <= 1, f"stray temp files after each kill: max {max(temps_after)}, end {temps_after[-1]}"
