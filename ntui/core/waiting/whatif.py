"""What would start sooner: a few other shapes of one job, each asked of ``sbatch --test-only``.

:func:`plan_shapes` (pure) picks at most :data:`MAX_SHAPES` shapes, each the job with one change: the job as it
is (the baseline every estimate is compared with), fewer nodes (half, at least one), a shorter time limit (half:
a shorter job fits more of the gaps the backfill scheduler fills), another QOS the user's association may use,
another partition that is up, takes the job's size and time and allows its account and QOS. Each shape is an
override (``sbatch.nodes=1``: what the compose form applies, and ``ntui check --what-if`` sets) and the
equivalent sbatch option (``--nodes=1``: added to the command line of a submitted job's own script, where it
overrides the script's ``#SBATCH`` line).

:func:`run_shapes` (thread-side) asks each shape in turn through a caller's ``test`` (one ``sbatch
--test-only`` of the real script with that one change: :func:`preset_tester` for a preset and its overrides,
:func:`script_tester` for a script as submitted), so a request costs at most :data:`MAX_SHAPES` test-only calls,
and only when someone asks (never on a timer). :func:`summary` says which shape starts first and by how much.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ntui.core.compose.spec import JobSpec
from ntui.core.paths import atomic_write
from ntui.core.slurm.common import SUBMIT_TIMEOUT, parse_timestamp
from ntui.core.slurm.durations import format_span, format_time_limit, parse_time_limit
from ntui.core.slurm.runner import CommandRunner, ControllerUnreachable, SlurmError, slurm_env
from ntui.core.slurm.sbatch import TestOnlyResult, test_only
from ntui.core.slurm.scontrol import JobDetails, Partition
from ntui.core.slurm.squeue import QueueJob
from ntui.core.waiting.why import format_start

__all__ = [
    "MAX_SHAPES",
    "Shape",
    "ShapeInput",
    "ShapeResult",
    "input_from_spec",
    "plan_for_job",
    "plan_shapes",
    "preset_tester",
    "run_shapes",
    "script_tester",
    "summary",
]

#: Shapes per request, the job as it is included: at most this many ``sbatch --test-only`` calls.
MAX_SHAPES = 5
#: A shape whose estimate is at most this far from now "starts now".
NOW_S = 60.0


@dataclass(frozen=True)
class Shape:
    """The job with one change (``key`` empty: as it is). ``key`` is a preset key (``sbatch.nodes``), ``value``
    its new text."""

    label: str
    key: str = ""
    value: str = ""

    @property
    def override(self) -> str | None:
        """The ``--set`` / form override (None for the job as it is)."""
        return f"{self.key}={self.value}" if self.key else None

    @property
    def option(self) -> str | None:
        """The sbatch option with the same effect (None for the job as it is)."""
        return f"--{self.key.split('.', 1)[1]}={self.value}" if self.key else None


@dataclass(frozen=True)
class ShapeInput:
    """What the planner needs of a job."""

    nodes: int
    time_s: int | None = None  # None: no limit given (the partition's default applies)
    qos: str | None = None
    partition: str | None = None  # None: the default partition
    account: str | None = None


@dataclass(frozen=True)
class ShapeResult:
    """What Slurm said of one shape: ``ok`` with a start estimate (and where), or not, with why."""

    shape: Shape
    ok: bool
    start: datetime | None = None
    nodes: str | None = None
    partition: str | None = None
    reason: str = ""

    def starts_now(self, now: datetime) -> bool:
        return self.ok and self.start is not None and (self.start - now).total_seconds() <= NOW_S


def _directive(spec: JobSpec, option: str) -> str | None:
    return next((d.value for d in spec.directives if d.option == option), None)


def input_from_spec(spec: JobSpec) -> ShapeInput:
    time_text = _directive(spec, "time")
    try:
        seconds = parse_time_limit(time_text) if time_text and time_text != "0" else None
    except ValueError:
        seconds = None
    return ShapeInput(spec.nodes, seconds, _directive(spec, "qos"), _directive(spec, "partition"),
                      _directive(spec, "account"))


def _fits(p: Partition, job: ShapeInput) -> bool:
    if not p.up:
        return False
    if job.time_s is not None and p.max_time_s is not None and job.time_s > p.max_time_s:
        return False
    if p.total_nodes is not None and job.nodes > p.total_nodes:
        return False
    if p.max_nodes is not None and job.nodes > p.max_nodes:
        return False
    if job.account and p.allow_accounts is not None and job.account not in p.allow_accounts:
        return False
    return not (job.qos and p.allow_qos is not None and job.qos not in p.allow_qos)


def plan_shapes(
    job: ShapeInput,
    *,
    partitions: Sequence[Partition] = (),
    qos_choices: Sequence[str] = (),
    limit: int = MAX_SHAPES,
) -> tuple[Shape, ...]:
    """The shapes to ask about, the job as it is first, at most ``limit`` in all (see the module docstring)."""
    shapes = [Shape("as it is")]
    if job.nodes > 1:
        fewer = max(1, job.nodes // 2)
        shapes.append(Shape(f"{fewer} node{'s' if fewer != 1 else ''} instead of {job.nodes}", "sbatch.nodes",
                            str(fewer)))
    if job.time_s is not None and job.time_s >= 120:
        shorter = max(60, job.time_s // 2 // 60 * 60)
        shapes.append(Shape(f"time limit {format_time_limit(shorter)} instead of {format_time_limit(job.time_s)}",
                            "sbatch.time", format_time_limit(shorter)))
    for qos in qos_choices:
        if qos and qos != job.qos:
            shapes.append(Shape(f"QOS {qos} instead of {job.qos or 'the default'}", "sbatch.qos", qos))
            break
    current = job.partition or next((p.name for p in partitions if p.default), None)
    for p in partitions:
        if p.name != current and _fits(p, job):
            shapes.append(Shape(f"partition {p.name} instead of {current or 'the default'}", "sbatch.partition",
                                p.name))
            break
    return tuple(shapes[:max(1, limit)])


def result_of(shape: Shape, res: TestOnlyResult) -> ShapeResult:
    if not res.ok:
        return ShapeResult(shape, False, reason=res.reason or "refused")
    return ShapeResult(shape, True, parse_timestamp(res.start), res.nodes, res.partition,
                       "" if res.start else "accepted, no start estimate")


Tester = Callable[[Shape], "ShapeResult"]


def run_shapes(
    shapes: Iterable[Shape],
    test: Tester,
    *,
    on_result: Callable[[ShapeResult], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> tuple[ShapeResult, ...]:
    """*Thread-side*: each shape in turn (``on_result`` after each, for a view that fills in as answers come).
    An unreachable controller stops the rest (each would wait for the same timeout); other failures are that
    shape's answer."""
    out: list[ShapeResult] = []
    for shape in shapes:
        if cancelled():
            break
        try:
            result = test(shape)
        except ControllerUnreachable:
            raise
        except (SlurmError, ValueError) as exc:
            result = ShapeResult(shape, False, reason=str(exc))
        out.append(result)
        if on_result is not None:
            on_result(result)
    return tuple(out)


def script_tester(runner: CommandRunner, script: str, *, environ: Mapping[str, str] | None = None,
                  timeout: float = SUBMIT_TIMEOUT) -> Tester:
    """A tester for a script as it was submitted: ``sbatch --test-only [OPTION] SCRIPT`` (the option overrides
    the script's own ``#SBATCH`` line)."""
    env, _ = slurm_env(environ)

    def test(shape: Shape) -> ShapeResult:
        with tempfile.TemporaryDirectory(prefix="ntui-whatif-") as tmp:
            path = Path(tmp) / "job.sbatch"
            atomic_write(path, script)
            extra = [shape.option] if shape.option else []
            return result_of(shape, test_only(runner, str(path), extra_args=extra, env=env, timeout=timeout))

    return test


def preset_tester(runner: CommandRunner, preset: str, overrides: Sequence[str], *,
                  timeout: float = SUBMIT_TIMEOUT) -> Tester:
    """A tester for a preset and its overrides: the shape's override on top, validated and rendered as ``submit``
    would (a shape the rules refuse is answered with the rule's message, no Slurm call), then ``sbatch
    --test-only`` of that script."""
    from ntui.core.compose.presets import load_preset
    from ntui.core.compose.sitecheck import check_job
    from ntui.core.compose.spec import validate
    from ntui.core.problems import PresetError

    def test(shape: Shape) -> ShapeResult:
        extra = [shape.override] if shape.override else []
        try:
            loaded = load_preset(preset, [*overrides, *extra])
        except PresetError as exc:
            return ShapeResult(shape, False, reason=str(exc.problems[0] if exc.problems else exc))
        spec, problems = validate(loaded)
        if spec is None:
            first = next((p for p in problems if p.is_error), None)
            return ShapeResult(shape, False, reason=f"not valid: {first.field}: {first.message}" if first
                               else "not valid")
        return result_of(shape, check_job(spec, runner, timeout=timeout))

    return test


def plan_for_job(runner: CommandRunner, job_id: str, job: QueueJob, details: JobDetails | None,
                 script: str | None, *, timeout: float) -> tuple[tuple[Shape, ...], Tester, str]:
    """*Thread-side*: a pending job's shapes (the partitions that are up, the QOS its account's association
    allows) and a tester of its own script: ``script`` (ntui's record of it), else ``scontrol write batch_script``;
    and where the script came from, in words."""
    from ntui.core.slurm.sacctmgr import user_associations
    from ntui.core.slurm.scontrol import batch_script, list_partitions

    try:
        parts = list_partitions(runner, timeout=timeout)
    except SlurmError:
        parts = ()
    assoc = user_associations(runner, timeout=timeout)
    account = details.account if details else None
    qos = next((q for a, q in assoc.pairs if a == account), assoc.qos) if account else assoc.qos
    where = "its script from ntui's history" if script else "its script from scontrol write batch_script"
    text = script or batch_script(runner, job_id, timeout=timeout)
    shape = ShapeInput(job.num_nodes or 1, job.time_limit_s, (details.qos if details else None) or job.qos,
                       job.partition or None, account)
    return plan_shapes(shape, partitions=parts, qos_choices=qos), script_tester(runner, text), where


def summary(results: Sequence[ShapeResult], now: datetime) -> str:
    """One sentence: which shape starts first, and how much sooner than the job as it is."""
    base = next((r for r in results if not r.shape.key), None)
    ok = [r for r in results if r.ok and r.start is not None]
    if not ok:
        return "Slurm gave no start estimate for any shape"
    best = min(ok, key=lambda r: (r.start or now, bool(r.shape.key)))
    if base is not None and best is base:
        return f"as it is starts first, at {format_start(best.start or now, now)}: no other shape starts sooner"
    when = "starts now" if best.starts_now(now) else f"starts {format_start(best.start or now, now)}"
    if base is None or not base.ok or base.start is None:
        return f"{best.shape.label} {when}"
    gain = (base.start - (best.start or now)).total_seconds()
    if gain < NOW_S:
        return f"no shape starts sooner than as it is, at {format_start(base.start, now)}"
    return f"{best.shape.label} {when}: {format_span(gain)} sooner than as it is"
