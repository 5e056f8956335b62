# shellcheck shell=bash
# The accounting part of capture.sh (sourced by it when the cluster runs with slurmdbd): finished jobs of every
# kind, then sacct (ntui's own formats and the defaults) and sacctmgr. Uses capture.sh's cap, submit, wait_state,
# wait_gone, $WORK, $OUT, $S.

# ntui.core.slurm.sacct.RECORD_FIELDS and ntui.core.slurm.sacct_steps.STEP_FIELDS
RECORD_FIELDS=JobID,JobName,State,ExitCode,Reason,Submit,Start,End,Elapsed,NodeList,Account,QOS,Partition,WorkDir
STEP_FIELDS=JobID,JobName,State,ExitCode,ElapsedRaw,TotalCPU,AllocCPUS,NNodes,NTasks,MaxRSS,MaxRSSNode,MaxRSSTask
STEP_FIELDS+=,Timelimit,NodeList

# A time limit of one minute: the longest wait, so first (harvested at the end).
TLIM="$(submit timeout -J ntui-timeout -N1 -n1 -t 1 --wrap 'echo started; srun sleep 600')"
OK="$(submit completed -J ntui-ok --wait --wrap 'echo fine')"
FAIL="$(submit failed -J ntui-fail --wait --wrap 'echo bad >&2; exit 3' || true)"
FAIL="$(job_of failed)"
E130="$(submit exit_130 -J ntui-exit130 --wait --wrap 'exit 130' || true)"
E130="$(job_of exit_130)"
K9="$(submit killed_9 -J ntui-kill9 --wait --wrap 'kill -9 $$' || true)"
K9="$(job_of killed_9)"
SK9="$(submit srun_killed_9 -J ntui-srun-kill9 --wait --wrap 'srun bash -c "kill -9 \$\$"' || true)"
SK9="$(job_of srun_killed_9)"
SE130="$(submit srun_exit_130 -J ntui-srun-exit130 --wait --wrap 'srun bash -c "exit 130"' || true)"
SE130="$(job_of srun_exit_130)"
# 2 nodes x 2 tasks beside an overlapping 1-task-per-node "sampler" step (as ntui's GPU sampler), then exit 3
STEPS="$(submit steps_2node -J ntui-steps -N2 --ntasks-per-node=2 --gpus-per-node=2 -t 5 --wait --wrap \
    'srun --overlap -N2 --ntasks-per-node=1 -J ntui-gpu-sampler sleep 6 & srun -J train bash -c "sleep 8"; wait; exit 3' \
    || true)"
STEPS="$(job_of steps_2node)"
CANC="$(submit cancelled_srun -J cancel-srun -N1 -n1 -t 00:10:00 --wrap 'echo started; srun sleep 600')"
wait_state "$CANC" '^RUNNING'
sleep 3
scancel "$CANC"
for id in "$OK" "$FAIL" "$E130" "$K9" "$SK9" "$SE130" "$STEPS" "$CANC"; do wait_gone "$id" 60; done
wait_gone "$TLIM" 180
sleep 3   # slurmctld sends the last records to slurmdbd

ALL="$OK,$FAIL,$E130,$K9,$SK9,$SE130,$STEPS,$CANC,$TLIM"
cap sacct_records sacct -j "$ALL" -X -P -n "--format=$RECORD_FIELDS"
cap sacct_records_steps sacct -j "$ALL" -P -n "--format=$RECORD_FIELDS"
cap sacct_exit_codes sacct -j "$ALL" -P -o JobID,JobName,State,ExitCode,DerivedExitCode
cap sacct_default sacct -j "$ALL"
cap sacct_job_completed sacct -j "$OK" -X -P
cap sacct_steps_2node sacct -j "$STEPS" --noconvert -n -P -o "$STEP_FIELDS"
cap sacct_steps_2node_default sacct -j "$STEPS"
cap sacct_since sacct -X -P -n -S "$(date +%Y-%m-%d)" -u root "--format=$RECORD_FIELDS"
cap sacct_unknown sacct -j 999999 -X -P -n "--format=$RECORD_FIELDS"
cap batch_log_timeout cat "$WORK/ntui-timeout-$TLIM.out"
cap batch_log_cancelled_srun_accounting cat "$WORK/cancel-srun-$CANC.out"
cap scontrol_show_job_timeout scontrol show job -d "$TLIM"
cap scontrol_show_job_exit_130 scontrol show job -d "$E130"
cap scontrol_show_job_killed_9 scontrol show job -d "$K9"
cap squeue_exit_codes squeue --noheader -t all -j "$ALL" -O "JobID:$S,State:$S,Reason:$S,ExitCode:$S"
cap sacctmgr_users_accounting sacctmgr -nP show users withassoc format=account,qos where user=root
cap sacctmgr_assoc sacctmgr -nP show assoc where user=root format=cluster,account,qos
cap sacctmgr_qos sacctmgr -nP show qos format=name,priority,maxwall
cap sbatch_bad_account sbatch --parsable -A nosuchacct --wrap 'true'
cap sbatch_test_only_bad_account sbatch --test-only -A nosuchacct --wrap 'true'
cap sbatch_test_only_qos_not_allowed sbatch --test-only -A ntuidev -q ntuilow --wrap 'true'
cap sdiag_accounting sdiag
