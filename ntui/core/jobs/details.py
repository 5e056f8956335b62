"""The jobs view's books of the selected job: its Slurm details and ntui's history entries (Textual-free).

* :class:`DetailsBook`: ``scontrol show job -d`` of the selected job only (plus ``sinfo -N`` of a running job's
  nodes), cached per state; a running job's node states are looked at again now and then, only while the details
  are on screen (RPC budget). One look-up at a time (a newer selection's replaces it).
* :class:`EntryBook`: the entry ntui recorded when it submitted a job (its log paths, its script), looked up on its
  own (a local file, no Slurm call), so the logs of ntui's own jobs show at once even while ``scontrol`` hangs.

Both follow the model's one in-flight idiom (:class:`~ntui.core.jobs.inflight.InFlight`). Methods marked
*thread-side* run in worker threads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ntui.core.errors import describe_error
from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.jobs.inflight import InFlight
from ntui.core.records.history import HistoryEntry
from ntui.core.records.outcome import Outcome
from ntui.core.slurm.common import StateCategory
from ntui.core.slurm.runner import CommandRunner, JobNotFound, SlurmError
from ntui.core.slurm.scontrol import JobDetails, show_job
from ntui.core.slurm.sinfo import NodeState, node_states
from ntui.core.slurm.squeue import QueueJob
from ntui.core.slurm.version import installed_version

__all__ = [
    "CachedDetails",
    "DetailsBook",
    "DetailsRequest",
    "DetailsResult",
    "DetailsStep",
    "DetailsView",
    "EntryBook",
    "HistoryLike",
    "HistoryOpener",
    "flight_recorder_words",
    "history_key",
]


class HistoryLike(Protocol):
    """What the model needs of :class:`~ntui.core.records.history.History` (tests pass stand-ins)."""

    def get(self, job_id: str) -> HistoryEntry | None: ...

    def close(self) -> None: ...


HistoryOpener = Callable[[], "HistoryLike | None"]


def flight_recorder_words(entry: HistoryEntry | None, job_id: str) -> str | None:
    """Where the job's ranks wrote PyTorch's flight-recorder dumps, if a collective timed out (D1), and how to
    read them; None when its script points them nowhere (not ntui's, or from before D1)."""
    if entry is None or not entry.log_dir or "TORCH_FR_DUMP_TEMP_FILE=" not in entry.script:
        return None
    prefix = LogPaths(entry.log_dir, entry.log_stem).flight_recorder(job_id)
    folder, _, name = prefix.rpartition("/")
    return f"{prefix}<rank>, when a collective timed out; read them with: torchfrtrace {folder} -p {name}"


def history_key(key: str) -> str:
    """The job id a history entry is recorded under (collapsed array rows ``12_[3-9]`` -> ``12``)."""
    return key.split("_[", 1)[0]


@dataclass(frozen=True)
class DetailsRequest:
    """One ``scontrol show job -d`` to run (:meth:`DetailsBook.fetch` in a worker)."""

    key: str  # the row key
    query: str  # the job id asked about
    state: str  # the state the details are fetched at (cache key)


@dataclass(frozen=True)
class DetailsResult:
    key: str
    state: str
    details: JobDetails | None
    note: str = ""
    ok: bool = True
    nodes: tuple[NodeState, ...] = ()
    slurm: str = ""  # the Slurm version the details came from ("26.05.5"; "" when unknown)


@dataclass(frozen=True)
class CachedDetails:
    state: str  # the job state the details were fetched at
    details: JobDetails | None
    note: str = ""
    failed: bool = False  # retried when the job is selected again or its state changes
    nodes: tuple[NodeState, ...] = ()  # sinfo -N of a running job's nodes
    at: float = 0.0  # monotonic time of the fetch


@dataclass(frozen=True)
class DetailsView:
    """Everything the details panel shows for one job; each part may be missing."""

    job_id: str
    queue: QueueJob | None = None  # the last squeue line seen
    details: JobDetails | None = None  # scontrol show job -d
    entry: HistoryEntry | None = None  # what ntui submitted
    outcome: Outcome | None = None  # for a job that left the queue
    note: str = ""  # "loading…", "scontrol no longer knows this job", an error
    node_states: tuple[NodeState, ...] = ()  # sinfo -N of a running job's nodes
    slurm: str = ""  # the Slurm version ntui talks to ("26.05.5"; "" until a details answer said)
    cluster: str | None = None  # the cluster reached over ssh the job is on (None: the local one)


@dataclass(frozen=True)
class DetailsStep:
    """What a selection change means for the details panel: a view to show (None: leave it as it is) and a
    look-up to start (None: none needed)."""

    view: DetailsView | None
    request: DetailsRequest | None


class DetailsBook:
    """The selected job and its details, cached per state (see the module docstring)."""

    def __init__(self, *, timeout: float, recheck_s: float, monotonic: Callable[[], float]) -> None:
        self.timeout = timeout
        self.recheck_s = recheck_s  # a running job's node states are looked at again after this (seconds)
        self.monotonic = monotonic
        self.selected: str | None = None
        self.cache: dict[str, CachedDetails] = {}
        self.inflight: InFlight[tuple[str, str]] = InFlight(exclusive=True)  # (row key, its state)
        self.slurm_version = ""  # from the last details answer that knew it

    def select(self, key: str | None) -> bool:
        """The cursor moved to ``key``; False when it was already there. Reselecting retries a failed look-up."""
        if key == self.selected:
            return False
        self.selected = key
        cached = self.cache.get(key) if key else None
        if key is not None and cached is not None and cached.failed:
            del self.cache[key]
        return True

    def fresh(self, key: str, state: str, *, visible: bool) -> bool:
        """The cache answers for ``key`` at ``state`` (a running job's node states only for a while, and only while
        the details are on screen: a node may have died)."""
        cached = self.cache.get(key)
        if cached is None or cached.state != state:
            return False
        return not (cached.nodes and visible and self.monotonic() - cached.at > self.recheck_s)

    def start(self, key: str, state: str) -> bool:
        """True when a look-up of ``key`` at ``state`` is to start now (False: it runs already)."""
        return self.inflight.start((key, state))

    def fetch(self, runner: CommandRunner, request: DetailsRequest) -> DetailsResult:
        """*Thread-side*: ``scontrol show job -d``, plus ``sinfo -N`` of a running job's nodes."""
        details: JobDetails | None = None
        note = ""
        ok = True
        try:
            details = show_job(runner, request.query, timeout=self.timeout)
        except JobNotFound:
            note = "Slurm no longer knows this job (it forgets finished jobs after MinJobAge)."
        except (SlurmError, ValueError) as exc:
            note = describe_error(exc)
            ok = False
        nodes: tuple[NodeState, ...] = ()
        if details is not None and details.category in (StateCategory.RUNNING, StateCategory.COMPLETING):
            try:
                nodes = node_states(runner, details.nodes, timeout=self.timeout)
            except Exception:  # the node states are an extra; the details stand without them
                nodes = ()
        version = installed_version(runner, timeout=self.timeout)  # local, asked once per process
        return DetailsResult(request.key, request.state, details, note, ok, nodes, str(version) if version else "")

    def fetched(self, result: DetailsResult) -> bool:
        """Store a details answer; True when it is for the selected job (the view shows it)."""
        self.inflight.done((result.key, result.state))
        self.slurm_version = result.slurm or self.slurm_version
        previous = self.cache.get(result.key)
        details = result.details or (previous.details if previous and not result.ok else None)
        nodes = result.nodes or (previous.nodes if previous and not result.ok else ())
        self.cache[result.key] = CachedDetails(result.state, details, result.note, failed=not result.ok,
                                               nodes=nodes, at=self.monotonic())
        return result.key == self.selected

    def failed(self) -> None:
        """The details worker died unexpectedly: the next selection change asks again."""
        self.inflight.clear()


class EntryBook:
    """ntui's history entries of the jobs the view showed (see the module docstring)."""

    def __init__(self) -> None:
        self.entries: dict[str, HistoryEntry | None] = {}
        self.inflight: InFlight[str] = InFlight()

    def request(self, key: str) -> str | None:
        """The row key whose history entry to look up now, or None (known, or being looked up)."""
        if key in self.entries or not self.inflight.start(key):
            return None
        return key

    @staticmethod
    def lookup(open_history: HistoryOpener, key: str) -> HistoryEntry | None:
        """*Thread-side*: what ntui recorded when it submitted the job (None: not ntui's, or unreadable)."""
        history = None
        try:
            history = open_history()
            return history.get(history_key(key)) if history is not None else None
        except Exception:  # an unreadable history only hides the script and the per-rank logs
            return None
        finally:
            if history is not None:
                history.close()

    def found(self, key: str, entry: HistoryEntry | None) -> None:
        """Store a history answer."""
        self.inflight.done(key)
        self.entries[key] = entry

    def failed(self, key: str | None = None) -> None:
        if key is None:
            self.inflight.clear()
        else:
            self.inflight.done(key)
