#!/usr/bin/env bash
# Re-capture Slurm outputs from a dev cluster (scripts/dev-cluster up [--slurm V]).
#   eval "$(scripts/dev-cluster env [--slurm V])"; tests/data/slurm/capture.sh [OUTDIR]
#       the cluster SLURM_CONF points at, as it runs: without accounting the main set (jobs.txt), with
#       accounting (slurmdbd) the sacct/sacctmgr set (jobs_accounting.txt); OUTDIR defaults to this directory
#   tests/data/slurm/capture.sh --slurm V [OUTDIR]
#       both sets from dev cluster V, which it restarts twice (down; up --no-accounting --clean; capture; down;
#       up --clean; capture) and leaves up with accounting; OUTDIR defaults to this directory's V/
#       (the top-level files of this directory are 22.05's, captured without accounting)
# Every capture NAME is saved as NAME.stdout, NAME.stderr and NAME.rc (exit status), byte for byte.
# Job ids differ between runs; jobs.txt / jobs_accounting.txt map each role to the id used in this capture.
# Cancels the jobs it created at the end. Needs an otherwise empty queue (it asserts which jobs run).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
DC="$REPO/scripts/dev-cluster"

if [[ "${1:-}" == --slurm ]]; then
    V="${2:?--slurm needs a version}"
    OUT="${3:-$HERE/$V}"
    "$DC" down --slurm "$V"
    "$DC" up --slurm "$V" --no-accounting --clean
    (eval "$("$DC" env --slurm "$V")" && "${BASH_SOURCE[0]}" "$OUT")
    "$DC" down --slurm "$V"
    "$DC" up --slurm "$V" --clean
    (eval "$("$DC" env --slurm "$V")" && "${BASH_SOURCE[0]}" "$OUT")
    exit 0
fi

: "${SLURM_CONF:?run: eval \"\$(scripts/dev-cluster env)\" first}"
OUT="${1:-$HERE}"
WORK="${NTUI_CAPTURE_WORKDIR:-/tmp/ntui-capture}"
mkdir -p "$OUT" "$WORK"
cd "$WORK"
S=$'\x1f'
ACCOUNTING=0
grep -qx 'AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF" && ACCOUNTING=1
JOBS="$OUT/jobs.txt"
((ACCOUNTING)) && JOBS="$OUT/jobs_accounting.txt"

cap() {  # cap NAME CMD...   (never fails)
    local name="$1" rc=0
    shift
    "$@" >"$OUT/$name.stdout" 2>"$OUT/$name.stderr" || rc=$?
    echo "$rc" >"$OUT/$name.rc"
}

submit() {  # submit ROLE SBATCH-ARGS...  -> prints the job id, records it
    local role="$1" id
    shift
    id="$(sbatch --parsable -o "$WORK/%x-%j.out" "$@")"
    id="${id%%;*}"
    echo "$role=$id" >>"$JOBS"
    echo "$id"
}

wait_state() {  # wait_state JOBID REGEX [SECONDS]  on "%T %r"
    local id="$1" re="$2" deadline=$((SECONDS + ${3:-30})) s
    while ((SECONDS < deadline)); do
        s="$(squeue -h -j "$id" -t all -o '%T %r' 2>/dev/null | head -n1 || true)"
        [[ "$s" =~ $re ]] && return 0
        sleep 0.5
    done
    echo "capture: job $id never matched '$re' (last: '$s')" >&2
    return 1
}

job_of() { sed -n "s/^$1=//p" "$JOBS"; }  # job_of ROLE: the id submit recorded (submit runs in a subshell)

wait_gone() {  # wait_gone JOBID [SECONDS]: the job has ended (any final state)
    wait_state "$1" '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE)' "${2:-60}"
}

cleanup() {  # every job this script created is listed in $JOBS
    local ids
    ids="$(cut -d= -f2 "$JOBS" 2>/dev/null | tr '\n' ' ')"
    # shellcheck disable=SC2086
    [[ -z "${ids// /}" ]] || scancel $ids 2>/dev/null || true
}
trap cleanup EXIT

[[ -z "$(squeue -h -o %A)" ]] || { echo "capture: queue not empty; cancel the jobs first" >&2; exit 1; }
: >"$JOBS"

# ---- every client's --version
for c in squeue sbatch scontrol scancel sacct sacctmgr sinfo sdiag srun sprio salloc sstat strigger; do
    cap "${c}_version" "$c" --version
done

if ((ACCOUNTING)); then
    # shellcheck source=tests/data/slurm/capture_accounting.sh
    . "$HERE/capture_accounting.sh"
    echo "captured (accounting) into $OUT" >&2
    exit 0
fi

# ---- idle cluster
cap sinfo_partitions_idle sinfo -h -o '%P|%a|%l|%D|%T|%N|%G|%f|%c|%m'
cap sinfo_nodes_idle sinfo -h -N -o '%N|%T|%c|%m|%G|%f|%P|%E'
cap scontrol_show_partition scontrol show partition -o
cap scontrol_show_node scontrol show node -o
cap scontrol_ping scontrol ping

# ---- finished jobs (sbatch --wait returns the job's exit code)
COMPLETED="$(submit completed -J ntui-ok --wait --wrap 'echo fine')"
FAILED="$(submit failed -J ntui-fail --wait --wrap 'echo bad >&2; exit 3' || true)"
FAILED="$(job_of failed)"
wait_state "$COMPLETED" '^COMPLETED'
wait_state "$FAILED" '^FAILED'
cap scontrol_show_job_completed scontrol show job -d "$COMPLETED"
cap scontrol_show_job_failed scontrol show job -d "$FAILED"

# ---- submission outputs
cap sbatch_parsable sbatch --parsable -J ntui-parsable -o "$WORK/%x-%j.out" --wrap 'true'
echo "parsable=$(head -n1 "$OUT/sbatch_parsable.stdout")" >>"$JOBS"
wait_state "$(job_of parsable)" '^COMPLETED'   # so the test-only job can start "now"
cap sbatch_test_only_ok sbatch --test-only -N2 --ntasks-per-node=2 --gpus-per-node=4 -t 00:10:00 --wrap 'true'
cap sbatch_test_only_gpus5 sbatch --test-only --gpus-per-node=5 --wrap 'true'
cap sbatch_test_only_bad_partition sbatch --test-only -p nosuchpart --wrap 'true'
cap sbatch_test_only_time_over_limit sbatch --test-only -t 03:00:00 --wrap 'true'
cap sbatch_gpus5 sbatch --parsable --gpus-per-node=5 --wrap 'true'
cap sbatch_bad_partition sbatch --parsable -p nosuchpart --wrap 'true'
cap sbatch_bad_constraint sbatch --parsable -C nosuchfeature --wrap 'true'
cap sbatch_test_only_too_many_nodes sbatch --test-only -N3 --wrap 'true'

# ---- scancel of running jobs: the cancel line in the batch log (with a running srun step, and without)
CANC="$(submit cancelled_srun -J cancel-srun -N1 -n1 -t 00:10:00 --wrap 'echo started; srun sleep 600')"
CANB="$(submit cancelled_batch -J cancel-batch -N1 -n1 -t 00:10:00 --wrap 'echo started; sleep 600')"
wait_state "$CANC" '^RUNNING'
wait_state "$CANB" '^RUNNING'
sleep 3   # the srun step has started
cap scancel_running scancel "$CANC"
scancel "$CANB"
wait_gone "$CANC" 60
wait_gone "$CANB" 60
sleep 1
cap batch_log_cancelled_srun cat "$WORK/cancel-srun-$CANC.out"
cap batch_log_cancelled_batch cat "$WORK/cancel-batch-$CANB.out"
cap scontrol_show_job_cancelled scontrol show job -d "$CANC"

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
cap scontrol_show_job_held scontrol show job -d "$HELD"
cap scontrol_show_job_begin scontrol show job -d "$BEGIN"
cap scontrol_show_job_dependency scontrol show job -d "$DEP"
cap scontrol_show_job_time_over_limit scontrol show job -d "$OVER"
cap squeue_start squeue --start
cap squeue_start_job squeue --start -j "$RES"
cap squeue_start_fields squeue --start --noheader -j "$RES,$PRIO" -O "JobID:$S,StartTime:$S,SchedNodes:$S,Reason:$S"
cap sprio_job sprio -j "$RES"
cap sprio_all sprio
cap scontrol_show_config scontrol show config
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
scancel "$RUN2N" "$UNI" "$ARR" "$RES" "$PRIO" "$HELD" "$HARR" "$BEGIN" "$DEP" "$OVER" 2>/dev/null || true
for id in "$RUN2N" "$UNI" "$RES"; do wait_gone "$id" 60; done
sleep 2

# ---- extra partitions (the idle cluster): scontrol create, captured, deleted again
# (26.05 without accounting refuses AllowQos=normal: "Invalid qos specification", rc 1; then without AllowQos)
scontrol create PartitionName=long Nodes=nid001 MaxTime=UNLIMITED MaxNodes=1
scontrol create PartitionName=maint Nodes=nid002 MaxTime=30:00 State=DOWN
cap scontrol_create_partition_allowqos scontrol create PartitionName=acctonly 'Nodes=nid[001-002]' \
    AllowAccounts=physics AllowQos=normal MaxTime=1-00:00:00
[[ "$(cat "$OUT/scontrol_create_partition_allowqos.rc")" == 0 ]] \
    || scontrol create PartitionName=acctonly 'Nodes=nid[001-002]' AllowAccounts=physics MaxTime=1-00:00:00
cap scontrol_show_partition_multi scontrol show partition -o
cap sinfo_partitions_multi sinfo -h -o "%P$S%a$S%l$S%D$S%T$S%N$S%G"
cap sbatch_test_only_long_partition sbatch --test-only -p long -t 3-00:00:00 --wrap 'true'
for p in long maint acctonly; do scontrol delete PartitionName="$p" || true; done

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

# ---- node states: idle, then a killed slurmd (not responding, then down), then back (dev-cluster start-node)
if [[ -n "${NTUI_DEV_SLURM:-}" && -x "$DC" ]]; then
    node_state() { sinfo -h -N -n nid002 -o '%T' 2>/dev/null | head -n1; }
    wait_node() {  # wait_node REGEX SECONDS
        local deadline=$((SECONDS + $2)) st=""
        while ((SECONDS < deadline)); do
            st="$(node_state)"
            [[ "$st" =~ $1 ]] && return 0
            sleep 0.5
        done
        echo "capture: nid002 never matched '$1' (last: '$st')" >&2
        return 1
    }
    cap sinfo_node_states_idle sinfo -h -N -n 'nid[001-002]' -o "%N$S%T$S%E"
    "$DC" kill-node --slurm "$NTUI_DEV_SLURM" nid002
    wait_node '^idle\*$' 60
    cap sinfo_node_states_not_responding sinfo -h -N -n 'nid[001-002]' -o "%N$S%T$S%E"
    wait_node '^down\*$' 90
    cap sinfo_node_states_down sinfo -h -N -n 'nid[001-002]' -o "%N$S%T$S%E"
    "$DC" start-node --slurm "$NTUI_DEV_SLURM" nid002
else
    echo "capture: NTUI_DEV_SLURM not set (eval scripts/dev-cluster env): node-state captures skipped" >&2
fi

echo "captured into $OUT" >&2
