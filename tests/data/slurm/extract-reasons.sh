#!/usr/bin/env bash
# The pending/failure reason names of a Slurm release, one per line, sorted and unique (what squeue's %r and
# scontrol's Reason= print), from a clone of SchedMD/slurm:
#   tests/data/slurm/extract-reasons.sh SLURM_GIT_DIR TAG > tests/data/slurm/reasons-VERSION.txt
# Up to 23.02 the names are the return strings of job_reason_string() in src/common/slurm_protocol_defs.c; from
# 23.11 on they are the .str entries of src/common/job_state_reason.c. Only the names are kept (no Slurm code).
set -euo pipefail
dir="${1:?slurm git dir}" tag="${2:?tag, e.g. slurm-24-11-5-1}"
if git -C "$dir" cat-file -e "$tag:src/common/job_state_reason.c" 2>/dev/null; then
    git -C "$dir" show "$tag:src/common/job_state_reason.c" | grep -o '\.str = "[^"]*"' | sed 's/^\.str = "//; s/"$//'
else
    git -C "$dir" show "$tag:src/common/slurm_protocol_defs.c" \
        | awk '/^extern (const )?char \*job_reason_string\(/,/^}/' | grep -o 'return "[^"]*"' \
        | sed 's/^return "//; s/"$//'
fi | LC_ALL=C sort -u
