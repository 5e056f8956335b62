# shellcheck shell=bash
# Shared by the recording shims: write what the program is given, then run it.
#   shim_run RUNTIME ORIG_ARGV_FILE -- ENV-ARGV... -- PROGRAM ARGS...
# Writes $NTUI_SHIM_RECORD_DIR/RUNTIME-NODE-RANK-PID.argv (the shim's own argv, NUL-separated) and .env (the
# environment the program gets, `env -0`), then execs the program under that environment.
shim_record() {  # shim_record RUNTIME ARGV...: the shim's argv; sets SHIM_FILE
    local dir="${NTUI_SHIM_RECORD_DIR:?the recording shims write to NTUI_SHIM_RECORD_DIR}"
    mkdir -p "$dir"
    SHIM_FILE="$dir/$1-${SLURMD_NODENAME:-$(hostname)}-${SLURM_PROCID:-x}-$$"
    shift
    printf '%s\0' "$@" >"$SHIM_FILE.argv"
}
shim_exec() {  # shim_exec ENV-COMMAND... -- PROGRAM ARGS...: record the program's environment, then run it
    local envcmd=()
    while (($#)) && [[ "$1" != -- ]]; do envcmd+=("$1"); shift; done
    shift
    "${envcmd[@]}" env -0 >"$SHIM_FILE.env"
    exec "${envcmd[@]}" "$@"
}
