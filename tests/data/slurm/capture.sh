#!/usr/bin/env bash
# Re-capture the Slurm outputs in this directory from the dev cluster (scripts/dev-cluster up).
#   eval "$(scripts/dev-cluster env)"; tests/data/slurm/capture.sh [OUTDIR]
# Every capture NAME is saved as NAME.stdout, NAME.stderr and NAME.rc (exit status), byte for byte.
# Job ids differ between runs; jobs.txt maps each role to the id used in this capture.
# Cancels the jobs it created at the end. Needs an otherwise empty queue (it asserts which jobs run).
set -euo pipefail
LIB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/capture-lib.sh"

: "${SLURM_CONF:?run: eval \"\$(scripts/dev-cluster env)\" first}"
OUT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
WORK="${NTUI_CAPTURE_WORKDIR:-/tmp/ntui-capture}"
mkdir -p "$OUT" "$WORK"
cd "$WORK"
S=$'\x1f'

JOBS=jobs.txt
# shellcheck source=capture-lib.sh
source "$LIB"
trap cleanup EXIT

[[ -z "$(squeue -h -o %A)" ]] || { echo "capture: queue not empty; cancel the jobs first" >&2; exit 1; }
: >"$OUT/jobs.txt"

# ---- idle cluster
cap sinfo_version sinfo --version
cap sinfo_partitions_idle sinfo -h -o '%P|%a|%l|%D|%T|%N|%G|%f|%c|%m'
cap sinfo_nodes_idle sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%E'
cap scontrol_show_partition scontrol show partition -o
cap scontrol_show_node scontrol show node -o
cap scontrol_ping scontrol ping

# ---- finished jobs (sbatch --wait returns the job's exit code)
COMPLETED="$(submit completed -J ntui-ok --wait --wrap 'echo fine')"
FAILED="$(submit failed -J ntui-fail --wait --wrap 'echo bad >&2; exit 3' || true)"
FAILED="$(sed -n 's/^failed=//p' "$OUT/jobs.txt")"
wait_state "$COMPLETED" '^COMPLETED'
wait_state "$FAILED" '^FAILED'
cap scontrol_show_job_completed scontrol show job -d "$COMPLETED"
cap scontrol_show_job_failed scontrol show job -d "$FAILED"

# ---- submission outputs
cap sbatch_parsable sbatch --parsable -J ntui-parsable -o "$WORK/%x-%j.out" --wrap 'true'
echo "parsable=$(head -n1 "$OUT/sbatch_parsable.stdout")" >>"$OUT/jobs.txt"
wait_state "$(sed -n 's/^parsable=//p' "$OUT/jobs.txt")" '^COMPLETED'   # so the test-only job can start "now"
cap sbatch_test_only_ok sbatch --test-only -N2 --ntasks-per-node=2 --gpus-per-node=4 -t 00:10:00 --wrap 'true'
cap sbatch_test_only_gpus5 sbatch --test-only --gpus-per-node=5 --wrap 'true'
cap sbatch_test_only_bad_partition sbatch --test-only -p nosuchpart --wrap 'true'
cap sbatch_test_only_time_over_limit sbatch --test-only -t 03:00:00 --wrap 'true'
cap sbatch_gpus5 sbatch --parsable --gpus-per-node=5 --wrap 'true'
cap sbatch_bad_partition sbatch --parsable -p nosuchpart --wrap 'true'
cap sbatch_bad_constraint sbatch --parsable -C nosuchfeature --wrap 'true'

# ---- the queue mix
RUN2N="$(submit running_2node_gpu -J 'train 2n' -C gpu -N2 --ntasks-per-node=1 --gpus-per-node=4 -t 01:00:00 \
    --wrap 'srun sleep 600')"
wait_state "$RUN2N" '^RUNNING'
UNI="$(submit running_unicode -J 'ünï cödé: run #1' -n1 -t 00:30:00 --wrap 'sleep 600')"
wait_state "$UNI" '^RUNNING'
ARR="$(submit running_array -J arr-limited --array=0-3%1 -n1 -t 00:20:00 --wrap 'sleep 600')"
wait_state "${ARR}_0" '^RUNNING'
RES="$(submit pending_resources -J need-gpus -N1 --gpus-per-node=2 -t 00:30:00 --wrap 'sleep 60')"
PRIO="$(submit pending_priority -J need-1gpu -N1 --gpus-per-node=1 -t 00:30:00 --wrap 'sleep 60')"
HELD="$(submit pending_held -J held-one --hold --wrap 'sleep 60')"
HARR="$(submit pending_held_array -J held-arr --hold --array=0-5 --wrap 'sleep 60')"
BEGIN="$(submit pending_begin -J later --begin=now+3600 --wrap 'sleep 60')"
DEP="$(submit pending_dependency -J after-train --dependency=afterok:"$RUN2N" --wrap 'sleep 60')"
OVER="$(submit pending_time_over_limit -J too-long -t 03:00:00 --wrap 'sleep 60')"
wait_state "$RES" 'PENDING (Resources|Priority)' 30
sleep 7   # one more main-scheduler pass (sched_interval=5) so every pending reason is set
cap sinfo_partitions_busy sinfo -h -o '%P|%a|%l|%D|%T|%N|%G|%f|%c|%m'
cap sinfo_nodes_busy sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%E'

F="JobID:$S,ArrayJobID:$S,ArrayTaskID:$S,Name:$S,StateCompact:$S,State:$S,Reason:$S,TimeUsed:$S,TimeLimit:$S,"
F+="StartTime:$S,NumNodes:$S,NodeList:$S,tres-alloc:$S,Partition:$S,QOS:$S,WorkDir:$S,UserName:$S"
cap squeue_mix_array squeue --noheader --array -O "$F"
cap squeue_mix_noarray squeue --noheader -O "$F"
cap squeue_mix_with_exitcode squeue --noheader --array -O "$F,ExitCode:$S"
cap squeue_logs squeue --noheader --array -O "JobID:$S,STDOUT:$S,STDERR:$S,WorkDir:$S"
cap squeue_default squeue
cap squeue_all_states squeue --noheader --array -t all -O "JobID:$S,State:$S,Reason:$S"

cap scontrol_show_job_running_2node_gpu scontrol show job -d "$RUN2N"
cap scontrol_show_job_pending scontrol show job -d "$RES"
cap scontrol_show_job_array_task_running scontrol show job -d "${ARR}_0"
cap scontrol_show_job_held_array scontrol show job -d "$HARR"
cap scontrol_show_job_unknown scontrol show job -d 999999
cap scontrol_show_hostnames scontrol show hostnames 'nid[001-002]'

# ---- actions
cap scancel_unknown scancel 999999
cap scancel_unknown_verbose scancel -v 999999
cap scontrol_hold_pending scontrol hold "$PRIO"
cap scontrol_release_pending scontrol release "$PRIO"
cap scontrol_release_unknown scontrol release 999999
cap scontrol_hold_running scontrol hold "$UNI"
cap scontrol_release_running scontrol release "$UNI"
cap scontrol_requeue_running scontrol requeue "$UNI"
cap scontrol_requeue_pending scontrol requeue "$RES"
cap scontrol_show_job_requeued scontrol show job -d "$UNI"
wait_state "$UNI" '^PENDING' 30
cap scontrol_show_job_requeued_pending scontrol show job -d "$UNI"
cap sacct_no_accounting sacct -j "$COMPLETED" -X -P
cap sacctmgr_users sacctmgr -nP show users withassoc format=account,qos where user=root
cap sdiag sdiag

# ---- unreachable controller: a copy of slurm.conf with a dead port and a short MessageTimeout
DEAD="$WORK/dead-slurm.conf"
sed -e 's/^SlurmctldPort=.*/SlurmctldPort=16899/' -e 's/^MessageTimeout=.*/MessageTimeout=2/' "$SLURM_CONF" >"$DEAD"
t0=$(date +%s.%N)
SLURM_CONF="$DEAD" cap squeue_unreachable squeue --noheader -O "JobID:$S,State:$S"
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}' >"$OUT/squeue_unreachable.seconds"
t0=$(date +%s.%N)
SLURM_CONF="$DEAD" cap scontrol_ping_unreachable scontrol ping
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}' >"$OUT/scontrol_ping_unreachable.seconds"

echo "captured into $OUT" >&2
