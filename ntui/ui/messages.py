"""Typed messages: the contract between thread workers (which call the core) and the widgets.

Workers never touch widgets; they post one of these (``post_message`` is thread-safe) and a handler
on the UI thread applies it. Payloads are immutable core values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ntui.core.compose.presets import PresetInfo
    from ntui.core.compose.sitecheck import PartitionLimits
    from ntui.core.compose.spec import JobSpec
    from ntui.core.compose.yamlsrc import LoadedPreset
    from ntui.core.jobs.details import DetailsResult
    from ntui.core.jobs.journals import JournalResult
    from ntui.core.jobs.polling import PollRequest
    from ntui.core.jobs.queue import Fetched
    from ntui.core.jobs.submission import SubmittedJob
    from ntui.core.problems import Problem
    from ntui.core.progress.board import ProgressView
    from ntui.core.records.history import HistoryEntry
    from ntui.core.records.outcome import Outcome
    from ntui.core.slurm.sbatch import TestOnlyResult
    from ntui.core.waiting.whatif import Shape, ShapeResult
    from ntui.core.waiting.why import Extras


@dataclass
class PresetsListed(Message):
    """Every preset (user ones shadowing shipped ones); ``select`` names the one to open, if any."""

    presets: tuple[PresetInfo, ...]
    select: str | None = None


@dataclass
class PresetOpened(Message):
    """A preset loaded without overrides (``base`` None with ``problems`` when it is broken)."""

    name: str
    base: LoadedPreset | None
    problems: tuple[Problem, ...] = ()


@dataclass
class PreviewRendered(Message):
    """The preset with the form's overrides, loaded, validated and rendered (``script`` None on errors)."""

    generation: int
    preset: str
    overrides: tuple[str, ...]
    loaded: LoadedPreset | None
    spec: JobSpec | None
    script: str | None
    problems: tuple[Problem, ...]


@dataclass
class ClusterInfo(Message):
    """Choices fed by the cluster. ``slurm_installed`` False: the client binaries are missing. ``limits``: the
    partitions' time and node limits (from the same sinfo call), for the check before sbatch."""

    slurm_installed: bool
    partitions: tuple[str, ...] = ()
    default_partition: str | None = None
    accounts: tuple[str, ...] = ()
    qos: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    limits: tuple[PartitionLimits, ...] = ()
    destination: str | None = None  # the cluster these choices are of: one reached over ssh (None: Slurm here)
    destinations: tuple[str | None, ...] = ()  # where a job may go (None: Slurm here); more than one: a choice


@dataclass
class CheckFinished(Message):
    """``sbatch --test-only`` answered (``result.ok`` False carries Slurm's reason). ``problems``: what the
    partition Slurm chose would never run (``ntui.core.compose.sitecheck``; Slurm accepts over-long jobs)."""

    preset: str
    result: TestOnlyResult
    problems: tuple[Problem, ...] = ()


@dataclass
class JobSubmitted(Message):
    """A job was submitted and recorded in the history. Bubbles to the app (``NtuiApp.last_submission``)."""

    preset: str
    job: SubmittedJob


@dataclass
class ScriptImported(Message):
    """An sbatch script was imported into a user preset (the form opens it), or could not be (``error``)."""

    script: str
    path: str = ""
    fixes: tuple[str, ...] = ()
    not_imported: int = 0
    error: str = ""


@dataclass
class PresetSaved(Message):
    """A preset file was written (the picker reloads and selects it)."""

    name: str
    path: str
    warnings: tuple[str, ...] = ()
    text: str = ""


# ---------------------------------------------------------------- the jobs view (posted to JobsScreen)


@dataclass
class QueueFetched(Message):
    """One squeue answer, parsed and formatted off the UI thread."""

    request: PollRequest
    got: Fetched
    started: float  # perf_counter at the start of the worker


@dataclass
class QueueFailed(Message):
    """squeue failed (the view keeps its rows and backs off)."""

    request: PollRequest
    error: BaseException


@dataclass
class ClusterQueueFetched(Message):
    """One squeue answer of a cluster reached over ssh (ntui.core.jobs.clusters)."""

    cluster: str
    request: PollRequest
    got: Fetched


@dataclass
class ClusterQueueFailed(Message):
    """A cluster's squeue failed, or its link is down: its rows stay, its banner says why, it backs off."""

    cluster: str
    request: PollRequest
    error: BaseException


@dataclass
class ClusterDetailsFetched(Message):
    """``scontrol show job -d`` of the selected job, asked of its own cluster (reached over ssh)."""

    cluster: str
    result: DetailsResult


@dataclass
class DetailsFetched(Message):
    """``scontrol show job -d`` (and the nodes' states) of the selected job."""

    result: DetailsResult


@dataclass
class EntryFound(Message):
    """The history's answer for a job (None: ntui did not submit it); no Slurm call involved."""

    key: str
    entry: HistoryEntry | None


@dataclass
class OutcomesResolved(Message):
    """Final states of jobs that left the queue."""

    outcomes: tuple[tuple[str, Outcome], ...]


@dataclass
class JournalsRead(Message):
    """One journal tick: the history listed, own jobs' journals read (ntui.core.jobs.journals)."""

    result: JournalResult


@dataclass
class ProgressRead(Message):
    """One progress tick: own running jobs' logs read for how far they are (ntui.core.jobs.progress)."""

    views: Mapping[str, ProgressView]


@dataclass
class ActionDone(Message):
    """A job action (cancel, signal, hold, ...) went through; ``text`` says so."""

    text: str


class OverridesLoaded(Message):
    """The compose view's worker read a preset with a job's overrides: the form fields to fill."""

    def __init__(self, name: str, texts: dict[str, str], unplaced: tuple[str, ...], error: str | None) -> None:
        super().__init__()
        self.name = name
        self.texts = texts
        self.unplaced = unplaced
        self.error = error


# ---------------------------------------------------------------- waiting (ntui/core/waiting)


@dataclass
class WhyFetched(Message):
    """The extras of a pending job's why (priority, limits, dependencies), fetched once per job and reason."""

    extras: Extras


@dataclass
class WhatIfPlanned(Message):
    """The shapes a what-if will ask about (its table's rows, before any answer)."""

    shapes: tuple[Shape, ...]
    note: str = ""


@dataclass
class WhatIfAnswered(Message):
    """Slurm's answer for one shape (``sbatch --test-only``)."""

    result: ShapeResult


@dataclass
class ResubmitWith(Message):
    """A tab asks the jobs view to resubmit ``job_id`` with ``extra`` ``--set`` overrides on top of its recorded ones
    (the Report tab's ``f``: a finding's suggested fix)."""

    job_id: str
    extra: tuple[str, ...]
