"""The job's own event journal: what the batch shell writes about itself, and how ntui reads it (rule J2).

**File.** ``<log_dir>/<stem>-<jobid>.events`` (:func:`journal_path`), next to the batch log, appended only by the
job's batch shell (one host: the batch node), opened in append mode so that a requeued job (same id) adds its next
allocation to the same file. JSON lines; each event is one ``printf`` of far less than ``PIPE_BUF`` bytes, so one
``write()``: a reader sees whole lines or a last line still missing its newline (kept for the next read), never a
mix. Nothing is written to the program's output; a journal that cannot be written never changes the job.

**Events** (``{"v":1,"ev":KIND,"t":EPOCH,"job":"ID",...}``; ``t`` in seconds, fractions where bash has
``EPOCHREALTIME``):

* ``requeue`` ``restart``: this allocation follows a requeue (``SLURM_RESTART_COUNT`` > 0), written just before
  its ``alloc``;
* ``alloc`` ``restart``, ``nnodes``, ``nodes`` (Slurm's node list), ``host`` (the batch node), ``pid`` and, for an
  array task, ``array_job``/``array_task``: the batch shell started;
* ``launch`` ``launcher``: the launch step (the srun line) starts;
* ``launch-end`` ``rc``: it returned (0 from the line after it; another status from the EXIT trap, since
  ``set -e`` ends the script there);
* ``signal`` ``sig``, ``phase``: a signal ntui traps (:data:`SIGNALS`) arrived outside the launch step; the
  shell then dies of it as it would have without the trap;
* ``run-alloc``, ``run-signal``, ``run-continue``, ``run-stop`` (``run``: the run id, then the fields of the run
  file's ``alloc``/``signal``/``continue``/``stop``, :mod:`ntui.core.jobfiles.runfile`): a long run's (rule T10);
  an allocation that requeued the job has not ended the job (:meth:`JournalState.final` is None);
* ``end`` ``rc`` (the batch shell's exit status, ``null`` when a signal ended it), ``sig`` (its name; ``null``
  when the signal ended the shell during the launch step, where no trap can run: see below), ``phase``
  (``setup`` | ``launch`` | ``after``): written first thing by the EXIT trap.

**Traps.** The journal's EXIT trap is installed right after ``set -euo pipefail``; after the GPU sampler's lines
(:func:`compose_line`) and again before the launch line (:func:`launch_begin_line`, after the preset's setup) the
EXIT trap set since (the sampler's ``ntui_gpu_sampler_stop``, a setup's own) is taken into a chain that ntui's trap
runs after writing ``end`` (the last one set first, each with ``$?`` = the job's status, a failure in one not
stopping the others), so every one of them still runs and the job's exit status is kept. (A setup that sets an
EXIT trap and then fails within the setup ends before that: its own trap runs, the journal has no ``end``, and the
record comes from Slurm.) Signal traps are only set where the setup set none. During the
launch step ntui's signal traps are lifted: bash runs a trap only once its foreground command has ended, so a
trapped SIGTERM (``scancel``, the time limit) would keep the shell waiting for srun until Slurm's SIGKILL, which
then leaves nothing written; untrapped, the signal ends the shell at once and its EXIT trap records the end
(``sig`` ``null``: the launch step was running, so only a signal can have ended the shell). Slurm signals the
step's tasks and the batch shell separately, so the step may die first (srun exits 128+15) and the shell's
SIGTERM arrive inside the EXIT trap: when the step died of a signal, the trap waits up to
:data:`LATE_SIGNAL_WAIT_S` for it, records ``sig`` ``TERM`` if it comes (then dies of it, as the shell would
have), else the step's status. The EXIT trap takes SIGTERM first thing (unless the setup trapped it itself):
Slurm signals the job's processes more than once, and a second SIGTERM arriving while the trap ran killed the shell
before it wrote ``end`` (or before the chained traps ran: a sampler left running); it is noted now, and the shell
dies of it after. That left a gap: a SIGTERM landing after the launch step failed and before the EXIT trap's
first line ended the shell with nothing written (bash does not run an EXIT trap that is already running; measured
here, one time in three for a signal 100-200 us after the step's end, and once in a full test run, a 1-minute job
at its time limit). So from the launch line on, an ERR trap (where the setup set none) takes SIGTERM the moment
the step has failed, before the shell exits: a SIGTERM before that runs the whole EXIT trap (none is running
yet), one after it is noted (``ntui_journal_hold_term``; the long-run form calls it before its own exit).
Array tasks, the later ``srun ... &`` + ``wait`` form and checkpoint signals fit the same vocabulary
(``array_*``, ``signal``, ``requeue``).

**Reading.** :func:`parse_events` takes whole lines (a garbage or cut line is counted and skipped, never an
error); :func:`journal_state` folds them into the last allocation's :class:`JournalState`; :meth:`JournalState.final`
says what the journal alone tells of the job's end: COMPLETED (status 0), FAILED (status N, exit code ``N:0``),
or, ended by a signal, TIMEOUT when it came at or after the time limit, else CANCELLED (exit code ``0:0``, as
Slurm's accounting keeps the job line of a job it ended). Slurm's own answer (sacct, scontrol) confirms it and adds
who cancelled and why (:mod:`ntui.core.records.record`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from ntui.core.jobfiles.machinery import MARK

__all__ = [
    "JOURNAL_EXT",
    "MAX_EVENT_BYTES",
    "SIGNALS",
    "VERSION",
    "Event",
    "JournalEnd",
    "JournalReader",
    "JournalState",
    "compose_line",
    "journal_lines",
    "journal_path",
    "journal_state",
    "launch_begin_line",
    "launch_end_line",
    "parse_events",
    "parse_line",
    "read_journal",
]

JOURNAL_EXT = ".events"
VERSION = 1
#: Signals the batch shell notes before dying of them (outside the launch step, and only where the setup set no
#: trap of its own).
SIGNALS: tuple[str, ...] = ("TERM", "INT", "HUP", "USR1", "USR2")
#: A string value in an event is cut to this many characters: an event stays far below PIPE_BUF (one write).
MAX_FIELD = 200
#: When the launch step died of a signal, the EXIT trap waits this long (seconds) for the signal that Slurm, ending
#: the job (scancel, the time limit, a preemption), sends the batch shell too: which of the two gets it first
#: varies, and without it the end would read as a failure with the step's status (143).
LATE_SIGNAL_WAIT_S = 2
#: The batch shell writes ``alloc`` a moment after Slurm started the job (its clock for the time limit): a signal
#: this close before the limit, by the journal's own clock, is the time limit's (seen: 59.4 s for a 1-minute limit
#: on a loaded 26.05 cluster). Slurm's record, where there is one, says which it was.
TIME_LIMIT_SLACK_S = 10
#: The exit statuses of a step stopped by the signals Slurm sends at a job's time limit (128 + SIGTERM, SIGKILL).
_STOPPED_BY = {143: "TERM", 137: "KILL"}
#: A line longer than this is not an event of ntui's (the reader skips it).
MAX_EVENT_BYTES = 4096
#: A long run's events (rule T10; the run file's, :mod:`ntui.core.jobfiles.runfile`, prefixed ``run-``): each
#: allocation's start in the run, the checkpoint signal, a continuation (requeue | chain) and why the run stopped.
RUN_KINDS = frozenset({"run-alloc", "run-signal", "run-continue", "run-stop"})
KINDS = frozenset({"requeue", "alloc", "launch", "launch-end", "signal", "end"}) | RUN_KINDS


def journal_path(log_dir: str, stem: str, job_id: str) -> str:
    """``<log_dir>/<stem>-<job_id>.events``."""
    return f"{log_dir}/{stem}-{job_id}{JOURNAL_EXT}"


# ---------------------------------------------------------------- the writer: lines of the generated script

_SIGS = " ".join(SIGNALS)

# Definitions (single-quoted nowhere: plain bash functions). Every value from outside ntui (node list, host) goes
# through ntui_journal_q; numbers are reduced to their digits; event names and phases are ntui's constants.
_FUNCTIONS = rf"""NTUI_JOURNAL_JOB=${{SLURM_JOB_ID//[!0-9]/}} NTUI_JOURNAL_PHASE=setup NTUI_JOURNAL_SIG=
NTUI_JOURNAL_LATE=
NTUI_JOURNAL_CHAIN=()
ntui_journal_q() {{  # $1 as a JSON string in NTUI_Q: cut, backslash and quote escaped, control characters replaced
    local s=${{1:0:{MAX_FIELD}}}
    s=${{s//\\/\\\\}}; s=${{s//\"/\\\"}}; s=${{s//[[:cntrl:]]/?}}
    NTUI_Q="\"$s\""
}}
ntui_journal() {{  # EVENT [FIELDS]: one line, one write; a journal that cannot be written never stops the job
    local t=${{EPOCHREALTIME:-}}
    [ -n "$t" ] || printf -v t '%(%s)T' -1
    printf '{{"v":{VERSION},"ev":"%s","t":%s,"job":"%s"%s}}\n' "$1" "${{t/,/.}}" "$NTUI_JOURNAL_JOB" "${{2:+,$2}}" \
        2>/dev/null >>"$NTUI_JOURNAL" || true
}}
ntui_journal_chain() {{ NTUI_JOURNAL_CHAIN+=("$1"); }}
ntui_journal_status() {{ return "$1"; }}
ntui_journal_traps() {{  # the EXIT trap set since (sampler, setup) runs from ntui's; signals noted unless trapped
    local cur s
    cur=$(trap -p EXIT)
    case "$cur" in ""|"trap -- 'ntui_journal_exit' EXIT") ;; *) eval "ntui_journal_chain ${{cur#trap -- }}" ;; esac
    trap ntui_journal_exit EXIT
    for s in {_SIGS}; do
        cur=$(trap -p "$s")
        # shellcheck disable=SC2064  # the signal's name is fixed now, on purpose
        case "$cur" in
            "") trap "ntui_journal_signal $s" "$s" ;;
            "trap -- 'ntui_journal_signal $s' "*) ;;
            *) [ "$s" != TERM ] || NTUI_JOURNAL_TERM_OWN=1 ;;  # the setup's own trap: left alone
        esac
    done
}}
ntui_journal_signal() {{  # note the signal, then die of it as the shell would have (status, EXIT trap)
    NTUI_JOURNAL_SIG=$1
    ntui_journal signal "\"sig\":\"$1\",\"phase\":\"$NTUI_JOURNAL_PHASE\""
    trap - "$1"
    kill -s "$1" "$$"
}}
ntui_journal_hold_term() {{  # a TERM from now on is noted and the shell goes on (Slurm signals more than once)
    [ -n "${{NTUI_JOURNAL_TERM_OWN:-}}" ] \
        || trap 'NTUI_JOURNAL_SIG=${{NTUI_JOURNAL_SIG:-TERM}} NTUI_JOURNAL_LATE=1' TERM
}}
ntui_journal_exit() {{  # the end first, then the chained traps (last set first, $? = the status); status kept
    local rc=$? i
    ntui_journal_hold_term  # first: a TERM from here on is noted, never cuts this short
    if [ -z "$NTUI_JOURNAL_SIG" ] && [ "$NTUI_JOURNAL_PHASE" = launch ] && [ "$rc" -gt 128 ] \
        && [ -z "${{NTUI_JOURNAL_TERM_OWN:-}}" ]; then  # the step died of a signal: Slurm ending the job signals
        sleep {LATE_SIGNAL_WAIT_S} & wait "$!" 2>/dev/null || true  # this shell too, a moment later
        kill "$!" 2>/dev/null || true
    fi
    if [ -n "$NTUI_JOURNAL_SIG" ]; then
        [ -z "$NTUI_JOURNAL_LATE" ] || [ "$NTUI_JOURNAL_PHASE" != launch ] || ntui_journal launch-end "\"rc\":$rc"
        ntui_journal end "\"rc\":null,\"sig\":\"$NTUI_JOURNAL_SIG\",\"phase\":\"$NTUI_JOURNAL_PHASE\""
    elif [ "$NTUI_JOURNAL_PHASE" = launch ] && [ "$rc" -eq 0 ]; then
        ntui_journal end '"rc":null,"sig":null,"phase":"launch"'  # only a signal ends the shell mid-step with 0
    else
        [ "$NTUI_JOURNAL_PHASE" != launch ] || ntui_journal launch-end "\"rc\":$rc"
        ntui_journal end "\"rc\":$rc,\"phase\":\"$NTUI_JOURNAL_PHASE\""
    fi
    NTUI_JOURNAL_PHASE="exit"
    for ((i = ${{#NTUI_JOURNAL_CHAIN[@]}} - 1; i >= 0; i--)); do
        if [ "$rc" -eq 0 ]; then eval "${{NTUI_JOURNAL_CHAIN[i]}}" || true
        else ntui_journal_status "$rc" || eval "${{NTUI_JOURNAL_CHAIN[i]}}" || true; fi
    done
    [ -n "${{NTUI_JOURNAL_TERM_OWN:-}}" ] || trap - TERM
    [ -z "$NTUI_JOURNAL_LATE" ] || kill -s TERM "$$"  # die of the signal, as the shell would have
}}
ntui_journal_launch() {{  # LAUNCHER SETUP_ERR_TRAP, before the launch line: ntui's signal traps lifted (a trap
    # would wait for srun); the ERR trap set, unless the setup set its own: a failed step's SIGTERM is noted (J2)
    local s
    ntui_journal_traps
    for s in {_SIGS}; do
        case "$(trap -p "$s")" in "trap -- 'ntui_journal_signal $s' "*) trap - "$s" ;; esac
    done
    [ -n "${{2:-}}" ] || trap ntui_journal_hold_term ERR
    NTUI_JOURNAL_PHASE=launch
    ntui_journal launch "\"launcher\":\"$1\""
}}
ntui_journal_launched() {{  # the launch line returned 0
    NTUI_JOURNAL_PHASE=after
    ntui_journal launch-end '"rc":0'
    ntui_journal_traps
}}
ntui_journal_start() {{
    local r=${{SLURM_RESTART_COUNT:-0}} n=${{SLURM_JOB_NUM_NODES:-1}} a='' nodes
    r=${{r//[!0-9]/}}; n=${{n//[!0-9]/}}
    [ "${{r:-0}}" -eq 0 ] || ntui_journal requeue "\"restart\":$r"
    if [ -n "${{SLURM_ARRAY_JOB_ID:-}}" ]; then
        a=",\"array_job\":\"${{SLURM_ARRAY_JOB_ID//[!0-9]/}}\",\"array_task\":\"${{SLURM_ARRAY_TASK_ID//[!0-9]/}}\""
    fi
    ntui_journal_q "${{SLURM_JOB_NODELIST:-}}"; nodes=$NTUI_Q
    ntui_journal_q "${{SLURMD_NODENAME:-${{HOSTNAME:-}}}}"
    ntui_journal alloc "\"restart\":${{r:-0}},\"nnodes\":${{n:-1}},\"nodes\":$nodes,\"host\":$NTUI_Q,\"pid\":$$$a"
    ntui_journal_traps
}}
ntui_journal_start"""


def journal_lines(log_dir: str, stem: str, job_id_shell: str = '"$SLURM_JOB_ID"') -> list[str]:
    """The script lines that define the journal and write the allocation's first events; right after
    ``set -euo pipefail`` (before anything that can fail). ``job_id_shell``: the job id in the file name as the
    batch shell expands it (a sweep task's ``123_4``: :attr:`~ntui.core.jobfiles.lognames.LogPaths.job_id_shell`)."""
    path = f'{shlex.quote(f"{log_dir}/{stem}-")}{job_id_shell}{JOURNAL_EXT}'
    return [
        f"{MARK}The job's event journal (J2): {log_dir}/{stem}-<jobid>{JOURNAL_EXT}, one JSON line per event",
        "# (allocation, launch step, signals, end), appended by this shell only, never on the program's output;",
        "# its EXIT trap runs the traps set after it (GPU sampler, setup) and keeps the exit status.",
        f"NTUI_JOURNAL={path}",
        *_FUNCTIONS.splitlines(),
    ]


def compose_line() -> str:
    """After lines that may set an EXIT trap (the GPU sampler's, the setup): keep it, from ntui's."""
    return "ntui_journal_traps"


def launch_begin_line(launcher: str) -> str:
    """The line before the launch line (``launcher``: ntui's name for it, a plain word). It hands the function the
    ERR trap the setup set, if any: inside a function bash shows none."""
    if not launcher.replace("-", "").isalnum():
        raise ValueError(f"not a launcher name: {launcher!r}")
    return f'ntui_journal_launch {launcher} "$(trap -p ERR)"'


def launch_end_line() -> str:
    """The line after the launch line (reached only when it returned 0: ``set -e``)."""
    return "ntui_journal_launched"


# ---------------------------------------------------------------- the reader


@dataclass(frozen=True)
class Event:
    kind: str
    t: float
    job: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def text(self, key: str) -> str | None:
        value = self.fields.get(key)
        return value if isinstance(value, str) else None

    def number(self, key: str) -> int | None:
        value = self.fields.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_line(line: str) -> Event | None:
    """One journal line, or None when it is not an event of ntui's (garbage, cut, another version, wrong types).
    A line that a killed writer left without its newline and the next event was appended to is read from the last
    event start it holds."""
    import json  # loaded on first use: rendering a script does not need it (CLI start, issue 19)
    text = line.strip()
    if not text:
        return None
    candidates = [text]
    start = text.rfind('{"v":')
    if start > 0:
        candidates.append(text[start:])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        event = _event(data)
        if event is not None:
            return event
    return None


def _event(data: object) -> Event | None:
    if not isinstance(data, dict) or data.get("v") != VERSION:
        return None
    kind, t, job = data.get("ev"), data.get("t"), data.get("job")
    if kind not in KINDS or not isinstance(t, (int, float)) or isinstance(t, bool) or not isinstance(job, str):
        return None
    fields = {k: v for k, v in data.items() if k not in ("v", "ev", "t", "job")}
    return Event(str(kind), float(t), job, fields)


def parse_events(data: bytes) -> tuple[list[Event], int, bytes]:
    """The events of the complete lines in ``data``, how many complete lines were not events, and the bytes after
    the last newline (a line still being written: read again with what follows)."""
    cut = data.rfind(b"\n")
    if cut < 0:
        return [], 0, data
    events: list[Event] = []
    bad = 0
    for raw in data[:cut].split(b"\n"):
        if not raw.strip():
            continue
        event = parse_line(raw.decode("utf-8", "replace")) if len(raw) <= MAX_EVENT_BYTES else None
        if event is None:
            bad += 1
        else:
            events.append(event)
    return events, bad, data[cut + 1 :]


@dataclass(frozen=True)
class JournalEnd:
    """What the journal alone says of a job's end (see :meth:`JournalState.final`)."""

    state: str
    exit_code: str
    reason: str


@dataclass(frozen=True)
class JournalState:
    """The last allocation of a job as its journal tells it."""

    job_id: str
    allocations: int = 0  # alloc events seen (a requeued job has several)
    restart: int = 0
    start: float | None = None  # the last allocation's alloc time
    end: float | None = None  # its end event's time (None: not ended, or ended without a word: SIGKILL, node)
    nodes: str | None = None
    host: str | None = None
    array_job: str | None = None
    array_task: str | None = None
    launch_started: float | None = None
    launch_rc: int | None = None
    rc: int | None = None  # the batch shell's exit status (None: a signal ended it, or not ended)
    signal: str | None = None  # the signal that ended it ("" when unnamed: during the launch step)
    phase: str | None = None  # where the end came: setup | launch | after
    bad_lines: int = 0
    events: int = 0
    run_id: str | None = None  # a long run's id (run: section, T10)
    run_restart: int = 0  # this allocation's index in the run (0, 1, ...)
    run_max: int | None = None  # the run's max-restarts
    run_next: str | None = None  # a chain's successor, submitted by this allocation
    checkpoint_signal: str | None = None  # the checkpoint signal came in this allocation
    continued: str | None = None  # this allocation requeued the job or chained the run ("requeue" | "chain")
    run_stop: str | None = None  # why the run stopped in this allocation (done, max-restarts, ignored, ...)

    @property
    def started(self) -> bool:
        return self.allocations > 0

    @property
    def ended(self) -> bool:
        return self.end is not None

    @property
    def elapsed_s(self) -> int | None:
        if self.start is None or self.end is None:
            return None
        return max(0, int(round(self.end - self.start)))

    def final(self, time_limit_s: int | None = None) -> JournalEnd | None:
        """The end as the journal tells it, or None when it has not ended (or ended without writing: SIGKILL, a
        node failure). A signal at or after ``time_limit_s`` (the job's limit; :data:`TIME_LIMIT_SLACK_S` early, by
        the journal's clock) is taken as the time limit."""
        if self.end is None or self.continued == "requeue":
            return None  # requeued: the job goes on in its next allocation
        elapsed = self.elapsed_s
        at_limit = time_limit_s is not None and elapsed is not None and elapsed >= time_limit_s - TIME_LIMIT_SLACK_S
        if self.signal is None and self.rc in _STOPPED_BY and self.phase == "launch" and at_limit:
            # Slurm's SIGTERM at the limit reached the launch step first: the shell wrote the step's 128+15 before its
            # own trap ran (seen under load). At the limit that status is the time limit's, not the program's.
            return JournalEnd("TIMEOUT", "0:0", f"job: the launch step ended by SIG{_STOPPED_BY[self.rc]} (exit "
                                                f"status {self.rc}) after {elapsed} s (time limit {time_limit_s} s)")
        if self.signal is None and self.rc is not None:
            if self.rc == 0:
                return JournalEnd("COMPLETED", "0:0", "job: exit status 0")
            where = " of the launch step" if self.phase == "launch" else f" ({self.phase})" if self.phase else ""
            return JournalEnd("FAILED", f"{self.rc}:0", f"job: exit status {self.rc}{where}")
        sig = f"SIG{self.signal}" if self.signal else "a signal"
        during = " during the launch step" if self.phase == "launch" else f" ({self.phase})" if self.phase else ""
        if at_limit:
            return JournalEnd("TIMEOUT", "0:0", f"job: ended by {sig}{during} after {elapsed} s "
                                                f"(time limit {time_limit_s} s)")
        return JournalEnd("CANCELLED", "0:0", f"job: ended by {sig}{during}"
                                              + (f" after {elapsed} s" if elapsed is not None else ""))


def journal_state(job_id: str, events: Iterable[Event], bad_lines: int = 0) -> JournalState:
    """Fold events (in file order) into the last allocation's state: an ``alloc`` starts a new one."""
    state = JournalState(job_id, bad_lines=bad_lines)
    count = 0
    for ev in events:
        count += 1
        if ev.kind == "alloc":
            state = JournalState(job_id, allocations=state.allocations + 1, restart=ev.number("restart") or 0,
                                 start=ev.t, nodes=ev.text("nodes"), host=ev.text("host"),
                                 array_job=ev.text("array_job"), array_task=ev.text("array_task"),
                                 bad_lines=bad_lines)
        elif not state.started:
            continue  # an event before any allocation (a cut file): nothing to attach it to
        elif ev.kind == "launch":
            state = _replace(state, launch_started=ev.t)
        elif ev.kind == "launch-end":
            state = _replace(state, launch_rc=ev.number("rc"))
        elif ev.kind == "run-alloc":
            state = _replace(state, run_id=ev.text("run"), run_restart=ev.number("restart") or 0,
                             run_max=ev.number("max"))
        elif ev.kind == "run-signal":
            state = _replace(state, checkpoint_signal=ev.text("sig"))
        elif ev.kind == "run-continue":
            state = _replace(state, continued=ev.text("how"), run_next=ev.text("next"))
        elif ev.kind == "run-stop" and state.run_stop in (None, "ignored"):
            state = _replace(state, run_stop=ev.text("why") if state.run_stop is None else state.run_stop)
        elif ev.kind == "end" and state.end is None:
            sig = ev.fields.get("sig")
            rc = ev.number("rc")
            signal = sig if isinstance(sig, str) else ("" if rc is None else None)
            state = _replace(state, end=ev.t, rc=rc, signal=signal, phase=ev.text("phase"))
    return _replace(state, events=count, bad_lines=bad_lines)


def _replace(state: JournalState, **changes: object) -> JournalState:
    return replace(state, **changes)  # type: ignore[arg-type]


def read_journal(path: str | os.PathLike[str], job_id: str, max_bytes: int = 1 << 20) -> JournalState | None:
    """The state of the journal at ``path`` (None when there is none). Reads at most its last ``max_bytes``."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            skip = max(0, size - max_bytes)
            fh.seek(skip)
            data = fh.read()
    except OSError:
        return None
    if skip:  # started mid-line: drop up to the first newline
        data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
    events, bad, _cut = parse_events(data)  # a last line without its newline was cut short (one write per event)
    return journal_state(job_id, events, bad)


class JournalReader:
    """One journal followed through a held descriptor: each :meth:`poll` is one ``pread`` from the offset reached
    (no ``open`` or ``stat``), the events so far folded into :attr:`state`. The file may not exist yet (a pending
    job): :meth:`poll` then tries to open it, at most once per ``retry_s``."""

    def __init__(self, path: str, job_id: str, *, retry_s: float = 4.0,
                 clock: Callable[[], float] = time.monotonic, chunk: int = 65536) -> None:
        self.path = path
        self.job_id = job_id
        self.retry_s = retry_s
        self._clock = clock
        self._chunk = chunk
        self.fd: int | None = None
        self.offset = 0
        self._partial = b""
        self._events: list[Event] = []
        self._bad = 0
        self._next_open = 0.0
        self.opens = 0
        self.reads = 0
        self.state = JournalState(job_id)

    @property
    def open(self) -> bool:
        return self.fd is not None

    def poll(self) -> bool:
        """Read what was appended; True when the state changed."""
        if self.fd is None:
            if not self.try_now():
                return False
            try:
                self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                return False
        changed = False
        while True:
            try:
                data = os.pread(self.fd, self._chunk, self.offset)
            except OSError:
                self.close()
                return changed
            self.reads += 1
            if not data:
                break
            changed = self.feed(data) or changed
            if len(data) < self._chunk:
                break
        return changed

    def try_now(self) -> bool:
        """Whether a file not found yet is tried at this poll: at most once per ``retry_s`` (the try counted)."""
        now = self._clock()
        if now < self._next_open:
            return False
        self._next_open = now + self.retry_s
        self.opens += 1
        return True

    def feed(self, data: bytes) -> bool:
        """Fold one chunk read at the offset reached (however it was read): True when it held an event or a bad
        line, :attr:`state` then folded again."""
        self.offset += len(data)
        events, bad, self._partial = parse_events(self._partial + data)
        if len(self._partial) > MAX_EVENT_BYTES:  # a "line" this long is not ours: drop it
            self._partial, bad = b"", bad + 1
        if not events and not bad:
            return False
        self._events.extend(events)
        self._bad += bad
        self.state = journal_state(self.job_id, self._events, self._bad)
        return True

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
