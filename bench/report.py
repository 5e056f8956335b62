"""Benchmark: `ntui report` over a long job's GPU sample files, and the in-job sampler's CPU cost.

    python bench/report.py [--nodes 8] [--gpus 4] [--interval 10] [--hours 6,24] [--sampler-seconds 60] [--json]

**Report.** For each length in ``--hours`` it synthesises the sampler's files (:mod:`ntui.core.compose.sampler`'s names
and header, nvidia-smi's CSV: 8 nodes x 4 GPUs x 24 h at 10 s = 276,480 samples) in a temporary directory, then,
in a fresh Python process each time (so memory figures do not leak between runs), times (wall and CPU: the CPU
time is the steadier figure on a shared machine)
:func:`ntui.core.gpu.usage.build_report` plus the text rendering of ``ntui report`` and reads the peak RSS
(``ru_maxrss``), next to the RSS of the same process after the imports (the baseline). Targets (issue 14):
<= 1 s and <= 100 MB for 24 h, and memory not growing with the job's length (6 h vs 24 h vs longer).

**Sampler.** Runs the per-node payload (the same bash the sbatch script runs in its step) with the SIMULATED
nvidia-smi at ``-l 10`` for ``--sampler-seconds``, stops it with SIGUSR1 as the script's EXIT trap does, and
reports the CPU seconds of the payload and its nvidia-smi (``RUSAGE_CHILDREN``) over the wall time: the share
of one core. Target: <= 1 %. The simulator is a Python script; the real nvidia-smi costs differently (NVML
queries), so treat the figure as the wrapper's cost plus a stand-in. ``--cluster`` also measures the sampler's
``srun`` client and ``slurmstepd`` on the dev cluster (needs ``SLURM_CONF``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ntui.core.jobfiles.samplefiles import (  # noqa: E402
    HEADER_TAG,
    SAMPLE_FIELDS,
    SAMPLER_NAME,
    SAMPLER_PAYLOAD,
    sample_path,
    sample_prefix,
)

JOB = "90002"
STEM = "bench"
T0 = 1_780_000_000


def synthesise(directory: Path, nodes: int, gpus: int, hours: float, interval: int) -> int:
    """Write one file per node; returns the number of samples. Utilisation follows a training-like pattern."""
    steps = int(hours * 3600 / interval)
    fields = ",".join(SAMPLE_FIELDS)
    for n in range(nodes):
        node = f"nid{n + 1:03d}"
        with open(sample_path(str(directory), STEM, JOB, node), "w") as fh:
            fh.write(f"{HEADER_TAG} v1 job={JOB} node={node} interval={interval} status=sampling fields={fields}\n")
            for k in range(steps):
                stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(T0 + k * interval))
                block = []
                for g in range(gpus):
                    util = 0 if (k % 30) > 27 else 85 + (k * 7 + g * 13) % 15
                    power = 70 + util * 5.9
                    block.append(f"{stamp}.{(k * 37) % 1000:03d}, {g}, GPU-bench-{n}-{g}, {util}, "
                                 f"{50000 + (k % 100) * 10}, 81559, {power:.2f}, {30 + util // 3}\n")
                fh.write("".join(block))
            fh.write(f"{HEADER_TAG} end\n")
    return nodes * gpus * steps


_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from ntui.core.compose.sampler import find_sample_files
from ntui.core.gpu.usage import JobFacts, build_report
from ntui.core.records.history import HistoryEntry
from ntui.core.jobs.report import format_report
base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
cpu = time.process_time()
files = find_sample_files(sys.argv[2], sys.argv[3], sys.argv[4])
report = build_report(files, JobFacts(sys.argv[4], "COMPLETED", True, None, 48 * 3600))
entry = HistoryEntry("t", sys.argv[4], None, "bench", None, (), "bench", "srun", 8, 32, sys.argv[2], sys.argv[3],
                     "", None, 0.0, 0.0, "submitted")
text = format_report(report, entry, None, 120)
wall = time.perf_counter() - t
print(json.dumps({"seconds": wall,
                  "cpu_seconds": time.process_time() - cpu,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "baseline_rss_mb": base_rss / 1024, "gpus": report.gpus, "lines": len(text),
                  "findings": [f.kind for f in report.findings]}))
"""


def bench_report(nodes: int, gpus: int, hours: float, interval: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ntui-bench-report-") as tmp:
        t = time.perf_counter()
        samples = synthesise(Path(tmp), nodes, gpus, hours, interval)
        gen = time.perf_counter() - t
        size = sum(f.stat().st_size for f in Path(tmp).iterdir())
        out = subprocess.run([sys.executable, "-c", _CHILD, str(REPO), tmp, STEM, JOB], capture_output=True,
                             text=True, check=True)
        res: dict[str, Any] = json.loads(out.stdout)
    res.update(hours=hours, samples=samples, file_mb=size / 1e6, synth_s=gen)
    return res


def bench_sampler(seconds: float, interval: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ntui-bench-sampler-") as tmp:
        simbin = Path(tmp) / "bin"
        simbin.mkdir()
        (simbin / "nvidia-smi").symlink_to(REPO / "scripts" / "simulated-nvidia-smi")
        env = dict(os.environ, PATH=f"{simbin}:{os.environ['PATH']}", SLURMD_NODENAME="nid001", SLURM_JOB_ID=JOB,
                   SLURM_GPUS_ON_NODE="4")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        proc = subprocess.Popen(["bash", "-c", SAMPLER_PAYLOAD, SAMPLER_NAME, sample_prefix(tmp, STEM, JOB),
                                 str(interval), ",".join(SAMPLE_FIELDS)], env=env)
        time.sleep(seconds)
        proc.send_signal(signal.SIGUSR1)
        proc.wait(timeout=30)
        wall = time.monotonic() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        lines = Path(sample_path(tmp, STEM, JOB, "nid001")).read_text().count("\n")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "core_share": cpu / wall, "lines": lines, "interval": interval}


def _proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_sampler_cluster(seconds: float, interval: int) -> dict[str, Any]:
    """A 1-node job whose script starts the sampler; near its end, the CPU seconds of srun, slurmstepd, the
    payload and nvidia-smi of the sampler step, over the step's age."""
    from ntui.core.compose.sampler import sampler_lines

    with tempfile.TemporaryDirectory(prefix="ntui-bench-sampler-", dir="/tmp") as tmp:
        simbin = Path(tmp) / "bin"
        simbin.mkdir()
        (simbin / "nvidia-smi").symlink_to(REPO / "scripts" / "simulated-nvidia-smi")
        script = "\n".join(["#!/bin/bash", "#SBATCH --nodes=1", "#SBATCH --gpus-per-node=4", "#SBATCH --time=5",
                            f"#SBATCH --output={tmp}/%j.out", "set -euo pipefail", f"export PATH={simbin}:$PATH",
                            *sampler_lines(tmp, STEM, interval_s=interval), f"sleep {seconds + 15}", ""])
        (Path(tmp) / "job.sbatch").write_text(script)
        job = subprocess.run(["sbatch", "--parsable", f"{tmp}/job.sbatch"], capture_output=True, text=True,
                             check=True).stdout.strip()
        try:
            deadline = time.monotonic() + 300
            while not any(Path(tmp).glob(f"{STEM}-{job}-gpu-*.csv")):
                if time.monotonic() > deadline:
                    raise RuntimeError("the sampler did not start")
                time.sleep(0.5)
            started = time.monotonic()
            time.sleep(seconds)
            wall = time.monotonic() - started
            ps = subprocess.run(["ps", "-ww", "-eo", "pid=,etimes=,args="], capture_output=True, text=True).stdout
            parts: dict[str, float] = {}
            for row in ps.splitlines():
                pid_s, _, rest = row.strip().partition(" ")
                _, _, args = rest.strip().partition(" ")
                kind = None
                if "--job-name=ntui-gpu-sampler" in args and args.startswith("srun"):
                    kind = "srun"
                elif args.startswith(f"slurmstepd: [{job}.0]"):
                    kind = "slurmstepd"
                elif args.startswith("bash -c") and f" {SAMPLER_NAME} {tmp}/" in args:
                    kind = "payload"
                elif "nvidia-smi --query-gpu=timestamp," in args and tmp in args:
                    kind = "nvidia-smi"
                if kind:
                    parts[kind] = parts.get(kind, 0.0) + _proc_cpu_s(int(pid_s))
        finally:
            subprocess.run(["scancel", job], capture_output=True)
    total = sum(parts.values())
    return {"wall_s": wall, "cpu_s": parts, "core_share": total / wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--gpus", type=int, default=4)
    ap.add_argument("--interval", type=int, default=10)
    ap.add_argument("--hours", default="6,24", help="comma-separated job lengths")
    ap.add_argument("--sampler-seconds", type=float, default=60.0, help="0 skips the sampler measurement")
    ap.add_argument("--cluster", action="store_true", help="also measure srun/slurmstepd on the dev cluster")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = {"report": []}
    for h in (float(x) for x in args.hours.split(",")):
        r = bench_report(args.nodes, args.gpus, h, args.interval)
        out["report"].append(r)
        if not args.json:
            print(f"report {args.nodes}x{args.gpus} GPUs, {h:g} h at {args.interval} s: {r['samples']:,} samples "
                  f"({r['file_mb']:.1f} MB): {r['seconds']:.2f} s ({r['cpu_seconds']:.2f} s CPU), "
                  f"peak RSS {r['peak_rss_mb']:.1f} MB "
                  f"(after imports {r['baseline_rss_mb']:.1f} MB)", flush=True)
    if args.sampler_seconds > 0:
        s = bench_sampler(args.sampler_seconds, args.interval)
        out["sampler"] = s
        if not args.json:
            print(f"sampler (payload + simulated nvidia-smi, -l {args.interval}, {s['wall_s']:.0f} s): "
                  f"{s['cpu_s']:.3f} CPU s = {100 * s['core_share']:.2f} % of a core; {s['lines']} lines", flush=True)
        if args.cluster:
            c = bench_sampler_cluster(args.sampler_seconds, args.interval)
            out["sampler_cluster"] = c
            if not args.json:
                detail = ", ".join(f"{k} {v:.2f}" for k, v in sorted(c["cpu_s"].items()))
                print(f"sampler step on the dev cluster ({c['wall_s']:.0f} s): {detail} CPU s = "
                      f"{100 * c['core_share']:.2f} % of a core")
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
