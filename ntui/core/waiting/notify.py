"""A word when a job starts or ends: which transitions of the user's own jobs notify, and the bytes that tell the
terminal (the bell, and a desktop notification through OSC 9 and OSC 777, wrapped for tmux).

:class:`Transitions` (pure, fed from the jobs view's model on the UI thread) compares each queue answer with the
last: an own job that was pending and now runs *started*; one that ran and is pending again was *requeued*; one
that left the queue *ended*, announced once its final state is known, with its verdict when ntui has its record:
:meth:`~Transitions.observe` (each refresh), :meth:`~Transitions.outcome` (the model's final-state look-up),
:meth:`~Transitions.records` (the recent-jobs load that follows every departure and fills the records). The first
answer is a baseline: nothing that was already running when the view opened notifies.

:func:`terminal_bytes` is what the app writes through its driver (``ntui wait --notify`` to the terminal):

* ``BEL`` (``\\a``) when ``bell`` is on: every terminal has one, tmux passes it on by itself;
* OSC 9 (``ESC ] 9 ; text BEL``: iTerm2, WezTerm, kitty, Windows Terminal, foot) and OSC 777 (``ESC ] 777 ;
  notify ; title ; body BEL``: VTE-based terminals, urxvt, foot) when ``desktop`` is on. A terminal shows the
  one it knows and ignores the other. Inside tmux (``$TMUX`` set) each is wrapped in tmux's passthrough
  (``ESC P tmux; … ESC \\``, every ``ESC`` in it doubled), which tmux forwards with ``allow-passthrough on``.

Text in them comes from job names and Slurm: it is made inert (no control characters, no escape sequences)
and ``;`` in a title becomes ``,`` (it separates OSC 777's fields).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ntui.core.slurm.common import StateCategory, state_category
from ntui.core.slurm.squeue import QueueJob
from ntui.core.textsafe import inert

__all__ = [
    "ALL_ENDED",
    "DEFAULT_STATES",
    "Notice",
    "Transitions",
    "bell",
    "osc9",
    "osc777",
    "terminal_bytes",
    "tmux_wrap",
    "wanted",
]

BEL = "\x07"
ESC = "\x1b"
#: In the settings' ``notify.states``: every final state.
ALL_ENDED = "ENDED"
#: What notifies by default: a start, a requeue, every end.
DEFAULT_STATES: tuple[str, ...] = ("RUNNING", "REQUEUED", ALL_ENDED)
#: A notification's text is cut to this (terminals show a line or two).
MAX_TEXT = 200


@dataclass(frozen=True)
class Notice:
    """One transition to tell. ``state`` is the state the job reached (RUNNING, REQUEUED, or its final state)."""

    job_id: str
    event: str  # started | requeued | ended
    state: str
    title: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.title}: {self.body}" if self.body else self.title


def wanted(notice: Notice, states: Iterable[str]) -> bool:
    """Whether ``notice`` notifies under the settings' ``states`` (upper-case state names, ``ENDED`` = any end)."""
    chosen = {s.upper() for s in states}
    if notice.state.upper() in chosen:
        return True
    return notice.event == "ended" and ALL_ENDED in chosen


# ---------------------------------------------------------------- escape sequences


def _clean(text: str, *, title: bool = False) -> str:
    out = inert(text)
    if title:
        out = out.replace(";", ",")
    return out[:MAX_TEXT]


def bell() -> str:
    return BEL


def osc9(text: str) -> str:
    """``ESC ] 9 ; text BEL``. (A text that starts with a digit and ``;`` would be a ConEmu sub-command, such as
    progress ``9;4``: ntui's texts start with "ntui".)"""
    return f"{ESC}]9;{_clean(text)}{BEL}"


def osc777(title: str, body: str) -> str:
    """``ESC ] 777 ; notify ; title ; body BEL``."""
    return f"{ESC}]777;notify;{_clean(title, title=True)};{_clean(body)}{BEL}"


def tmux_wrap(sequence: str) -> str:
    """tmux's passthrough: ``ESC P tmux; <sequence with each ESC doubled> ESC \\``."""
    return f"{ESC}Ptmux;{sequence.replace(ESC, ESC + ESC)}{ESC}\\"


def terminal_bytes(notice: Notice, *, bell_on: bool, desktop: bool, environ: Mapping[str, str]) -> str:
    """What to write to the terminal for ``notice`` ("" when both are off)."""
    out = BEL if bell_on else ""
    if desktop:
        sequences = (osc9(notice.text), osc777(notice.title, notice.body))
        in_tmux = bool(environ.get("TMUX"))
        out += "".join(tmux_wrap(s) if in_tmux else s for s in sequences)
    return out


# ---------------------------------------------------------------- transitions


def _where(job: QueueJob) -> str:
    return job.nodelist or job.partition


def _name(job: QueueJob) -> str:
    return f" ({job.name})" if job.name else ""


@dataclass
class _Gone:
    job: QueueJob
    outcome: tuple[str, str | None] | None = None  # (state, exit code)
    records_seen: bool = False


@dataclass
class Transitions:
    """See the module docstring. ``user``: whose jobs notify (the jobs view also shows everyone's)."""

    user: str
    _last: dict[str, QueueJob] | None = None
    _gone: dict[str, _Gone] = field(default_factory=dict)

    def observe(self, live: Mapping[str, QueueJob], *, all_users: bool = False) -> list[Notice]:
        """One queue answer (job id -> line); the notices of the own jobs' transitions since the last one."""
        own = {k: j for k, j in live.items() if not all_users or j.user == self.user}
        if self._last is None:
            self._last = dict(own)
            return []
        out: list[Notice] = []
        for key, job in own.items():
            before = self._last.get(key)
            self._gone.pop(key, None)  # back in the queue: not ended after all
            now, was = job.category, before.category if before is not None else None
            if now in (StateCategory.RUNNING, StateCategory.COMPLETING) and was in (None, StateCategory.PENDING) \
                    and job.state == "RUNNING":
                out.append(Notice(key, "started", "RUNNING", f"ntui: job {key} started",
                                  f"{job.name} on {_where(job)}".strip()))
            elif now is StateCategory.PENDING and was in (StateCategory.RUNNING, StateCategory.COMPLETING):
                out.append(Notice(key, "requeued", "REQUEUED", f"ntui: job {key} requeued",
                                  f"{job.name}: {job.reason or job.state}".strip(": ")))
        for key, job in self._last.items():
            if key not in own and key not in self._gone:
                self._gone[key] = _Gone(job)
        self._last = dict(own)
        return out

    def outcome(self, key: str, state: str, exit_code: str | None) -> list[Notice]:
        """The final state the model looked up for a job that left the queue."""
        gone = self._gone.get(key)
        if gone is None:
            return []
        gone.outcome = (state, exit_code)
        return self._ready(key)

    def records(self, found: Mapping[str, tuple[str, str]]) -> list[Notice]:
        """A recent-jobs load finished: job id -> (final state, verdict) of the records it has (ntui's jobs, and
        where accounting exists the user's others). Jobs it has not are announced with the model's outcome."""
        out: list[Notice] = []
        for key in list(self._gone):
            gone = self._gone[key]
            gone.records_seen = True
            rec = found.get(key)
            if rec is not None and state_category(rec[0]).finished:
                out.append(self._ended(key, rec[0], None, rec[1]))
            else:
                out.extend(self._ready(key))
        return out

    def _ready(self, key: str) -> list[Notice]:
        gone = self._gone[key]
        if gone.outcome is None or not gone.records_seen:
            return []
        state, code = gone.outcome
        return [self._ended(key, state, code, "")]

    def _ended(self, key: str, state: str, exit_code: str | None, verdict: str) -> Notice:
        gone = self._gone.pop(key)
        shown = state if state_category(state).finished else "ended (state unknown)"
        code = f" (exit {exit_code})" if exit_code and exit_code != "0:0" else ""
        said = f" · {verdict}" if verdict and verdict.upper() != state.upper() else ""
        return Notice(key, "ended", state if state_category(state).finished else ALL_ENDED,
                      f"ntui: job {key} {shown}{code}", f"{gone.job.name}{said}".strip(" ·"))
