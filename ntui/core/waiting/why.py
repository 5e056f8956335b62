"""Why a pending job waits, and when it will start, in words.

Three parts, so the app, ``ntui why`` and ``ntui show`` say the same:

* :class:`WaitFacts`: what is known of the job: its reason, its start estimate and scheduled nodes, its
  dependency, QOS, account (from ``scontrol show job -d`` and the queue line; both already fetched by whoever asks,
  so these cost no RPC of their own);
* :class:`Extras`, fetched by :func:`fetch_extras` (thread-side) only for what the reason needs: the priority
  breakdown (``sprio -j``, for Priority/Resources; asked once per session on a site without
  priority/multifactor, which then says so), the QOS's or association's limits (``sacctmgr``, for a limit), the
  state of each job it depends on (one ``squeue`` for all of them, then ``sacct``/``scontrol`` for each that left
  the queue; at most :data:`MAX_DEPENDENCIES`);
* :func:`explain` (pure): the :class:`Why`: a headline ("waiting for resources — 2 nodes to free up; estimated start
  14:20 (in 3 h 10 min)"), the lines under it, and whether it will never start as it is.

:class:`WhyBook` is the app's cache: extras once per job and reason (again after :data:`MAX_AGE_S` while the job
stays selected), never per refresh; the explanation is recomputed from the cache and the queue's latest line on
every tick (the countdown moves, the estimate follows each squeue).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from ntui.core.records.outcome import Outcome, finished_outcome
from ntui.core.slurm.common import StateCategory, parse_timestamp, state_category
from ntui.core.slurm.durations import format_span
from ntui.core.slurm.runner import CommandRunner, SlurmError
from ntui.core.slurm.sacctmgr import Limits, assoc_limits, qos_limits
from ntui.core.slurm.scontrol import Dependency, JobDetails, parse_dependency
from ntui.core.slurm.sprio import Priority, job_priority
from ntui.core.slurm.squeue import QueueJob, query_queue
from ntui.core.waiting.reasons import Kind, ReasonText, reason_text, split_reason

__all__ = [
    "MAX_AGE_S",
    "MAX_DEPENDENCIES",
    "DependState",
    "Extras",
    "SiteMemo",
    "WaitFacts",
    "Why",
    "WhyBook",
    "WhyRequest",
    "explain",
    "facts_of",
    "fetch_extras",
    "format_start",
    "reason_of",
    "why_text",
]

#: The jobs a dependency look-up asks about at most (one squeue for them all, then one sacct/scontrol for each that
#: left the queue).
MAX_DEPENDENCIES = 4
#: Extras older than this are fetched again when the job is selected (or shown) again.
MAX_AGE_S = 300.0

#: Controller words that stand for a reason name (squeue prints a ``state_desc`` instead of the name).
_DESCRIPTIONS = (
    ("Nodes required for job are DOWN, DRAINED or reserved", "ReqNodeNotAvail"),
    ("Job is at or exceeds QOS", "AccountingPolicy"),
    ("Job is at or exceeds association", "AssociationResourceLimit"),
    ("job requeued in held state", "JobHeldUser"),
)


# ---------------------------------------------------------------- facts


@dataclass(frozen=True)
class DependState:
    """One dependency with what became of the job it names (``outcome`` None: not looked up)."""

    dep: Dependency
    outcome: Outcome | None = None


@dataclass(frozen=True)
class Extras:
    """What the why fetched beyond the job's details, once per job and reason. ``notes``: what could not be
    asked or answered, in words; ``calls``: the Slurm commands it took."""

    key: str
    reason: str
    priority: Priority | None = None
    limits: tuple[Limits, ...] = ()
    depends: tuple[DependState, ...] = ()
    notes: tuple[str, ...] = ()
    calls: int = 0
    at: float = 0.0


@dataclass(frozen=True)
class WaitFacts:
    """A pending job as the why sees it. Times are naive local datetimes (as Slurm prints them)."""

    job_id: str
    state: str
    reason: str  # as Slurm printed it (a name, or the controller's words)
    start: datetime | None = None  # the scheduler's estimate
    sched_nodes: str = ""
    num_nodes: int | None = None
    time_limit: str = ""
    partition: str = ""
    qos: str | None = None
    account: str | None = None
    dependency: str = ""
    eligible: datetime | None = None  # EligibleTime (a --begin time)
    user: str = ""


def facts_of(job_id: str, details: JobDetails | None, queue: QueueJob | None) -> WaitFacts | None:
    """The facts from what is at hand: the queue's line (fresh each refresh: its reason and start estimate win)
    and the details (dependency, account, scheduled nodes). None when neither is known."""
    if details is None and queue is None:
        return None
    raw = details.raw if details is not None else {}
    state = queue.state if queue is not None else details.state if details is not None else ""
    reason = queue.reason if queue is not None else details.reason if details is not None else ""
    if details is not None and not reason:
        reason = details.reason
    start = queue.start_time if queue is not None else None
    if start is None and details is not None:
        start = parse_timestamp(details.start_time)
    nodes = raw.get("SchedNodeList", "")
    return WaitFacts(
        job_id=job_id,
        state=state,
        reason=reason,
        start=start,
        sched_nodes="" if nodes in ("", "(null)") else nodes,
        num_nodes=queue.num_nodes if queue is not None and queue.num_nodes else (
            details.num_nodes if details is not None else None),
        time_limit=queue.time_limit if queue is not None else details.time_limit if details is not None else "",
        partition=queue.partition if queue is not None else details.partition if details is not None else "",
        qos=(details.qos if details is not None else None) or (queue.qos if queue is not None else None),
        account=details.account if details is not None else None,
        dependency=raw.get("Dependency", ""),
        eligible=parse_timestamp(raw.get("EligibleTime")),
        user=details.user if details is not None else queue.user if queue is not None else "",
    )


def reason_of(facts: WaitFacts) -> tuple[ReasonText, str]:
    """The reason's words and the controller's own words that came with it (node names, a limit's numbers)."""
    name, rest = split_reason(facts.reason)
    if not name:
        for words, stands_for in _DESCRIPTIONS:
            if rest.startswith(words):
                name = stands_for
                break
    if not name:
        name = "None" if not rest else ""
    return (reason_text(name) if name else ReasonText("", rest, Kind.OTHER, known=False)), rest


# ---------------------------------------------------------------- fetching the extras (thread-side)


class SiteMemo:
    """What one site said once and will say again: sprio's "not a supported priority plugin". Shared by the
    fetches of one session (thread-safe), so such a site is asked once, not per job."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.no_priority: str | None = None

    def priority_unavailable(self, note: str) -> None:
        with self._lock:
            self.no_priority = note


def fetch_extras(
    runner: CommandRunner,
    key: str,
    facts: WaitFacts,
    *,
    memo: SiteMemo | None = None,
    timeout: float = 15.0,
    monotonic: Callable[[], float] = time.monotonic,
) -> Extras:
    """*Thread-side*: the extras the job's reason needs (see the module docstring for which and what each costs).
    Never raises for Slurm: a failed look-up becomes a note."""
    reason, _ = reason_of(facts)
    notes: list[str] = []
    calls = 0
    priority: Priority | None = None
    limits: tuple[Limits, ...] = ()
    depends: tuple[DependState, ...] = ()
    if reason.kind in (Kind.PRIORITY, Kind.RESOURCES):
        if memo is not None and memo.no_priority is not None:
            priority = Priority(False, key, note=memo.no_priority)
        else:
            calls += 1
            try:
                priority = job_priority(runner, key, timeout=timeout)
            except (SlurmError, ValueError) as exc:
                notes.append(f"no priority breakdown: {exc}")
            if priority is not None and not priority.available and memo is not None and priority.note.startswith(
                    "You are not running"):
                memo.priority_unavailable(priority.note)
    if reason.kind is Kind.QOS_LIMIT and facts.qos:
        calls += 1
        found = qos_limits(runner, facts.qos, timeout=timeout)
        limits = (found,) if found is not None else ()
        if found is None:
            notes.append(f"the limits of QOS {facts.qos} are not readable here (sacctmgr)")
    elif reason.kind is Kind.ASSOC_LIMIT:
        calls += 1
        limits = assoc_limits(runner, facts.account, facts.user or None, timeout=timeout)
        if not limits:
            notes.append("the association's limits are not readable here (sacctmgr)")
    if reason.kind is Kind.DEPENDENCY or facts.dependency not in ("", "(null)"):
        found_deps, more_calls, dep_notes = _dependency_states(runner, facts.dependency, timeout)
        depends, calls = found_deps, calls + more_calls
        notes.extend(dep_notes)
    return Extras(key, facts.reason, priority, limits, depends, tuple(notes), calls, monotonic())


def _dependency_states(runner: CommandRunner, text: str, timeout: float) -> tuple[
        tuple[DependState, ...], int, list[str]]:
    deps = parse_dependency(text)
    wanted = deps.jobs[:MAX_DEPENDENCIES]
    notes = [f"{len(deps.jobs) - len(wanted)} more dependencies not looked up"] if len(deps.jobs) > len(wanted) else []
    if not wanted:
        return tuple(DependState(d) for d in deps.items), 0, notes
    outcomes: dict[str, Outcome] = {}
    calls = 1
    try:
        for job in query_queue(runner, all_users=True, job_ids=list(wanted), timeout=timeout):
            for name in (job.job_id, job.raw_job_id, job.array_job_id or ""):
                if name in wanted and name not in outcomes:
                    outcomes[name] = Outcome(name, job.state, job.exit_code, "squeue", job.category.finished)
        for job_id in wanted:
            if job_id not in outcomes:
                calls += 1
                outcomes[job_id] = finished_outcome(runner, job_id)
    except (SlurmError, ValueError) as exc:
        notes.append(f"the jobs it depends on could not be looked up: {exc}")
    return tuple(DependState(d, outcomes.get(d.job_id)) for d in deps.items), calls, notes


# ---------------------------------------------------------------- the words (pure)


@dataclass(frozen=True)
class Why:
    """A pending job's wait in words. ``headline`` is one sentence; ``lines`` the facts under it (estimate,
    dependencies, limits, priority, what to do); ``never``: it will not start as it is."""

    job_id: str
    reason: str
    kind: Kind
    headline: str
    lines: tuple[str, ...] = ()
    never: bool = False
    start: datetime | None = None

    def as_dict(self) -> dict[str, object]:
        return {"job_id": self.job_id, "reason": self.reason, "kind": self.kind.value, "headline": self.headline,
                "lines": list(self.lines), "never": self.never,
                "estimated_start": self.start.isoformat() if self.start else None}


def format_start(start: datetime, now: datetime) -> str:
    """``14:20 (in 3 h 10 min)``; another day: ``Tue 2 Dec 14:20 (in 1 d 3 h)``; within a minute: ``now``."""
    ahead = (start - now).total_seconds()
    if ahead < 60:
        return "now"
    when = start.strftime("%H:%M") if start.date() == now.date() else start.strftime("%a %-d %b %H:%M")
    return f"{when} (in {format_span(ahead)})"


def _nodes(n: int | None) -> str:
    return f"{n} node{'s' if n != 1 else ''}" if n else "its nodes"


def _estimate(facts: WaitFacts, now: datetime) -> str:
    if facts.start is None:
        return "no start estimate yet (the backfill scheduler has not planned it)"
    where = f" on {facts.sched_nodes}" if facts.sched_nodes else ""
    return f"estimated start {format_start(facts.start, now)}{where}"


def _dependency_lines(facts: WaitFacts, extras: Extras | None) -> tuple[list[str], bool]:
    deps = parse_dependency(facts.dependency)
    looked = {d.dep: d.outcome for d in extras.depends} if extras is not None else {}
    lines: list[str] = []
    never = False
    joiner = "any one of: " if deps.any_of and len(deps.items) > 1 else ""
    for dep in deps.items:
        out = looked.get(dep)
        if dep.kind == "singleton":
            lines.append("waiting for your other job of the same name to end (singleton)")
            continue
        target = f"job {dep.job_id}{' (every task)' if dep.array else ''}"
        delay = f", then {dep.delay_min} min" if dep.delay_min else ""
        text = f"waiting for {target} to {dep.condition}{delay}"
        state = out.state if out is not None and out.source != "none" else None
        if dep.failed:
            if not deps.any_of:
                never = True
            said = f"it {state}" if state else "it did not end that way"
            text += f" — {said}, so this one will never start: cancel it or change its dependency"
        elif state:
            cat = state_category(state)
            if cat is StateCategory.PENDING:
                text += f" (it is {state} itself)"
            elif cat in (StateCategory.RUNNING, StateCategory.COMPLETING):
                text += f" (it is {state})"
            else:
                text += f" (it ended {state})"
        lines.append(text)
    if joiner and lines:
        lines = [joiner + lines[0], *lines[1:]]
    if deps.any_of and deps.items and all(d.failed for d in deps.items):
        never = True
    return lines, never


def _limit_line(reason: ReasonText, extras: Extras | None) -> str:
    if extras is None or not reason.limit:
        return ""
    for limits in extras.limits:
        value = limits.get(reason.limit)
        if value is None:
            continue
        if reason.tres:
            parts = [p for p in value.split(",") if p.startswith(reason.tres)]
            value = ",".join(parts) or value
        return f"{limits.owner}: {reason.limit}={value}"
    owners = ", ".join(x.owner for x in extras.limits)
    return f"{owners}: no {reason.limit} set there (another level sets it)" if owners else ""


def _priority_line(extras: Extras | None) -> str:
    p = extras.priority if extras is not None else None
    if p is None:
        return ""
    if not p.available:
        if "not running a supported priority plugin" in p.note:
            return ("this site does not rank jobs by priority factors (not priority/multifactor): pending jobs "
                    "start in submission order as resources allow")
        return f"no priority breakdown: {p.note}"
    parts = ", ".join(f"{name} {value:g}" for name, value in p.factors)
    return f"priority {p.priority}" + (f" ({parts})" if parts else "") + (
        f" in partition {p.partition}" if p.partition else "")


def explain(facts: WaitFacts, extras: Extras | None, now: datetime) -> Why:
    """The why of one pending job (pure; ``now`` for the countdown)."""
    reason, rest = reason_of(facts)
    kind = reason.kind
    lines: list[str] = []
    never = reason.never
    if kind is Kind.RESOURCES:
        what = f"{_nodes(facts.num_nodes)} to free up" if reason.name == "Resources" else reason.text
        headline = f"waiting for resources — {what}; {_estimate(facts, now)}"
    elif kind is Kind.PRIORITY:
        headline = f"waiting in line: {reason.text}; {_estimate(facts, now)}"
    elif kind is Kind.DEPENDENCY:
        dep_lines, dep_never = _dependency_lines(facts, extras)
        never = never or dep_never
        if dep_lines:
            headline, lines = dep_lines[0], dep_lines[1:]
        else:
            headline = reason.text
        if reason.name == "DependencyNeverSatisfied" and "never start" not in headline:
            headline = f"it will never start: {reason.text}"
    elif kind in (Kind.QOS_LIMIT, Kind.ASSOC_LIMIT):
        headline = ("it will never start as it is: " if never else "held by a limit: ") + reason.text
        limit = _limit_line(reason, extras)
        if limit:
            lines.append(limit)
    elif kind is Kind.HELD:
        headline = reason.text
    elif kind is Kind.TIME and reason.name == "BeginTime" and facts.eligible is not None:
        headline = f"{reason.text}: eligible from {format_start(facts.eligible, now)}"
    elif not reason.known and reason.name == "":
        headline = f"Slurm says: {rest}"
    else:
        headline = ("it will never start as it is: " if never else "") + reason.text
    if rest and reason.name and kind is not Kind.DEPENDENCY:
        said = f"{reason.name}, {rest}" if facts.reason.startswith(reason.name) else rest
        lines.append(f"Slurm says: {said}")
    if kind not in (Kind.RESOURCES, Kind.PRIORITY) and facts.start is not None and not never:
        lines.append(_estimate(facts, now))
    priority = _priority_line(extras)
    if priority:
        lines.append(priority)
    if reason.fix:
        lines.append("what to do: " + reason.fix.replace("ID", facts.job_id))
    if extras is not None:
        lines.extend(extras.notes)
    return Why(facts.job_id, reason.name or facts.reason, kind, headline, tuple(lines), never, facts.start)


# ---------------------------------------------------------------- the app's cache (UI thread)


@dataclass(frozen=True)
class WhyRequest:
    """Extras to fetch for one job (:meth:`WhyBook.fetch` in a worker)."""

    key: str
    facts: WaitFacts


@dataclass
class WhyBook:
    """Extras per job and reason; at most one fetch at a time; nothing fetched for jobs that are not pending."""

    monotonic: Callable[[], float] = time.monotonic
    max_age_s: float = MAX_AGE_S
    memo: SiteMemo = field(default_factory=SiteMemo)
    extras: dict[str, Extras] = field(default_factory=dict)
    inflight: str | None = None

    def request(self, key: str, details: JobDetails | None, queue: QueueJob | None) -> WhyRequest | None:
        """The fetch to start for the selected job, or None (its details not here yet: the dependency, QOS and
        account come with them; not pending; fresh in the cache; or one runs)."""
        facts = facts_of(key, details, queue)
        if details is None or facts is None or state_category(facts.state) is not StateCategory.PENDING \
                or self.inflight is not None:
            return None
        have = self.extras.get(key)
        if have is not None and have.reason == facts.reason and self.monotonic() - have.at < self.max_age_s:
            return None
        self.inflight = key
        return WhyRequest(key, facts)

    def fetch(self, runner: CommandRunner, request: WhyRequest, *, timeout: float = 15.0) -> Extras:
        """*Thread-side*."""
        return fetch_extras(runner, request.key, request.facts, memo=self.memo, timeout=timeout,
                            monotonic=self.monotonic)

    def stored(self, extras: Extras) -> None:
        if self.inflight == extras.key:
            self.inflight = None
        self.extras[extras.key] = extras

    def failed(self) -> None:
        self.inflight = None

    def why(self, key: str, details: JobDetails | None, queue: QueueJob | None, now: datetime) -> Why | None:
        """The why to show now (None: not a pending job). Extras for another reason are not used."""
        facts = facts_of(key, details, queue)
        if facts is None or state_category(facts.state) is not StateCategory.PENDING:
            return None
        extras = self.extras.get(key)
        if extras is not None and extras.reason != facts.reason:
            extras = None
        return explain(facts, extras, now)


def why_text(why: Why) -> list[str]:
    """The why as plain lines (the CLI's ``ntui why`` and ``ntui show``)."""
    return [why.headline, *(f"  {line}" for line in why.lines)]
