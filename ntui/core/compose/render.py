"""Render a validated :class:`JobSpec` into an sbatch script.

Structure (rule ids of ntui.core.compose.rules and docs/rules.md in brackets):
  shebang; every ``#SBATCH`` line [P1, P2]; only then commands, starting with ``set -euo pipefail``.
  Directive values are resolved in Python and quoted with ``shlex.quote`` [P3, P4].
  Values that are the same on every node (MASTER_ADDR, MASTER_PORT) are computed in the batch
  shell, outside any container [Q3, R1, R2, R4]. Per-task values (SLURM_PROCID, SLURM_NODEID,
  RANK) only ever appear inside fixed single-quoted payloads, so each task expands them [Q1, Q2].
  User args and env values are single shell words produced by ``shlex.quote`` and reach the
  program as positional parameters, verbatim [Q2, Q5, Q6]. The program is ``exec``'d [Q4].
  A sweep (``spec.sweep``) is one job array: ``--array=0-N%P``, per-task log names [W11], and each task's values
  read from its manifest into ``NTUI_SWEEP`` and joined into the templated words [W10]
  (:mod:`ntui.core.compose.sweep`, :mod:`ntui.core.jobfiles.manifest`).
"""

from __future__ import annotations

import os
import shlex

from ntui.core.compose.containers import Wrapped, wrap
from ntui.core.compose.longrun import continue_line, launch_lines, rank_words, run_lines, signal_directive
from ntui.core.compose.rdzvconf import RdzvConf, merge_rdzv_conf, split_rdzv_conf
from ntui.core.compose.rules import PORT_BASE, PORT_SPAN, SLINGSHOT_ENV
from ntui.core.compose.sampler import sampler_lines
from ntui.core.compose.spec import Directive, JobSpec
from ntui.core.jobfiles.journal import compose_line, journal_lines, launch_begin_line, launch_end_line
from ntui.core.jobfiles.lognames import (
    FLIGHT_RECORDER_SUFFIX,
    PTRACER_SUFFIX,
    RANK_HEADER_SHELL,
    RANK_LOG_SUFFIX,
    LogPaths,
)
from ntui.core.jobfiles.machinery import MARK
from ntui.core.jobfiles.manifest import task_lines
from ntui.core.progress.preset import script_line as progress_script_line
from ntui.core.slurm.options import srun_word

# Fixed payloads. Single-quoted in the script, so the batch shell expands nothing in them.
# Each rank's log starts with "ntui: rank N on NODE" (written and parsed in ntui.core.jobfiles.lognames).
RANK_HEADER = RANK_HEADER_SHELL
SRUN_RANK_PAYLOAD = (
    "export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS"
    f' NODE_RANK=$SLURM_NODEID; {RANK_HEADER}; exec "$0" "$@"'
)
# Run by torchrun/accelerate for each worker: RANK is the worker's *global* rank. accelerate's
# one-process mode sets no RANK: that process is rank 0 (L2).
WORKER_LOG_PAYLOAD = (
    f': "${{RANK:=0}}"; exec >>"$NTUI_RANK_LOG_PREFIX$RANK.out" 2>&1; {RANK_HEADER}; exec "$0" "$@"'
)
# c10d guesses whether it hosts the rendezvous store by matching the endpoint against the local
# hostname; a mismatch (IP vs name, high-speed vs management name) hangs, and two agents that both
# match race for the port (R8). Node 0 of the allocation is MASTER_ADDR, so say so explicitly: the
# c10d backend takes an `is_host` key of the rendezvous configuration over its hostname guess.
IS_HOST = "is_host=$(( SLURM_NODEID == 0 ))"
# The launchers keep only the last rendezvous configuration option, so a user's one from extra-args
# reaches the tasks in this variable and joins ntui's key in the single option they read (R13).
RDZV_CONF_ENV = "NTUI_RDZV_CONF"


#: How many ports after the derived one the batch shell tries before it keeps the last (R4).
PORT_TRIES = 100
# The batch shell runs on the first node unless a site moves the batch step; the LISTEN entries (state 0A) of the
# kernel's socket tables say what is taken there, with nothing bound or connected.
_PORT_PROBE = r"""# A derived port that something on the first node already listens on would fail the rendezvous:
# the batch shell, on that node, takes the next free one before any task starts (R4).
ntui_port_listened() {  # PORT: a socket of this node listens on it (the kernel's tables, state 0A)
    local f files=()
    for f in /proc/net/tcp /proc/net/tcp6; do if [ -r "$f" ]; then files+=("$f"); fi; done
    [ "${#files[@]}" -gt 0 ] || return 1
    awk -v p="$(printf ':%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
        "${files[@]}"
}
if [ "${SLURMD_NODENAME:-}" = "$MASTER_ADDR" ]; then
    NTUI_DERIVED=$MASTER_PORT NTUI_PROBES=0
    while [ "$NTUI_PROBES" -lt @TRIES@ ] && ntui_port_listened "$MASTER_PORT"; do
        MASTER_PORT=$(( @BASE@ + (MASTER_PORT - @BASE@ + 1) % @SPAN@ )) NTUI_PROBES=$(( NTUI_PROBES + 1 ))
    done
    [ "$MASTER_PORT" = "$NTUI_DERIVED" ] \
        || echo "ntui: port $NTUI_DERIVED is in use on $MASTER_ADDR; MASTER_PORT=$MASTER_PORT (R4)" >&2
fi"""


def port_probe_lines() -> list[str]:
    """The lines after the derived ``MASTER_PORT`` that step over a port the first node already listens on (R4)."""
    text = _PORT_PROBE.replace("@TRIES@", str(PORT_TRIES)).replace("@BASE@", str(PORT_BASE))
    return text.replace("@SPAN@", str(PORT_SPAN)).splitlines()


def _rdzv_conf_word(option: str, user: bool) -> str:
    """The one rendezvous-configuration word of a payload: the user's keys (if any), then ntui's."""
    value = merge_rdzv_conf(f"${RDZV_CONF_ENV}" if user else "", IS_HOST)
    return f'{option}="{value}"' if user else f"{option}={value}"


def torchrun_payload(user_rdzv_conf: bool = False) -> str:
    return f'exec "$0" {_rdzv_conf_word("--rdzv-conf", user_rdzv_conf)} "$@"'


def accelerate_payload(user_rdzv_conf: bool = False) -> str:
    return (
        'exec "$0" launch --config_file="$NTUI_ACCELERATE_CONFIG" --machine_rank="$SLURM_NODEID" '
        f'{_rdzv_conf_word("--rdzv_conf", user_rdzv_conf)} "$@"'
    )


ACCELERATE_CONFIG_NAME = "accelerate.yaml"
# accelerate's distributed_type per ntui mode (accelerate.utils.DistributedType values).
_ACCELERATE_TYPE = {"multi_gpu": "MULTI_GPU", "cpu": "NO", "single": "NO"}


def log_paths(spec: JobSpec) -> LogPaths:
    return LogPaths(spec.log_dir, spec.log_stem, array=spec.sweep is not None)


def _word(spec: JobSpec, text: str) -> str:
    """A user value as one shell word: quoted, or for a sweep its template with the task's values (W10)."""
    return spec.sweep.shell_word(text) if spec.sweep is not None else q(text)


def q(value: str) -> str:
    return shlex.quote(value)


def directive_line(d: Directive) -> str:
    if d.value is None:
        return f"#SBATCH --{d.option}"
    return f"#SBATCH --{d.option}={q(d.value)}"


def _continued(words: list[list[str]]) -> str:
    """Join groups of shell words, one group per line, with backslash continuations."""
    lines = [" ".join(group) for group in words if group]
    return " \\\n    ".join(lines)


def render(spec: JobSpec) -> str:
    """The sbatch script for ``spec``. Pure: same spec, same text."""
    paths = log_paths(spec)
    out: list[str] = ["#!/bin/bash"]
    directives = list(spec.directives)
    options = {d.option for d in directives}
    if spec.sweep is not None:
        directives.append(Directive("array", spec.sweep.array))
    if spec.run is not None:
        directives.append(Directive("signal", signal_directive(spec.run)))  # the batch shell only (T10)
        if spec.run.mode == "requeue" and "requeue" not in options:
            directives.append(Directive("requeue", None))
    directives.append(Directive("output", paths.batch_pattern))
    if "open-mode" not in options:
        # Requeued jobs restart the script with the same id: append, don't truncate (L5).
        directives.append(Directive("open-mode", "append"))
    out.extend(directive_line(d) for d in directives)
    out.append(f"# Generated by ntui from preset {spec.name!r}. Slurm reads #SBATCH lines only above")
    out.append("# the first command (P1): add directives to the preset, not below this line.")
    if spec.progress_pattern is not None:  # read back by whoever follows the job's progress
        out.append(progress_script_line(spec.progress_pattern))
    out.append("set -euo pipefail")
    out.append("")
    # First: an end before the launch is recorded too (J2).
    out.extend(journal_lines(spec.log_dir, spec.log_stem, paths.job_id_shell))
    out.append("")
    if spec.sweep is not None:
        out.extend(task_lines(spec.sweep.manifest_path(spec.log_dir, spec.log_stem), spec.sweep.names))
        out.append("")

    out.append(f"{MARK}Rendezvous: identical on every node, so computed once here, outside any container (R1-R4).")
    out.append('MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)')
    out.append('if [ -z "$MASTER_ADDR" ]; then')
    out.append('    echo "ntui: cannot resolve the first host of $SLURM_JOB_NODELIST" >&2')
    out.append("    exit 1")
    out.append("fi")
    out.append("export MASTER_ADDR")
    if spec.master_port is None:
        out.append(f"export MASTER_PORT=$(( {PORT_BASE} + SLURM_JOB_ID % {PORT_SPAN} ))")
        out.extend(port_probe_lines())
    else:
        out.append(f"export MASTER_PORT={spec.master_port}")
    out.append("# srun of Slurm 22.05-23.02 does not inherit --cpus-per-task (C1).")
    out.append('export SRUN_CPUS_PER_TASK="$SLURM_CPUS_PER_TASK"')
    out.append("export PYTHONUNBUFFERED=1 SLURM_UNBUFFEREDIO=1")
    out.append("export PYTHONFAULTHANDLER=1  # a rank killed by SIGSEGV or SIGABRT says so in its own log (D3)")
    out.append("# A timed-out collective's flight-recorder dump goes next to the logs, not to ~/.cache (D1).")
    out.append(f"export TORCH_FR_DUMP_TEMP_FILE={q(paths.rank_prefix_dir)}{paths.job_id_shell}"
               f"{q(FLIGHT_RECORDER_SUFFIX)}")
    out.append('export TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$TORCH_FR_DUMP_TEMP_FILE"  # its older name')
    env_names = {k for k, _ in spec.env}
    if spec.launcher == "srun" and "OMP_NUM_THREADS" not in env_names:
        out.append('export OMP_NUM_THREADS="$SLURM_CPUS_PER_TASK"  # plain srun sets none (N5)')
    # The job's own environment: what the preset chose (its own block, shown whole where ntui's rendezvous lines
    # above fold into one).
    env: list[str] = []
    if spec.nccl_debug:
        env.append("export NCCL_DEBUG=INFO  # debugging only (N4)")
    if spec.nccl_slingshot:
        env.append("# HPE Slingshot profile (N2).")
        env.extend(f"export {k}={q(v)}" for k, v in SLINGSHOT_ENV)
    if spec.env:
        env.append("# Preset environment (values verbatim).")
        env.extend(f"export {k}={_word(spec, v)}" for k, v in spec.env)
    rdzv = split_rdzv_conf(spec.launcher, spec.extra_launcher_args)
    if rdzv.text:
        env.append("# Rendezvous configuration from launcher.extra-args; joins ntui's is_host in one option (R13).")
        env.append(f"export {RDZV_CONF_ENV}={q(rdzv.text)}")
    if spec.launcher != "srun":
        env.append("# Rank N of the job writes to ...-rank-N.out (global rank, not local).")
        env.append(
            f"export NTUI_RANK_LOG_PREFIX={q(paths.rank_prefix_dir)}{paths.job_id_shell}{q(RANK_LOG_SUFFIX)}"
        )
    if spec.allow_attach:
        env.extend(_ptracer_lines(paths))
    if env:
        out.append("")
        out.extend(env)
    if spec.launcher == "accelerate":  # a block of its own: ntui's (folded in the preview)
        out.append("")
        out.extend(_accelerate_config(spec, paths))
    if spec.run is not None:
        out.append("")
        out.extend(run_lines(spec.run, spec.log_dir, spec.log_stem))
    if spec.monitor_gpu:
        # After the exports (PATH picks the nvidia-smi), before the setup; its EXIT trap joins the journal's (J2),
        # and so does a setup's own (both run).
        out.append("")
        out.extend(sampler_lines(spec.log_dir, spec.log_stem, interval_s=spec.monitor_interval,
                                 job_id_shell=paths.job_id_shell))
        out.append(compose_line())  # the sampler's EXIT trap runs from the journal's (J2)
    if spec.setup:
        out.append("")
        out.append("# Setup (from the preset).")
        out.extend(spec.setup)
    out.append("")
    out.append(f"# Launch: {spec.launcher}, {spec.nodes} node(s) x {_per_node(spec)} process(es).")
    out.append(launch_begin_line(spec.launcher))
    if spec.run is not None:  # in the background, waited for; then the run continues or stops (T10)
        out.extend(launch_lines(_launch(spec, paths, rdzv)))
        out.append(launch_end_line())
        out.append(continue_line())
    else:
        out.append(_launch(spec, paths, rdzv))
        out.append(launch_end_line())
    out.append("")
    return "\n".join(out)


#: The ranks' sitecustomize under monitor.allow-attach (D2): PR_SET_PTRACER (Yama's prctl option) with
#: PR_SET_PTRACER_ANY, then the environment's own sitecustomize, which this one would otherwise hide.
PTRACER_SITECUSTOMIZE = """\
# Written by ntui (monitor.allow-attach): any process of this user may trace this one (ntui stacks).
import ctypes, importlib.machinery, importlib.util, os, sys
try:
    ctypes.CDLL(None).prctl(0x59616D61, ctypes.c_ulong(-1), 0, 0, 0)
except Exception:
    pass
_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
if _spec is not None and _spec.loader is not None:
    _own = importlib.util.module_from_spec(_spec)
    sys.modules["sitecustomize"] = _own
    _spec.loader.exec_module(_own)
"""


def _ptracer_lines(paths: LogPaths) -> list[str]:
    """monitor.allow-attach (D2): the sitecustomize written next to the logs (every node sees them), first on the
    ranks' PYTHONPATH (after the preset's environment, which it keeps)."""
    return [
        "# monitor.allow-attach: every rank lets its user's processes trace it, so ntui stacks can attach where",
        "# the kernel allows tracing ancestors only (Yama ptrace_scope 1) (D2).",
        f"NTUI_PTRACER_DIR={q(paths.rank_prefix_dir)}{paths.job_id_shell}{q(PTRACER_SUFFIX)}",
        'mkdir -p "$NTUI_PTRACER_DIR"',
        "cat >\"$NTUI_PTRACER_DIR/sitecustomize.py\" <<'NTUI_PTRACER'",
        *PTRACER_SITECUSTOMIZE.splitlines(),
        "NTUI_PTRACER",
        'export PYTHONPATH="$NTUI_PTRACER_DIR${PYTHONPATH:+:$PYTHONPATH}"',
    ]


def _per_node(spec: JobSpec) -> int:
    return spec.ntasks_per_node if spec.launcher == "srun" else spec.nproc_per_node


def _accelerate_config(spec: JobSpec, paths: LogPaths) -> list[str]:
    """An explicit accelerate config next to the logs, so that a default config is never read (A1). Only keys every
    accelerate since 0.20 reads: ``debug`` (0.21) and ``enable_cpu_affinity`` (0.29) are left to their default
    (false); an older release refuses the file that has them (``unexpected keyword argument 'debug'``)."""
    mode = spec.accelerate_device
    config = {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": f"'{_ACCELERATE_TYPE[mode]}'",  # quoted: YAML reads a bare NO as false
        "mixed_precision": f"'{spec.mixed_precision}'",
        "use_cpu": "true" if mode == "cpu" else "false",
        "gpu_ids": "all",
        "num_machines": "1",
        "num_processes": "1",
        "machine_rank": "0",
        "rdzv_backend": "static",
        "same_network": "false",
        "main_training_function": "main",
    }
    prefix = paths.rank_prefix_dir
    return [
        f"{MARK}accelerate's config: this file, never $HF_HOME/accelerate/default_config.yaml (A1); the command line",
        "# below sets the counts and the rendezvous.",
        f"export NTUI_ACCELERATE_CONFIG={q(prefix)}{paths.job_id_shell}{q('-' + ACCELERATE_CONFIG_NAME)}",
        "cat >\"$NTUI_ACCELERATE_CONFIG\" <<'NTUI_EOF'",
        *(f"{k}: {v}" for k, v in config.items()),
        "NTUI_EOF",
    ]


def _srun_words(spec: JobSpec, paths: LogPaths) -> list[str]:
    words = [
        "srun",
        srun_word("ntasks-per-node", str(spec.ntasks_per_node)),
        srun_word("cpus-per-task", '"$SLURM_CPUS_PER_TASK"'),
        srun_word("export", "ALL"),  # whatever sbatch.export says, tasks get MASTER_*, PATH and ntui's variables (E3)
    ]
    if spec.kill_on_bad_exit:
        words.append(srun_word("kill-on-bad-exit", "1"))
    if spec.gpus_per_node:
        words.append(srun_word("gpu-bind", "none"))  # every GPU request style (G5)
    if spec.rdzv_alt_read:
        words.append(srun_word("network", "disable_rdzv_get"))  # required by FI_CXI_RDZV_PROTO=alt_read (N2)
    if spec.launcher == "srun":
        words += [srun_word("open-mode", "append"), srun_word("output", q(paths.rank_pattern))]
    words += _wrapped(spec).srun_options  # Pyxis: the container is srun's own option
    return words


def _wrapped(spec: JobSpec) -> Wrapped:
    """The runtime's words (core/compose/containers.py): what it must pass and mount for the ranks (K7)."""
    names = [k for k, _ in spec.env] + (["PYTHONPATH"] if spec.allow_attach else [])
    own = [spec.log_dir, os.path.dirname(spec.script) or "/"]
    return wrap(spec.container_conf, gpus=spec.gpus_per_node > 0, env_names=names, own_paths=own, quote=q)


def _container(spec: JobSpec) -> list[str]:
    words = list(_wrapped(spec).prefix)
    if spec.run is not None:
        words += rank_words(spec.run)  # every process of the step ignores the checkpoint signal (T10)
    return words


def _program(spec: JobSpec) -> list[str]:
    return [*(q(w) for w in spec.python_argv), q(spec.script), *(_word(spec, a) for a in spec.args)]


def _launch(spec: JobSpec, paths: LogPaths, rdzv: RdzvConf) -> str:
    srun = _srun_words(spec, paths)
    extra = [q(a) for a in rdzv.rest]
    user_conf = bool(rdzv.text)
    if spec.launcher == "srun":
        return _continued(
            [srun, _container(spec), ["bash", "-c", q(SRUN_RANK_PAYLOAD)], _program(spec)]
        )
    worker = ["bash", "-c", q(WORKER_LOG_PAYLOAD)]
    if spec.launcher == "torchrun":
        if spec.nodes == 1:
            rendezvous = ["--standalone"]  # R5
            if user_conf:
                rendezvous.append(f'--rdzv-conf="${RDZV_CONF_ENV}"')  # no payload, no is_host: R13
        else:
            rendezvous = [
                "--rdzv-backend=c10d",
                '--rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT"',
                '--rdzv-id="$SLURM_JOB_ID"',
            ]
        torchrun = [
            "torchrun",
            '--nnodes="$SLURM_JOB_NUM_NODES"',
            f"--nproc-per-node={spec.nproc_per_node}",
        ]
        if spec.nodes > 1:
            torchrun = ["bash", "-c", q(torchrun_payload(user_conf)), *torchrun]
        return _continued(
            [srun, _container(spec), torchrun, rendezvous, [*extra, "--no-python"], worker, _program(spec)]
        )
    # accelerate: --machine_rank must expand per task (Q1), so it lives in a fixed payload and
    # everything else is passed as positional words.
    accel = [
        f'--num_processes="$(( SLURM_JOB_NUM_NODES * {spec.nproc_per_node} ))"',
        '--num_machines="$SLURM_JOB_NUM_NODES"',
        '--main_process_ip="$MASTER_ADDR"',
        '--main_process_port="$MASTER_PORT"',
        # One machine: accelerate passes no endpoint, so c10d would listen on 29400 and two jobs on
        # one node collide; static rendezvous binds $MASTER_PORT instead (R5). Several: c10d (R6).
        "--rdzv_backend=static" if spec.nodes == 1 else "--rdzv_backend=c10d",
    ]
    mode: list[str] = []
    if spec.accelerate_device == "multi_gpu":
        mode.append("--multi_gpu")
    elif spec.accelerate_device == "cpu":
        mode.append("--cpu")
    mode += [f"--mixed_precision={q(spec.mixed_precision)}", f"--dynamo_backend={q(spec.dynamo_backend)}"]
    return _continued(
        [
            srun,
            _container(spec),
            ["bash", "-c", q(accelerate_payload(user_conf)), "accelerate"],
            accel,
            [*mode, *extra, "--no_python"],
            worker,
            _program(spec),
        ]
    )
