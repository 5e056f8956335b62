"""Benchmark: what each ``ntui --cluster NAME SUBCOMMAND`` costs the link: ssh logins and channels, one run each.

    python bench/ssh_channels.py

Starts the tests' private sshd on 127.0.0.1 (``tests/support/sshd.py``; needs root) whose sessions see a "cluster"
of stub Slurm clients (those of ``tests/unit/test_ssh_cli.py``: squeue, scontrol, sinfo, srun, sbatch) and a
history in the cluster's state directory with one job, its batch log and its GPU sample files. Each subcommand
runs as its own ``ntui`` process on the "laptop" side (no Slurm client on its PATH); the channels are counted in
sshd's log (``Starting session``, one per command over the master and one for the agent), the logins likewise
(``Accepted publickey``: one for the whole run, the master outliving each process). The stub ``scontrol`` knows no
job 5150: ``report`` says so and reports from the samples alone (exit 3), its channels counted as ever.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ntui.core.records.history import History  # noqa: E402
from tests.support import sshd as sshd_support  # noqa: E402
from tests.unit import test_ssh_cli as stubs  # noqa: E402

JOB = "5150"
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("jobs",),
    ("show", "203"),
    ("show", "213"),
    ("history", "-n", "5", "--no-resolve"),
    ("logs", JOB),
    ("report", JOB),
    ("gpus", "213", "--once", "--timeout", "60"),
)


def _cluster_job(state: Path, logs: Path) -> None:
    logs.mkdir(parents=True)
    history = History(state)
    try:
        history.record_intent(token="b5150", preset="train", preset_path=None, overrides=(), job_name="train",
                              launcher="torchrun", nodes=1, world_size=2, log_dir=str(logs), log_stem="train",
                              script="#!/bin/bash\n#SBATCH --job-name=train\n")
        history.record_submitted("b5150", JOB, "dev", None)
    finally:
        history.close()
    (logs / f"train-{JOB}.out").write_text("".join(f"line {i}\n" for i in range(1000)))
    from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLE_FIELDS, sample_path

    rows = "".join(f"2026/06/01 10:{k // 6:02d}:{k % 6 * 10:02d}.000, {i}, GPU-{i}, 50, 9000, 81559, 300.0, 50\n"
                   for k in range(360) for i in range(4))
    header = f"{HEADER_TAG} v1 job={JOB} node=c1 interval=10 status=sampling fields={','.join(SAMPLE_FIELDS)}\n"
    Path(sample_path(str(logs), "train", JOB, "c1")).write_text(header + rows)


def main() -> int:
    reason = sshd_support.why_not()
    if reason is not None:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ntui-bench-") as tmp:
        home = Path(tmp)
        state = home / "cluster-state"
        _cluster_job(state, home / "cluster-logs")
        env = {"PYTHONPATH": str(REPO), "NTUI_STATE_DIR": str(state)}
        with sshd_support.private_sshd(environment=env) as server:
            slurm_bin = home / "cluster-bin"
            slurm_bin.mkdir()
            trace = home / "trace.jsonl"
            for name, body in (("squeue", stubs.SQUEUE), ("sbatch", stubs.SBATCH), ("scontrol", stubs.SCONTROL),
                               ("sinfo", stubs.SINFO), ("srun", stubs.SRUN)):
                stubs._stub(slurm_bin, name, body, trace)
            laptop_bin = home / "laptop-bin"
            laptop_bin.mkdir()
            (laptop_bin / "ssh").symlink_to(shutil.which("ssh") or "/usr/bin/ssh")
            config = home / "config" / "ntui"
            config.mkdir(parents=True)
            (config / "config.yaml").write_text(
                f"clusters:\n  dev:\n    ssh: {sshd_support.HOST}\n    bin-dir: {slurm_bin}\n"
                f"    ssh-config: {server.ssh_config}\n    persist: 120\n")
            runtime = server.directory / "rt"
            runtime.mkdir(mode=0o700)
            laptop = {"PATH": str(laptop_bin), "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
                      "XDG_RUNTIME_DIR": str(runtime), "NTUI_STATE_DIR": str(home / "laptop-state"),
                      "LANG": "C.UTF-8", "PYTHONPATH": str(REPO),
                      "NTUI_REMOTE_AGENT": f"{sys.executable} -m ntui agent --stdio"}

            def counts() -> tuple[int, int]:
                text = server.log.read_text(errors="replace")
                return text.count("Accepted publickey"), text.count("Starting session:")

            print(f"{'subcommand':<34} {'exit':>4} {'logins':>6} {'channels':>8}")
            start = counts()
            for words in COMMANDS:
                before = counts()
                out = subprocess.run([sys.executable, "-m", "ntui", "--cluster", "dev", *words], env=laptop,
                                     cwd=REPO, capture_output=True, text=True, timeout=300,
                                     stdin=subprocess.DEVNULL)
                after = counts()
                print(f"{' '.join(words):<34} {out.returncode:>4} {after[0] - before[0]:>6} "
                      f"{after[1] - before[1]:>8}")
                if out.returncode not in (0, 1):
                    print(f"  stderr: {out.stderr.strip()[:300]}")
            end = counts()
            print(f"{'all of them':<34} {'':>4} {end[0] - start[0]:>6} {end[1] - start[1]:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
