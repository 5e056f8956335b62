"""What reading an AMD job's GPU samples costs against an NVIDIA job's of the same length.

    python bench/gpu_vendors.py [--hours 24] [--gpus 8] [--interval 10] [--repeat 3]

Writes one node's sample file twice, for a job of ``--hours`` at ``--interval`` seconds with ``--gpus`` GPUs: as
nvidia-smi's CSV lines, and as the sampler writes rocm-smi's JSON snapshots between tick lines (the form of
tests/data/gpus/vendors/rocm-smi-new.json). Times :func:`ntui.core.gpu.usage.read_node_file` on each (the report's
and the GPU pane's reader) and prints both medians, the files' sizes and the ratio AMD/NVIDIA, within this one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from ntui.core.gpu.usage import read_node_file
from ntui.core.jobfiles.samplefiles import HEADER_TAG, SAMPLE_FIELDS

T0 = 1_780_000_000.0


def _stamp(t: float) -> str:
    return time.strftime("%Y/%m/%d %H:%M:%S.000", time.gmtime(t))


def write_files(directory: Path, hours: float, gpus: int, interval: int) -> tuple[Path, Path]:
    ticks = int(hours * 3600 / interval)
    head = f"{HEADER_TAG} v1 job=1 node=n interval={interval} visible= status=sampling"
    nvidia, amd = directory / "nvidia.csv", directory / "amd.csv"
    with open(nvidia, "w") as nv, open(amd, "w") as am:
        nv.write(f"{head} fields={','.join(SAMPLE_FIELDS)}\n")
        am.write(f"{head} tool=rocm-smi fields={','.join(SAMPLE_FIELDS)}\n")
        for k in range(ticks):
            stamp = _stamp(T0 + k * interval)
            util = [(k * 7 + g * 13) % 101 for g in range(gpus)]
            nv.writelines(f"{stamp}, {g}, GPU-{g:04d}, {util[g]}, {30000 + g}, 65520, {300 + g}.0, 50\n"
                          for g in range(gpus))
            cards = {f"card{g}": {"GPU use (%)": str(util[g]), "Current Socket Graphics Package Power (W)": "300.0",
                                  "VRAM Total Memory (B)": str(65520 * 2**20),
                                  "VRAM Total Used Memory (B)": str((30000 + g) * 2**20),
                                  "Temperature (Sensor edge) (C)": "50.0"} for g in range(gpus)}
            am.write(f"@ rocm-smi {stamp}\n{json.dumps(cards)}\n@.\n")
        nv.write(f"{HEADER_TAG} end\n")
        am.write(f"{HEADER_TAG} end\n")
    return nvidia, amd


def _time(path: Path, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        node = read_node_file("n", str(path))
        out.append(time.perf_counter() - t)
        assert node.bad_lines == 0 and node.gpus, node.messages
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--interval", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        nvidia, amd = write_files(Path(tmp), args.hours, args.gpus, args.interval)
        t_nv, t_amd = _time(nvidia, args.repeat), _time(amd, args.repeat)
        print(f"{args.hours:g} h, {args.gpus} GPUs every {args.interval} s")
        print(f"  nvidia-smi lines : {nvidia.stat().st_size / 2**20:6.1f} MiB  read in {t_nv:6.2f} s")
        print(f"  rocm-smi ticks   : {amd.stat().st_size / 2**20:6.1f} MiB  read in {t_amd:6.2f} s")
        print(f"  ratio AMD/NVIDIA : {t_amd / t_nv:.2f}x")


if __name__ == "__main__":
    main()
