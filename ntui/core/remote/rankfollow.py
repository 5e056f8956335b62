"""A job's logs on a cluster reached over ssh, followed rank by rank through that cluster's files (the Logs tab of a
remote job), Textual-free: the pane's worker calls :meth:`RemoteRanks.poll` and draws what it returns.

* The batch log (``scontrol``'s StdOut there) is always followed; for a job ntui submitted there, the job's history
  entry on the cluster (:func:`~ntui.core.remote.logs.remote_entry`, asked once) gives its log directory and stem,
  and every rank log that directory lists (:func:`~ntui.core.jobfiles.lognames.parse_rank_file`, the local
  discovery's rule) is followed too; the directory is listed again every :data:`RELIST_EVERY` polls while the job
  runs, and at every poll once it ended.
* Each file is read by offsets held by its own :class:`~ntui.core.remote.logs.RemoteTail` and keeps its last
  ``window`` lines: a dropped link resumes where the last answer ended, so no line is lost or doubled; a file cut or
  replaced is read again from its start (the shown view loaded again).
* A dropped link (any :class:`~ntui.core.slurm.runner.SlurmError` the files raise, once their own reconnects gave up)
  is said on every row, with the wait before the next try: :data:`~RanksPoll.wait_s` doubles from the poll interval
  up to :data:`BACKOFF_CAP_S`, and falls back to the interval once a poll gets through.
* Once the job no longer runs, the follow ends at the first poll (after the first) that found nothing new: every row
  says ``ended`` and :attr:`RanksPoll.done` is true.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ntui.core.jobfiles.lognames import LogPaths, parse_rank_file
from ntui.core.logs.rows import BATCH, Appended, Key, Loaded, RankRow, TriageLine, key_sort
from ntui.core.remote.files import ClusterFiles, FileRefused
from ntui.core.remote.logs import RemoteTail, remote_entry
from ntui.core.slurm.runner import SlurmError
from ntui.core.textsafe import ellipsize

__all__ = ["BACKOFF_CAP_S", "INTERVAL_MIN_S", "LAST_LINE_MAX", "RELIST_EVERY", "RanksPoll", "RemoteJob",
           "RemoteRanks"]

#: The shortest wait between two polls (seconds): every poll is a few requests over the link.
INTERVAL_MIN_S = 0.2
#: The longest wait before the next try after a dropped link (seconds).
BACKOFF_CAP_S = 30.0
#: While the job runs, its log directory is listed again every this many polls (new ranks' files).
RELIST_EVERY = 4
#: A row's last line, at most this many characters (the rank table shows no more of it).
LAST_LINE_MAX = 160


@dataclass
class RemoteJob:
    """The job of a cluster reached over ssh that the pane shows: its cluster, its id there, its batch log's path
    there (None: not known yet), whether it still runs (the follow stops after it ended)."""

    cluster: str
    job_id: str | None
    path: str | None
    active: bool = True

    def same(self, other: RemoteJob) -> bool:
        return (self.cluster, self.job_id, self.path) == (other.cluster, other.job_id, other.path)


@dataclass(frozen=True)
class RanksPoll:
    """What one poll found: the rank table's ``rows`` and the ``triage`` line (which logs are read, where); ``shown``:
    the shown file's whole kept window (:class:`Loaded`: the view changed, or its file was cut or replaced) or its
    new lines (:class:`Appended`), None when there is nothing to draw; ``wait_s``: the seconds before the next poll;
    ``done``: the job ended and nothing more will come (the follow stops)."""

    rows: tuple[RankRow, ...]
    triage: TriageLine
    shown: Loaded | Appended | None = None
    wait_s: float = INTERVAL_MIN_S
    done: bool = False


def _cut(text: str) -> str:
    return ellipsize(text.strip(), LAST_LINE_MAX)


class RemoteRanks:
    """The follow of one remote job's logs (see the module's docstring). Not thread-safe: one worker polls it."""

    def __init__(self, job: RemoteJob, files_of: Callable[[str], ClusterFiles], *, window: int,
                 interval: float) -> None:
        if job.job_id is None or job.path is None:
            raise ValueError("a remote job's logs are followed once its id and its batch log's path are known")
        self.job = job
        self.job_id: str = job.job_id
        self.files_of = files_of
        self.window = max(1, window)
        self.interval = max(INTERVAL_MIN_S, interval)
        self.paths: dict[Key, str] = {BATCH: job.path}
        self.tails: dict[Key, RemoteTail] = {}
        self.kept: dict[Key, deque[str]] = {}
        self.status: dict[Key, tuple[str, bool, str]] = {BATCH: ("reading…", False, "")}  # (status, exists, line)
        self.log_paths: LogPaths | None = None
        self.note = f"the batch log on {job.cluster}: {job.path}"
        self.polls = 0
        self._entry_known = False  # the history entry was asked (and answered) once
        self._shown_gen = -1  # the view generation whose window was last returned whole
        self._wait_s = self.interval

    # -- what is shown

    def rows(self) -> tuple[RankRow, ...]:
        return tuple(RankRow(k, None, exists, 0, "", _cut(line), status)
                     for k, (status, exists, line) in sorted(self.status.items(), key=lambda kv: key_sort(kv[0])))

    def triage(self) -> TriageLine:
        return TriageLine(self.note, False)

    def _result(self, shown: Loaded | Appended | None, *, done: bool = False) -> RanksPoll:
        return RanksPoll(self.rows(), self.triage(), shown, self._wait_s, done)

    # -- one poll

    def poll(self, gen: int, key: Key) -> RanksPoll:
        """Read what every file gained; ``gen`` and ``key``: the view generation and the file shown now (a new
        generation gets the file's whole kept window)."""
        shown: Loaded | Appended | None = None
        try:
            files = self.files_of(self.job.cluster)
            if not self._entry_known:
                self._learn_entry(files)
            if self.log_paths is not None and (self.polls % RELIST_EVERY == 0 or not self.job.active):
                self._relist(files, self.log_paths)
            fresh = False  # a file gained lines
            for k, path in self.paths.items():
                got, seen = self._read(files, k, path, shown=k == key and gen == self._shown_gen)
                fresh = fresh or got
                shown = seen or shown
            if gen != self._shown_gen and key in self.tails:
                shown = Loaded(tuple(self.kept[key]), partial=self.tails[key].partial)
                self._shown_gen = gen
            self.polls += 1
            if not self.job.active and not fresh and self.polls > 1:
                self.status = {k: ("ended", exists, line) for k, (_, exists, line) in self.status.items()}
                return self._result(shown, done=True)
            self._wait_s = self.interval
        except SlurmError as exc:  # the link is down (the files reopen it themselves first): say so, try again
            self._wait_s = min(BACKOFF_CAP_S, max(self.interval, self._wait_s * 2))
            said = f"link down, retry in {self._wait_s:.0f} s"
            self.status = {k: (said, exists, str(exc)) for k, (_, exists, _line) in self.status.items()}
        return self._result(shown)

    def _learn_entry(self, files: ClusterFiles) -> None:
        entry = remote_entry(files, self.job_id)
        self._entry_known = True
        if entry is not None and entry.log_dir and entry.log_stem:
            self.log_paths = LogPaths(entry.log_dir.rstrip("/"), entry.log_stem)
            self.note = f"the logs on {self.job.cluster}: {self.log_paths.log_dir} ({self.job.path})"

    def _relist(self, files: ClusterFiles, log_paths: LogPaths) -> None:
        try:
            listed = files.listdir(log_paths.log_dir)
        except FileRefused as exc:  # not there yet (the job has not started): the batch log alone
            if exc.kind != "not-found":
                raise
            listed = []
        for e in listed:
            rank = parse_rank_file(e.name, log_paths.stem, self.job_id)
            if rank is not None and rank not in self.paths:
                self.paths[rank] = f"{log_paths.log_dir}/{e.name}"
                self.status[rank] = ("reading…", False, "")

    def _read(self, files: ClusterFiles, key: Key, path: str, *, shown: bool
              ) -> tuple[bool, Loaded | Appended | None]:
        """Read one file on (its first read: its last ``window`` lines); whether it gained lines, and what the view
        draws of it when it is the ``shown`` file (its window again after a reset, else its new lines)."""
        following = "following" if self.job.active else "ended"
        tail = self.tails.get(key)
        if tail is None:
            tail = RemoteTail(files, path, lines=self.window)
            first = tail.start()
            if not first.exists:
                self.status[key] = ("not there yet", False, "")
                return False, None
            self.tails[key] = tail
            self.kept[key] = deque(first.lines, maxlen=self.window)
            self.status[key] = (following, True, first.lines[-1] if first.lines else "")
            return False, None
        update = tail.poll(wait=0.0)
        kept = self.kept[key]
        if update.reset:
            kept.clear()
        kept.extend(update.lines)
        if update.lines:
            self.status[key] = (following, True, update.lines[-1])
        elif self.status[key][0].startswith("link down"):
            self.status[key] = (following, True, self.status[key][2])
        if not shown:
            return bool(update.lines), None
        if update.reset:
            return bool(update.lines), Loaded(tuple(kept), partial=tail.partial)
        if update.lines or tail.partial:
            return bool(update.lines), Appended(tuple(update.lines), tail.partial)
        return bool(update.lines), None
