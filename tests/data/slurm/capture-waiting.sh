#!/usr/bin/env bash
# Capture the outputs behind "why it waits" and "what would start sooner" (ntui/core/waiting/) from the dev
# cluster (scripts/dev-cluster up), next to the other captures:
#   eval "$(scripts/dev-cluster env)"; tests/data/slurm/capture-waiting.sh [OUTDIR]
# Every capture NAME is saved as NAME.stdout, NAME.stderr and NAME.rc, byte for byte (as capture.sh does).
# Only touches the jobs it submits (listed in jobs-waiting.txt, cancelled at the end); needs both nodes idle.
set -euo pipefail
LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/capture-lib.sh"

: "${SLURM_CONF:?run: eval \"\$(scripts/dev-cluster env)\" first}"
OUT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
WORK="${NTUI_CAPTURE_WORKDIR:-/tmp/ntui-capture-waiting}"
mkdir -p "$OUT" "$WORK"
cd "$WORK"
S=$'\x1f'

JOBS=jobs-waiting.txt
# shellcheck source=tests/data/slurm/capture-lib.sh
source "$LIB"
trap cleanup EXIT
: >"$OUT/jobs-waiting.txt"

# ---- a blocker fills the cluster (2 nodes x 2 CPUs): a 1-node job waits for resources
BLOCK="$(submit blocker -J wait-blocker -N2 -n4 -t 00:05:00 --wrap 'sleep 300')"
wait_state "$BLOCK" '^RUNNING' 600   # other jobs on the shared cluster may hold it first
PEND="$(submit pending_resources -J wait-pending -N1 -n1 -t 00:10:00 --wrap 'true')"
wait_state "$PEND" '^PENDING (Resources|Priority)'
sleep 7   # one more scheduler pass (sched_interval=5, bf_interval=5): the start estimate is set
cap squeue_start_default squeue --start -j "$PEND"
# --start keeps its own columns with -O (22.05.8 ignores -O then) but takes -o: width-less fields are not cut
cap squeue_start_O_ignored squeue --local --noheader --start --jobs="$PEND" -O "JobID:$S,StartTime:$S"
cap squeue_start_fields squeue --local --noheader --start --jobs="$PEND" -o "%i$S%T$S%r$S%S$S%Y$S%D$S%P"
cap squeue_start_me squeue --local --noheader --start --me -o "%i$S%T$S%r$S%S$S%Y$S%D$S%P"
cap scontrol_show_job_pending_resources scontrol show job -d "$PEND"
cap sprio_job sprio -j "$PEND"
cap sprio_job_fields sprio --noheader -j "$PEND" -o '%i|%Y|%A|%F|%J|%P|%Q|%S|%N|%T'
cap scontrol_write_batch_script scontrol write batch_script "$PEND" -
cap sbatch_test_only_full sbatch --test-only -N1 -n1 -t 00:10:00 --wrap 'true'
scancel "$BLOCK" "$PEND"
wait_state "$BLOCK" '^(CANCELLED|COMPLETED)' 30

# ---- one node busy: a 2-node job would wait, a 1-node one would start now
HALF="$(submit blocker_one_node -J wait-half -w nid001 -N1 -n2 -t 00:05:00 --wrap 'sleep 300')"
wait_state "$HALF" '^RUNNING' 600
sleep 2
cap sbatch_test_only_2node_one_busy sbatch --test-only -N2 --ntasks-per-node=1 -t 00:10:00 --wrap 'true'
cap sbatch_test_only_1node_one_busy sbatch --test-only -N1 --ntasks-per-node=1 -t 00:10:00 --wrap 'true'
scancel "$HALF"

# ---- a dependency on a job that failed: never satisfied
FAILED="$(submit failed -J wait-fail --wait --wrap 'exit 3' || true)"
FAILED="$(sed -n 's/^failed=//p' "$OUT/jobs-waiting.txt")"
wait_state "$FAILED" '^FAILED'
DEP="$(submit pending_dependency_failed -J wait-dep --dependency=afterok:"$FAILED" -t 00:05:00 --wrap 'true')"
wait_state "$DEP" 'DependencyNeverSatisfied' 30
cap scontrol_show_job_dependency_never scontrol show job -d "$DEP"
cap squeue_dependency_never squeue --local --noheader --jobs="$DEP" -O "JobID:$S,State:$S,Reason:$S"
LONG="$(submit dependency_target -J wait-target -t 00:05:00 --wrap 'sleep 300')"
wait_state "$LONG" '^RUNNING'
DEP2="$(submit pending_dependency -J wait-dep2 --dependency=afterok:"$LONG",afterany:"$FAILED" -t 00:05:00 --wrap 'true')"
wait_state "$DEP2" 'PENDING Dependency' 30
cap scontrol_show_job_dependency_or scontrol show job -d "$DEP2"

# ---- limits of QOS and associations (accounting on)
# (the fields of ntui.core.slurm.sacctmgr.build_qos_limits_argv / build_assoc_limits_argv)
cap sacctmgr_qos_limits sacctmgr -nP show qos format=name,maxjobspu,maxsubmitpu,maxtrespu,maxjobspa,maxtrespa,maxtres,maxtrespernode,maxtresmins,maxwall,grpjobs,grpsubmit,grptres,grptresmins,grptresrunmins,grpwall,mintres
cap sacctmgr_assoc_limits sacctmgr -nP show assoc where user="$(id -un)" format=account,partition,maxjobs,maxsubmit,maxtres,maxtrespernode,maxtresmins,maxwall,grpjobs,grpsubmit,grptres,grptresmins,grptresrunmins,grpwall

echo "captured into $OUT" >&2
