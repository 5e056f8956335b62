# shellcheck shell=bash
# The helpers capture.sh and capture-waiting.sh share (sourced; they set OUT, WORK and JOBS first).
# cap NAME CMD...: NAME.stdout, NAME.stderr, NAME.rc, byte for byte (never fails); submit ROLE ARGS...: sbatch, the
# id printed and recorded in $OUT/$JOBS; wait_state JOBID REGEX [SECONDS]: until "%T %r" matches; cleanup: scancel
# every job recorded.

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
    echo "$role=$id" >>"$OUT/$JOBS"
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

cleanup() {  # every job the script created is listed in $JOBS (submit runs in a subshell)
    local ids
    ids="$(cut -d= -f2 "$OUT/$JOBS" 2>/dev/null | tr '\n' ' ')"
    # shellcheck disable=SC2086
    [[ -z "${ids// /}" ]] || scancel $ids 2>/dev/null || true
}
