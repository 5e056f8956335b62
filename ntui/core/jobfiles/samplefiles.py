"""The GPU sample files a job's in-job sampler writes, as both sides see them: names, header, fields, payload.

One file per node, ``<log_dir>/<stem>-<jobid>-gpu-<node>.csv``: a header line (:data:`HEADER_TAG` ``v1 job=...
node=... interval=... visible=... status=sampling fields=...``), then nvidia-smi's
``--query-gpu=<SAMPLE_FIELDS> --format=csv,noheader,nounits`` lines, then an end line. :data:`SAMPLER_PAYLOAD` is the
per-node task that writes them (the script's side, :mod:`ntui.core.compose.sampler`); :mod:`ntui.core.gpu.usage`
and :mod:`ntui.core.gpu.samples` read them (the readers' side). srun's own messages for the sampler step go to
``...-gpu-srun.log``.
"""

from __future__ import annotations

import glob
import os

__all__ = [
    "DEFAULT_INTERVAL_S",
    "HEADER_TAG",
    "NO_TOOL_STATUSES",
    "OTHER_TOOLS",
    "SAMPLER_NAME",
    "SAMPLER_PAYLOAD",
    "SAMPLE_FIELDS",
    "SAMPLE_SUFFIX",
    "SRUN_LOG",
    "find_sample_files",
    "sample_path",
    "sample_prefix",
    "srun_log_path",
]

#: The ``--query-gpu`` fields of the sample files: a timestamp first, no name (constant, and it would make every
#: line longer).
SAMPLE_FIELDS: tuple[str, ...] = (
    "timestamp",
    "index",
    "uuid",
    "utilization.gpu",
    "memory.used",
    "memory.total",
    "power.draw",
    "temperature.gpu",
)
DEFAULT_INTERVAL_S = 10
#: First word(s) of the sampler's own lines in a sample file: header, end, no-nvidia-smi.
HEADER_TAG = "# ntui-gpu-samples"
#: ``$0`` of the sampler's shell (shows in ``ps``) and the step's name (shows in ``squeue -s``).
SAMPLER_NAME = "ntui-gpu-sampler"
SAMPLE_SUFFIX = ".csv"
GPU_PART = "-gpu-"
SRUN_LOG = "srun.log"


def sample_prefix(log_dir: str, stem: str, job_id: str) -> str:
    """``<log_dir>/<stem>-<job_id>-gpu-``: the node name and ``.csv`` follow."""
    return f"{log_dir}/{stem}-{job_id}{GPU_PART}"


def sample_path(log_dir: str, stem: str, job_id: str, node: str) -> str:
    return f"{sample_prefix(log_dir, stem, job_id)}{node}{SAMPLE_SUFFIX}"


def srun_log_path(log_dir: str, stem: str, job_id: str) -> str:
    """srun's own messages for the sampler step (normally empty)."""
    return f"{sample_prefix(log_dir, stem, job_id)}{SRUN_LOG}"


def find_sample_files(log_dir: str, stem: str, job_id: str) -> dict[str, str]:
    """node -> sample file, for the files present now (sorted by node name)."""
    prefix = sample_prefix(log_dir, stem, job_id)
    out: dict[str, str] = {}
    for path in sorted(glob.glob(glob.escape(prefix) + "*" + SAMPLE_SUFFIX)):
        node = path[len(prefix) : -len(SAMPLE_SUFFIX)]
        if node and os.sep not in node:
            out[node] = path
    return out


#: A header's status when the node has no GPU tool (the second is what files written before AMD and Intel GPUs were
#: read say).
NO_TOOL_STATUSES = ("no-gpu-tool", "no-nvidia-smi")
#: The tools tried on a node without nvidia-smi, in order, with one snapshot's command; their output goes between
#: tick lines (``@ TOOL TIMESTAMP`` ... ``@.``, read by ntui.core.gpu.vendors.TickLines, which holds the parsers).
OTHER_TOOLS: tuple[tuple[str, str], ...] = (
    ("amd-smi", "amd-smi monitor -p -t -u -m -v --json"),
    ("rocm-smi", "rocm-smi --showuse --showmemuse --showpower --showmeminfo vram --showtemp --json"),
    ("xpu-smi", "xpu-smi dump -d -1 -m 0,1,3,5,18 -n 1"),
)
#: The end line starts a line of its own even after a sample line the stop cut short. The stop's own ``wait`` says
#: nothing: when nvidia-smi has ended and been reaped just before the stop comes, bash's "pid N is not a child of
#: this shell" would land in the samples file (stdout and stderr both go there) as a line that is not a sample.
_OWN_LINE = '[ -z "$(tail -c 1 "$1$n' + SAMPLE_SUFFIX + '" 2>/dev/null)" ] || echo'
_TOOL_CASE = " ".join(f"{name}) nice -n 19 {command};;" for name, command in OTHER_TOOLS)

#: The node task's payload, single-quoted in the script so the batch shell expands nothing in it (Q1). Arguments:
#: $1 file prefix, $2 interval, $3 query fields. Its exit status is always 0. The tool is chosen on the node by what
#: is installed there: nvidia-smi streams the CSV itself (-l); another vendor's tool runs once a tick. ``visible=`` is
#: whichever visible-devices variable Slurm set for the step (CUDA, ROCR, ZE).
SAMPLER_PAYLOAD = (
    'n=${SLURMD_NODENAME:-$(hostname -s)}; '
    'exec >>"$1$n' + SAMPLE_SUFFIX + '" 2>&1 </dev/null || exit 0; '
    'v=${CUDA_VISIBLE_DEVICES:-${ROCR_VISIBLE_DEVICES:-${ZE_AFFINITY_MASK:-}}}; '
    f'h="{HEADER_TAG} v1 job=$SLURM_JOB_ID node=$n interval=$2 visible=$v"; '
    "if command -v nvidia-smi >/dev/null 2>&1; then "
    'echo "$h status=sampling fields=$3"; '
    f"trap 'kill \"$p\" 2>/dev/null; wait \"$p\" 2>/dev/null; {_OWN_LINE}; echo \"{HEADER_TAG} end\"; exit 0' "
    "USR1 TERM INT HUP; "
    'nice -n 19 nvidia-smi --query-gpu="$3" --format=csv,noheader,nounits -l "$2" & p=$!; '
    f'wait "$p"; r=$?; {_OWN_LINE}; echo "{HEADER_TAG} end status=nvidia-smi-exit-$r"; exit 0; fi; '
    f"t=; for c in {' '.join(name for name, _ in OTHER_TOOLS)}; do "
    'if command -v "$c" >/dev/null 2>&1; then t=$c; break; fi; done; '
    'if [ -z "$t" ]; then echo "$h status=no-gpu-tool (none of nvidia-smi, '
    + ", ".join(name for name, _ in OTHER_TOOLS) + ' on PATH: no GPU samples on this node)"; exit 0; fi; '
    'echo "$h status=sampling tool=$t fields=$3"; '
    f"trap 'kill \"$p\" 2>/dev/null; echo \"{HEADER_TAG} end\"; exit 0' USR1 TERM INT HUP; "
    "while :; do echo \"@ $t $(date '+%Y/%m/%d %H:%M:%S.%3N')\"; "
    f'case "$t" in {_TOOL_CASE} esac; echo "@."; sleep "$2" & p=$!; wait "$p"; done'
)
