"""The times the reliability tests used to assert, measured here as ratios within one run (tests check mechanisms).

    python bench/reliability_costs.py [--kills 250]

* **runner timeout**: ``SubprocessRunner.run`` of a program that hangs (and starts a child), ``timeout=1``: the
  wall time until ``SlurmTimeout`` over the timeout (1.0 would be exact; the rest is killing the process group);
* **CLI timeout**: ``ntui jobs`` against a hanging ``squeue`` with ``NTUI_SLURM_TIMEOUT=1.5``: its wall time over
  the same ``ntui jobs`` against an ``squeue`` that answers at once (what the timeout adds) and over 1.5 s;
* **hostile log**: a :class:`~ntui.core.logs.tail.FileTail`'s first poll of the reliability suite's hostile log
  (escapes, a 10 MB line) over the first poll of a plain log of the same size;
* **kill loop**: the preset save kill loop (``tests/reliability/test_preset_save_kill.py``), per kill, over one
  plain ``atomic_write`` of the same preset;
* **presets listing**: ``ntui presets`` with the broken-preset corpus installed over ``ntui presets`` without it.

Machine load changes every absolute figure; the ratios are what to compare between runs. Load average is printed
with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ntui.core.logs.tail import FileTail  # noqa: E402
from ntui.core.paths import atomic_write  # noqa: E402
from ntui.core.slurm.runner import SlurmTimeout, SubprocessRunner  # noqa: E402

HANG = """#!{python}
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
time.sleep(60)
"""
ANSWER = "#!/bin/sh\necho '{\"jobs\": []}'\n"


def _timed(fn: Callable[[], object], repeat: int = 3) -> float:
    """The median wall time of ``fn`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _stub(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def runner_timeout(tmp: Path) -> float:
    prog = _stub(tmp / "hang", "squeue", HANG.format(python=sys.executable))

    def once() -> None:
        try:
            SubprocessRunner().run([str(prog)], timeout=1.0)
        except SlurmTimeout:
            return
        raise SystemExit("the hanging program answered")

    return _timed(once) / 1.0


def cli_timeout(tmp: Path) -> tuple[float, float]:
    import subprocess

    from tests.reliability.conftest import ntui_env

    hang = tmp / "hang"
    _stub(hang, "squeue", HANG.format(python=sys.executable))
    quick = tmp / "quick"
    _stub(quick, "squeue", ANSWER)

    def jobs(bin_dir: Path) -> Callable[[], object]:
        env = ntui_env(tmp / "home", PATH=f"{bin_dir}:{os.environ['PATH']}", NTUI_SLURM_TIMEOUT="1.5")
        return lambda: subprocess.run([sys.executable, "-m", "ntui", "jobs"], env=env, capture_output=True,
                                      timeout=120, cwd=REPO)

    hung, answered = _timed(jobs(hang)), _timed(jobs(quick))
    return hung / answered, hung / 1.5


def hostile_log(tmp: Path) -> float:
    from tests.reliability.test_hostile_logs import _write_log

    hostile = tmp / "hostile.out"
    _write_log(hostile)
    plain = tmp / "plain.out"
    size = hostile.stat().st_size
    line = b"step 1200 loss 2.3456 lr 3.0e-04 tokens/s 81234\n"
    plain.write_bytes(line * (size // len(line) + 1))
    return _timed(lambda: FileTail(hostile, window=100).poll()) / _timed(lambda: FileTail(plain, window=100).poll())


def kill_loop(tmp: Path, kills: int) -> float:
    import tests.reliability.test_preset_save_kill as kill

    kill.KILLS = kills
    t0 = time.perf_counter()
    path, _, seen = kill._save_loop(tmp / "kill")
    per_kill = (time.perf_counter() - t0) / len(seen)
    data = path.read_bytes()
    one_write = _timed(lambda: atomic_write(tmp / "plain.yaml", data, mode=0o644), repeat=50)
    return per_kill / one_write


def presets_listing(tmp: Path) -> float:
    import subprocess

    from tests.reliability.conftest import ntui_env
    from tests.reliability.test_bad_presets import _install_corpus

    def listing(home: Path) -> Callable[[], object]:
        env = ntui_env(home)
        return lambda: subprocess.run([sys.executable, "-m", "ntui", "presets"], env=env, capture_output=True,
                                      timeout=120, cwd=REPO)

    _install_corpus(tmp / "broken" / "config" / "ntui" / "presets")
    return _timed(listing(tmp / "broken")) / _timed(listing(tmp / "clean"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=250)
    args = ap.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="ntui-bench-reliability-") as d:
        tmp = Path(d)
        print(f"runner timeout: wall / timeout                     {runner_timeout(tmp):6.2f}")
        over_quick, over_timeout = cli_timeout(tmp)
        print(f"ntui jobs, hanging squeue: wall / answering squeue {over_quick:6.2f}"
              f"  (wall / 1.5 s {over_timeout:.2f})")
        print(f"hostile log, first poll / a plain log's            {hostile_log(tmp):6.2f}")
        print(f"kill loop: one kill / one atomic_write             {kill_loop(tmp, args.kills):6.1f}")
        print(f"ntui presets, broken corpus / none                 {presets_listing(tmp):6.2f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
