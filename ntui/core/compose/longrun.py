"""The ``run:`` section: training longer than one allocation (rules T1-T10).

::

    run:
      checkpoint-signal: USR2   # sent to every rank's program `warning` seconds before the time limit
      warning: 300              # seconds (Slurm may send it up to 60 s earlier)
      grace: 240                # seconds the ranks get to save and exit (default: warning - 60, at least half)
      continue: requeue         # requeue | chain | none
      max-restarts: 5           # allocations after the first that a time limit may start; preemptions do not count

**The signal path** (T10, the lines of :func:`run_lines`, :func:`launch_lines`, :func:`rank_words`):

1. ``#SBATCH --signal=B:SIG@WARNING``: Slurm signals the batch shell only (with ``B:`` neither the steps nor the
   background ``srun`` get it, measured on the dev cluster).
2. The launch step runs in the background (``srun ... &``) and the batch shell waits for it, so its trap runs at
   once (bash runs a trap only after the foreground command ends); a trap interrupts ``wait``, which is
   repeated while the step runs.
3. Every process of the launch step starts with the signal *ignored* (``trap '' SIG`` in a wrapper that ``exec``s
   the launcher: an ignored disposition survives ``exec``), so torchrun's and accelerate's agents (which handle only
   TERM, INT, HUP and QUIT), DataLoader workers and shell wrappers survive it; the program installs its own handler
   (Python's ``signal.signal`` replaces an ignored disposition). A program that installs none ignores it and is
   stopped at the time limit (the run says so).
4. The trap sends the signal to the step's ``srun``, which relays it to every process of the step on every node;
   when it came in the allocation's first :data:`RESEND_WINDOW_S` seconds, it is sent again every
   :data:`RESEND_S` seconds while the grace lasts (a signal that comes before a rank has installed its handler is
   not lost: it is ignored and comes again). Later it is sent once: a program that saved is exiting, and Python
   gives a signal its default action back while it shuts down, so a second one would kill it (status 128+N, and
   the run would stop as failed).
5. The step ended within the grace: status 0 after the signal means "saved": ``scontrol requeue`` from the batch
   shell (never inside the container) while fewer than ``max-restarts`` time-limit continuations were made, or, for
   ``chain``, ``sbatch --dependency=afterany:<this job>`` of the same script, its environment scrubbed of the job's
   ``SLURM_*`` as ntui's own submission does. Status 0 without the signal means the work is done: the done marker is
   written, and a successor that starts later ends at once (a chain stops). The signal's own status (128+N) after the
   program wrote the done marker: done too (the warning fell due as its last step ended and the signal killed it
   shutting down). Another status: a failure, the run stops. Still running when the grace is over: the program
   ignored the signal; the run stops and the step meets the time limit.

**What the program sees**: ``NTUI_RUN_ID`` (the first job's id, the same in every allocation), ``NTUI_RESTART``
(0 in the first allocation, then 1, 2, ...), ``NTUI_CHECKPOINT_SIGNAL`` (the signal's name, e.g. ``USR2``) and
``NTUI_RUN_DONE`` (the done marker's path: a program may write it itself when its work is done).

**The run file** ``<log_dir>/<stem>-<run id>.run`` (:mod:`ntui.core.jobfiles.runfile`): one JSON line per
allocation start, checkpoint signal, continuation and stop, appended by each allocation's batch shell; its
continuations are what ``max-restarts`` counts (``SLURM_RESTART_COUNT`` also counts preemptions and requeues by
an administrator). The same events go into the job's own journal where the script has one.

This module is below the rule table (beside ``sweep``): the section's typed form and its script lines.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ntui.core.jobfiles.machinery import MARK
from ntui.core.jobfiles.runfile import DONE_EXT, RUN_EXT, VERSION

__all__ = [
    "CONTINUE_MODES",
    "DEFAULT_MAX_RESTARTS",
    "DEFAULT_SIGNAL",
    "DEFAULT_WARNING_S",
    "RESEND_S",
    "RESEND_WINDOW_S",
    "RUN_KEYS",
    "SIGNALS",
    "RunConf",
    "RunDraft",
    "draft_run",
    "continue_line",
    "launch_lines",
    "rank_words",
    "run_lines",
    "signal_directive",
]

RUN_KEYS = ("checkpoint-signal", "warning", "grace", "continue", "max-restarts")
CONTINUE_MODES = ("requeue", "chain", "none")
#: Signals a checkpoint may be asked with (names without SIG). The rules say which a launcher or NCCL takes (T3, T4).
SIGNALS = ("USR2", "USR1", "URG", "WINCH", "ALRM", "XCPU", "TERM", "INT", "HUP", "QUIT")
DEFAULT_SIGNAL = "USR2"
DEFAULT_WARNING_S = 300
DEFAULT_MAX_RESTARTS = 5
#: While the grace lasts the signal is sent again this often (seconds): a rank that had not yet installed its
#: handler when it first came gets it again ...
RESEND_S = 5
#: ... but only when it came this early in the allocation (seconds): later every rank has its handler, and a
#: repeat could hit a rank that saved and is shutting down (its handler gone, the default action back).
RESEND_WINDOW_S = 60
#: Slurm may send --signal up to 60 s before the time asked (sbatch.1): a signal this long before the limit, beyond
#: the warning, is taken as a preemption (not counted against max-restarts): told by the time elapsed, not by which
#: signal came.
EARLY_SLACK_S = 90
WARNING_MAX_S = 65535  # --signal's @SECONDS (J1)


def default_grace(warning: int) -> int:
    """The ranks' time to save and exit after the signal: the warning less a minute for the requeue and Slurm's
    kill, at least half the warning."""
    return max(warning - 60, warning // 2, 1)


@dataclass(frozen=True)
class RunDraft:
    """The ``run:`` section as written, typed, for the T rules; None values: absent or not valid."""

    signal: str = DEFAULT_SIGNAL
    signal_text: str = DEFAULT_SIGNAL
    warning: int | None = DEFAULT_WARNING_S
    grace: int | None = None
    grace_written: bool = False
    mode: str = "requeue"
    max_restarts: int | None = DEFAULT_MAX_RESTARTS
    errors: tuple[tuple[str, str], ...] = ()
    """(dotted key, message): values of the wrong type or form."""

    @property
    def grace_s(self) -> int:
        if self.grace is not None:
            return self.grace
        return default_grace(self.warning or DEFAULT_WARNING_S)

    def build(self, time_limit_s: int | None) -> RunConf:
        return RunConf(signal=self.signal, warning=self.warning or DEFAULT_WARNING_S, grace=self.grace_s,
                       mode=self.mode, max_restarts=self.max_restarts if self.max_restarts is not None
                       else DEFAULT_MAX_RESTARTS, time_limit_s=time_limit_s)


@dataclass(frozen=True)
class RunConf:
    """The checked ``run:`` section, what the renderer uses."""

    signal: str = DEFAULT_SIGNAL
    warning: int = DEFAULT_WARNING_S
    grace: int = 240
    mode: str = "requeue"
    max_restarts: int = DEFAULT_MAX_RESTARTS
    time_limit_s: int | None = None


def _int(value: Any, raw: str | None) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        text = (raw or str(value)).strip()
        return value if text.isdigit() and (text == "0" or not text.startswith("0")) else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def draft_run(section: Any, raw: Mapping[tuple[str, ...], str]) -> RunDraft:
    """``run:`` (a mapping; ``null`` values are absent) into a :class:`RunDraft`; unknown keys are the caller's."""
    if not isinstance(section, dict):
        return RunDraft(errors=(("run", "expected a mapping of checkpoint-signal, warning, grace, continue, "
                                        "max-restarts"),))
    errors: list[tuple[str, str]] = []
    values = {str(k): v for k, v in section.items() if v is not None}
    sig_text = str(values.get("checkpoint-signal", DEFAULT_SIGNAL)).strip()
    sig = sig_text.upper()
    sig = sig[3:] if sig.startswith("SIG") else sig
    if sig not in SIGNALS:
        errors.append(("run.checkpoint-signal", f"expected a signal name ({', '.join(SIGNALS[:4])}, ...), "
                                                f"got {sig_text!r}; USR2 is the safe choice"))
        sig = DEFAULT_SIGNAL

    def number(key: str, default: int | None, minimum: int) -> int | None:
        if key not in values:
            return default
        n = _int(values[key], raw.get(("run", key)))
        if n is None or n < minimum:
            kind = "whole seconds" if key in ("warning", "grace") else "a whole number"
            errors.append((f"run.{key}", f"expected {kind} >= {minimum} in plain decimal, got {values[key]!r}"))
            return None
        return n

    warning = number("warning", DEFAULT_WARNING_S, 1)
    grace = number("grace", None, 1)
    max_restarts = number("max-restarts", DEFAULT_MAX_RESTARTS, 0)
    mode = values.get("continue", "requeue")
    if mode is False:
        mode = "none"
    if mode not in CONTINUE_MODES:
        errors.append(("run.continue", f"expected one of {', '.join(CONTINUE_MODES)}, got {mode!r}"))
        mode = "none"
    return RunDraft(signal=sig, signal_text=sig_text, warning=warning, grace=grace,
                    grace_written="grace" in values, mode=str(mode), max_restarts=max_restarts,
                    errors=tuple(errors))


# ---------------------------------------------------------------- script lines


def signal_directive(run: RunConf) -> str:
    """The ``--signal`` value: the batch shell only (``B:``)."""
    return f"B:{run.signal}@{run.warning}"


def rank_words(run: RunConf) -> list[str]:
    """Words before the launcher (inside the container): every process of the step starts with the signal
    ignored, the program installs its own handler."""
    return ["bash", "-c", shlex.quote(f'trap "" {run.signal}; exec "$0" "$@"')]


def _q(text: str) -> str:
    return shlex.quote(text)


def run_lines(run: RunConf, log_dir: str, stem: str) -> list[str]:
    """Lines after the exports and before the setup: the run's identity, its events, the done check, the trap."""
    prefix = _q(f"{log_dir}/{stem}-")
    limit = run.time_limit_s or 0
    early = max(0, limit - run.warning - EARLY_SLACK_S) if limit else 0
    sig = run.signal
    how = run.mode
    return [
        f"{MARK}Long run (run:, T10): Slurm signals this shell SIG{sig} {run.warning} s before the time limit; the",
        f"# launch step runs in the background, its processes ignore SIG{sig} and the program installs its own",
        f"# handler; the trap sends it to the step's srun (which relays it to every process; again every {RESEND_S} s",
        f"# if it came in the first {RESEND_WINDOW_S} s), waits {run.grace} s for the ranks to save, then continues"
        f" the run",
        f"# ({how}, at most {run.max_restarts} times after a time limit).",
        "# A chain's successor is submitted with the arguments: ntui-chain RUN_ID LINK (never from the environment).",
        "NTUI_CHAIN_RUN='' NTUI_CHAIN_LINK=0",
        'if [ "${1:-}" = ntui-chain ]; then NTUI_CHAIN_RUN=${2//[!0-9]/} NTUI_CHAIN_LINK=${3//[!0-9]/}; fi',
        "NTUI_RUN_ID=${NTUI_CHAIN_RUN:-$SLURM_JOB_ID}; NTUI_RUN_ID=${NTUI_RUN_ID//[!0-9]/}",
        "NTUI_RESTART=$(( ${NTUI_CHAIN_LINK:-0} + ${SLURM_RESTART_COUNT:-0} ))",
        f"NTUI_RUN_FILE={prefix}\"$NTUI_RUN_ID\"{RUN_EXT}",
        f"NTUI_RUN_DONE={prefix}\"$NTUI_RUN_ID\"{DONE_EXT}",
        f"export NTUI_RUN_ID NTUI_RESTART NTUI_RUN_DONE NTUI_CHECKPOINT_SIGNAL={sig}",
        "NTUI_RUN_SIGNALLED='' NTUI_RUN_RESEND='' NTUI_RUN_STEP='' NTUI_RUN_CAUSE=timelimit NTUI_RUN_T0=$SECONDS",
        "ntui_run_note() {  # EVENT [FIELDS]: one line in the run file (and the job's journal where it has one)",
        "    local t=${EPOCHREALTIME:-}",
        "    [ -n \"$t\" ] || printf -v t '%(%s)T' -1",
        f"    printf '{{\"v\":{VERSION},\"ev\":\"%s\",\"t\":%s,\"job\":\"%s\",\"run\":\"%s\"%s}}\\n'"
        f" \"$1\" \"${{t/,/.}}\" \\",
        "        \"${SLURM_JOB_ID//[!0-9]/}\" \"$NTUI_RUN_ID\" \"${2:+,$2}\" 2>/dev/null >>\"$NTUI_RUN_FILE\" || true",
        "    if declare -F ntui_journal >/dev/null; then ntui_journal \"run-$1\""
        " \"\\\"run\\\":\\\"$NTUI_RUN_ID\\\"${2:+,$2}\"; fi",
        "}",
        "ntui_run_checkpoint() {  # the checkpoint signal: noted once, sent to the launch step (again while it saves)",
        "    if [ -z \"$NTUI_RUN_SIGNALLED\" ]; then",
        "        NTUI_RUN_SIGNALLED=$SECONDS",
        "        local cause=timelimit",
        *([f"        [ $(( SECONDS - NTUI_RUN_T0 )) -ge {early} ] || cause=preempt  # long before the warning"]
          if early else []),
        "        NTUI_RUN_CAUSE=$cause",
        f"        [ $(( SECONDS - NTUI_RUN_T0 )) -ge {RESEND_WINDOW_S} ] || NTUI_RUN_RESEND=1"
        "  # so early a rank may have no handler yet",
        f"        ntui_run_note signal \"\\\"sig\\\":\\\"{sig}\\\""
        f",\\\"elapsed\\\":$(( SECONDS - NTUI_RUN_T0 )),\\\"cause\\\":\\\"$cause\\\"\"",
        f"        echo \"ntui: SIG{sig} after $(( SECONDS - NTUI_RUN_T0 )) s"
        f" ($cause): sent to every rank; {run.grace} s to save\"",
        "    fi",
        f"    [ -z \"$NTUI_RUN_STEP\" ] || kill -s {sig} \"$NTUI_RUN_STEP\" 2>/dev/null || true",
        "}",
        "ntui_run_wait() {  # the launch step's status: after the signal, the grace (and the early resends); again",
        "    local rc t",
        "    while :; do",
        "        if [ -n \"$NTUI_RUN_SIGNALLED\" ]; then",
        f"            while kill -0 \"$NTUI_RUN_STEP\" 2>/dev/null && t=$(( SECONDS - NTUI_RUN_SIGNALLED ))"
        f" && [ \"$t\" -lt {run.grace} ]; do",
        f"                [ -z \"$NTUI_RUN_RESEND\" ] || [ \"$t\" -eq 0 ] || [ $(( t % {RESEND_S} )) -ne 0 ]"
        f" || kill -s {sig} \"$NTUI_RUN_STEP\" 2>/dev/null || true",
        "                sleep 1",
        "            done",
        "            if kill -0 \"$NTUI_RUN_STEP\" 2>/dev/null; then",
        f"                ntui_run_note stop '\"why\":\"ignored\",\"grace\":{run.grace}'",
        f"                echo \"ntui: the program did not exit within {run.grace} s of SIG{sig}"
        f": not continued; it meets the time limit\"",
        f"                trap '' {sig}",
        "                NTUI_RUN_SIGNALLED=",
        "            fi",
        "        fi",
        "        if wait \"$NTUI_RUN_STEP\"; then rc=0; else rc=$?; fi",
        "        kill -0 \"$NTUI_RUN_STEP\" 2>/dev/null && continue",
        "        # a trap interrupts wait (status 128+N); when the step ended meanwhile its own status is asked again",
        "        if [ \"$rc\" -gt 128 ]; then",
        "            if wait \"$NTUI_RUN_STEP\"; then t=0; else t=$?; fi",
        "            [ \"$t\" -eq 127 ] || rc=$t  # 127: bash kept no status (the first one was the step's)",
        "        fi",
        "        return \"$rc\"",
        "    done",
        "}",
        "ntui_run_continue() {  # the step ended with status 0",
        "    local n" + (" next v" if run.mode == "chain" else ""),
        "    if [ -z \"$NTUI_RUN_SIGNALLED\" ]; then",
        "        : >>\"$NTUI_RUN_DONE\" 2>/dev/null || true",
        "        ntui_run_note stop '\"why\":\"done\"'",
        "        echo \"ntui: run $NTUI_RUN_ID done after $(( NTUI_RESTART + 1 )) allocation(s)\"",
        "        return 0",
        "    fi",
        "    if [ -e \"$NTUI_RUN_DONE\" ]; then ntui_run_note stop '\"why\":\"done\"'; return 0; fi",
        "    n=$(grep -c '\"ev\": *\"continue\".*\"cause\": *\"timelimit\"' \"$NTUI_RUN_FILE\" 2>/dev/null || true)",
        f"    if [ \"$NTUI_RUN_CAUSE\" = timelimit ] && [ \"${{n:-0}}\" -ge {run.max_restarts} ]; then",
        f"        ntui_run_note stop '\"why\":\"max-restarts\",\"max\":{run.max_restarts}'",
        f"        echo \"ntui: run $NTUI_RUN_ID: max-restarts ({run.max_restarts}) reached; not continued\"",
        "        return 0",
        "    fi",
        *_continue_lines(run),
        "}",
        "if [ -e \"$NTUI_RUN_DONE\" ]; then",
        "    ntui_run_note stop '\"why\":\"done\"'",
        "    echo \"ntui: run $NTUI_RUN_ID is done ($NTUI_RUN_DONE exists): nothing left to run\"",
        "    exit 0",
        "fi",
        "ntui_run_note alloc \"\\\"restart\\\":$NTUI_RESTART,\\\"requeues\\\":${SLURM_RESTART_COUNT:-0},"
        f"\\\"how\\\":\\\"{how}\\\",\\\"max\\\":{run.max_restarts}\"",
        "echo \"ntui: run $NTUI_RUN_ID, allocation $(( NTUI_RESTART + 1 )) (job $SLURM_JOB_ID) on "
        "${SLURMD_NODENAME:-$HOSTNAME} at $(date -u +%Y-%m-%dT%H:%M:%SZ)\"",
        f"trap ntui_run_checkpoint {sig}",
    ]


def _continue_lines(run: RunConf) -> list[str]:
    if run.mode == "requeue":
        return [
            "    if ! command -v scontrol >/dev/null; then",
            "        ntui_run_note stop '\"why\":\"no-scontrol\"'",
            "        echo \"ntui: scontrol is not on this shell's PATH: cannot requeue\" >&2; return 1",
            "    fi",
            "    ntui_run_note continue \"\\\"how\\\":\\\"requeue\\\",\\\"cause\\\":\\\"$NTUI_RUN_CAUSE\\\","
            "\\\"count\\\":$(( ${n:-0} + 1 ))\"",
            "    echo \"ntui: requeueing job $SLURM_JOB_ID ($NTUI_RUN_CAUSE)\"",
            "    if ! scontrol requeue \"$SLURM_JOB_ID\"; then",
            "        ntui_run_note stop '\"why\":\"requeue-failed\"'; return 1",
            "    fi",
        ]
    if run.mode == "chain":
        return [
            "    if ! command -v sbatch >/dev/null; then",
            "        ntui_run_note stop '\"why\":\"no-sbatch\"'",
            "        echo \"ntui: sbatch is not on this shell's PATH: cannot chain\" >&2; return 1",
            "    fi",
            "    # The successor starts after this job, however it ends (afterany: a link that ends in TIMEOUT never",
            "    # leaves it waiting on DependencyNeverSatisfied); it ends at once when the run is done.",
            "    v=${SLURM_JOB_ID//[!0-9]/}",
            "    next=$(",
            "        me=$v",
            "        for v in $(compgen -e); do",
            "            case $v in SLURM_CONF) ;; SLURM_*|SBATCH_*|SRUN_*) unset \"$v\" ;; esac",
            "        done",
            "        sbatch --parsable --dependency=\"afterany:$me\" \"$0\" ntui-chain \"$NTUI_RUN_ID\" \\",
            "            \"$(( NTUI_RESTART + 1 ))\"",
            "    ) || next=",
            "    next=${next%%;*}; next=${next//[!0-9]/}",
            "    if [ -z \"$next\" ]; then ntui_run_note stop '\"why\":\"chain-failed\"'; return 1; fi",
            "    ntui_run_note continue \"\\\"how\\\":\\\"chain\\\",\\\"cause\\\":\\\"$NTUI_RUN_CAUSE\\\","
            "\\\"count\\\":$(( ${n:-0} + 1 )),\\\"next\\\":\\\"$next\\\"\"",
            "    echo \"ntui: run $NTUI_RUN_ID continues in job $next (after $SLURM_JOB_ID)\"",
        ]
    return [
        "    ntui_run_note stop '\"why\":\"saved\"'",
        "    echo \"ntui: run $NTUI_RUN_ID saved; continue: none\"",
    ]


def launch_lines(launch: str) -> list[str]:
    """The launch line in the background, then the wait and what follows it."""
    return [
        f"{launch} &",
        "NTUI_RUN_STEP=$!",
        # the program said its work is done (the done marker) and then died of the signal as it shut down: done
        "ntui_run_wait || { rc=$?; [ -e \"$NTUI_RUN_DONE\" ] && [ \"$rc\" -eq $(( 128 + "
        "$(kill -l \"$NTUI_CHECKPOINT_SIGNAL\") )) ] || {"
        " ntui_journal_hold_term; ntui_run_note stop \"\\\"why\\\":\\\"failed\\\",\\\"rc\\\":$rc\";"
        " exit \"$rc\"; }; }",
    ]


def continue_line() -> str:
    """After the launch step ended with status 0 (and the journal noted it): requeue, chain, or stop."""
    return "ntui_run_continue"
