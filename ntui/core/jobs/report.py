"""A job's GPU (and CPU) usage report, gathered and laid out: one home for ``ntui report`` and the Report tab.

:func:`job_usage` (*thread-side*) finds the in-job sampler's files of a job ntui submitted (through its history
entry: log dir and stem), asks Slurm at most twice (``scontrol show job`` while the controller remembers the job,
one ``sacct`` for the steps where accounting exists; errors are collected, not raised: the samples still make a
report) and builds the :class:`~ntui.core.gpu.usage.UsageReport`. :func:`format_report` lays it out in plain lines
that fit ``width`` columns: per node and GPU the statistics and a utilisation sparkline, then the findings with
the ``--set`` that fixes each.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ntui.core.gpu.smi import sparkline
from ntui.core.gpu.usage import JobFacts, NodeStats, UsageReport, build_report
from ntui.core.hosts import expand_nodelist
from ntui.core.jobfiles.lognames import task_job_id
from ntui.core.jobfiles.samplefiles import find_sample_files, sample_path, srun_log_path
from ntui.core.records.history import HistoryEntry
from ntui.core.slurm.common import state_category
from ntui.core.slurm.durations import format_elapsed, time_limit_from_script
from ntui.core.slurm.runner import CommandRunner, JobNotFound, SlurmError
from ntui.core.slurm.sacct import StepAccounting, step_accounting
from ntui.core.slurm.scontrol import show_job
from ntui.core.textsafe import inert

__all__ = [
    "Gathered",
    "JobUsage",
    "fix_command",
    "format_report",
    "gather_facts",
    "job_usage",
    "report_notes",
    "sampler_log",
    "squeeze",
    "usage_lines",
]

SPARK_MIN = 10



@dataclass(frozen=True)
class Gathered:
    facts: JobFacts
    file_job_id: str
    cpu: StepAccounting | None
    slurm_error: str | None


def gather_facts(runner: CommandRunner, job_id: str, entry: HistoryEntry) -> Gathered:
    """State, elapsed, limit and nodes from scontrol (or sacct once the controller forgot the job), and the
    sacct steps. Slurm errors are collected, not raised: the samples still make a report."""
    state: str | None = None
    finished = False
    elapsed: float | None = None
    limit: float | None = time_limit_from_script(entry.script)
    nodes: tuple[str, ...] = ()
    file_id = job_id
    error: str | None = None
    try:
        d = show_job(runner, job_id)
        state, finished = d.state, d.category.finished
        elapsed = float(d.run_time_s) if d.run_time_s is not None else None
        limit = float(d.time_limit_s) if d.time_limit_s else limit
        nodes = d.nodes
        file_id = d.raw_job_id or job_id
        if d.array_job_id and d.array_task_id and d.array_task_id.isdigit():
            file_id = task_job_id(d.array_job_id, d.array_task_id)  # a sweep's task: its files say 123_4 (W11)
    except JobNotFound:
        pass
    except SlurmError as exc:
        error = str(exc)
    cpu: StepAccounting | None = None
    if error is None:
        try:
            cpu = step_accounting(runner, job_id)
        except SlurmError as exc:
            cpu = StepAccounting(False, f"sacct failed: {exc}")
        if cpu.available and cpu.job is not None and state is None:
            job = cpu.job
            state = job.state
            finished = state_category(job.state).finished
            elapsed = float(job.elapsed_s) if job.elapsed_s is not None else None
            limit = float(job.time_limit_s) if job.time_limit_s else limit
            nodes = expand_nodelist(job.nodelist, strict=False) if job.nodelist else ()
    facts = JobFacts(job_id, state, finished, elapsed, limit, nodes)
    return Gathered(facts, file_id, cpu, error)


def _pct(value: float | None, digits: int = 0) -> str:
    return "?" if value is None else f"{100 * value:.{digits}f} %"


def _num(value: float | None, fmt: str = ".0f", unit: str = "") -> str:
    return "?" if value is None else f"{value:{fmt}}{unit}"


def _energy(wh: float | None) -> str:
    if wh is None:
        return "?"
    return f"{wh / 1000:.1f} kWh" if wh >= 1000 else f"{wh:.1f} Wh"


def squeeze(points: Sequence[float | None], width: int) -> list[float | None]:
    """Average ``points`` down to ``width`` values (unknowns ignored; a slice of unknowns stays unknown)."""
    if width >= len(points) or width < 1:
        return list(points)
    out: list[float | None] = []
    for k in range(width):
        part = [p for p in points[k * len(points) // width : (k + 1) * len(points) // width] if p is not None]
        out.append(sum(part) / len(part) if part else None)
    return out


def fix_command(entry: HistoryEntry, fix: str) -> str:
    """The resubmit command line with the job's own overrides and the fix (shell-quoted)."""
    words = ["ntui", "submit", entry.preset, *(w for o in entry.overrides for w in ("--set", o)), "--set", fix]
    return shlex.join(words)


def format_report(report: UsageReport, entry: HistoryEntry, cpu: StepAccounting | None, width: int) -> list[str]:
    out: list[str] = []
    state = report.state or ("ended (state unknown)" if report.finished else "state unknown")
    head = f"job {report.job_id} ({inert(state)}): {len(report.nodes)} node(s), {report.gpus} GPU(s) sampled"
    tools = sorted({n.tool for n in report.nodes if n.gpus})
    if tools and tools != ["nvidia-smi"]:  # another vendor's tool: named, the rest of the report reads the same
        head += f" by {', '.join(tools)}"
    if report.simulated:
        head += "  [SIMULATED nvidia-smi]"
    out.append(head)
    limit = report.time_limit_s
    used = ""
    if limit and report.elapsed_s is not None:
        used = f" of {format_elapsed(limit)} ({_pct(report.elapsed_s / limit)})"
    src = {"slurm": "", "samples": " (from the samples)", "none": ""}[report.elapsed_source]
    out.append(f"elapsed {format_elapsed(report.elapsed_s)}{used}{src}")
    if report.gpus:
        busy = report.gpu_hours_busy
        alloc = report.gpu_hours_allocated
        share = f"{_pct(busy / alloc)}, " if busy is not None and alloc else ""
        energy = f"; energy {_energy(report.energy_wh)}" if report.energy_wh is not None else ""
        out.append(f"GPU-hours: {_num(alloc, '.2f')} allocated, {_num(busy, '.2f')} busy ({share}utilisation-"
                   f"weighted); mean utilisation {_num(report.util_mean, '.0f', ' %')}{energy}")
        out.append("")
        spark_w = width - 78
        # too narrow for a sparkline beside the numbers: one line per GPU below the table, as wide as fits
        below = spark_w < SPARK_MIN
        out.append(f"{'node':<10} {'gpu':>3} {'mean':>5} {'p50':>4} {'p90':>4} {'idle':>5} {'peak memory':>17} "
                   f"{'power':>6} {'energy':>8}" + ("" if below else "  utilisation over time"))
        for node in report.nodes:
            for g in node.gpus:
                mem = (f"{(g.mem_peak_mib or 0) / 1024:.1f}/{(g.mem_total_mib or 0) / 1024:.0f}G "
                       f"{_pct(g.mem_peak_fraction)}" if g.mem_peak_fraction is not None else "?")
                out.append(
                    f"{inert(node.node)[:10]:<10} {g.index:>3} {_num(g.util_mean, '.0f', '%'):>5} "
                    f"{_num(g.util_p50):>4} {_num(g.util_p90):>4} {_pct(g.idle_fraction):>5} {mem:>17} "
                    f"{_num(g.power_mean_w, '.0f', 'W'):>6} {_energy(g.energy_wh):>8}"
                    + ("" if below else f"  {sparkline(squeeze(g.util_series, spark_w))}")
                )
            if len(node.gpus) > 1:
                out.append(
                    f"{inert(node.node)[:10]:<10} {'all':>3} {_num(node.util_mean, '.0f', '%'):>5} {'':>4} {'':>4} "
                    f"{'':>5} {'':>17} {_num(node.power_mean_w, '.0f', 'W'):>6} {_energy(node.energy_wh):>8}"
                )
        if below:
            out.append("")
            out.append("utilisation over time")
            for node in report.nodes:
                for g in node.gpus:
                    line_w = max(SPARK_MIN, width - 16)
                    out.append(f"{inert(node.node)[:10]:<10} {g.index:>3}  {sparkline(squeeze(g.util_series, line_w))}")
    for reason in report.no_data_reasons:
        out.append(f"no GPU data: {inert(reason)}")
    notes = report_notes(report)
    if notes:
        out.append("")
        out.extend(f"note: {inert(n)}" for n in notes)
    out.append("")
    out.extend(_cpu_lines(cpu))
    out.append("")
    if report.findings:
        out.append("Findings:")
        for f in report.findings:
            out.append(f"  - {f.message}")
            if f.fix:
                out.append(f"    fix: {fix_command(entry, f.fix)}")
    elif report.gpus:
        out.append("Findings: none (no idle GPU, memory, time-limit or straggler problem seen)")
    return out


def report_notes(report: UsageReport) -> list[str]:
    notes: list[str] = []
    for n in report.nodes:
        if n.status == "sampling" and report.finished:
            notes.append(f"{n.node}: the sampler did not write its end line (killed with the job?)")
        if n.gaps:
            notes.append(f"{n.node}: {n.gaps} gap(s) or clock jump(s) forwards between samples "
                         f"(longest {n.longest_gap_s:.0f} s), counted as one interval each")
        if n.clock_backwards:
            notes.append(f"{n.node}: the clock went backwards {n.clock_backwards} time(s)")
        if n.other_gpus:
            notes.append(f"{n.node}: {n.tool} also showed GPU(s) {','.join(map(str, n.other_gpus))}, not the "
                         "job's (no device cgroup): not counted")
        if n.restarts:
            notes.append(f"{n.node}: the sampler restarted {n.restarts} time(s) (requeue)")
        if n.bad_lines:
            notes.append(f"{n.node}: {n.bad_lines} line(s) that are not samples, e.g. {n.messages[0]}"
                         if n.messages else f"{n.node}: {n.bad_lines} line(s) that are not samples")
    return notes


def _cpu_lines(cpu: StepAccounting | None) -> list[str]:
    if cpu is None:
        return ["CPU: not asked (Slurm did not answer)"]
    if not cpu.available or cpu.job is None:
        return [f"CPU: {cpu.reason or 'no accounting record'}"]
    job = cpu.job
    total = format_elapsed(cpu.total_cpu_s)
    out = [f"CPU (sacct): efficiency {_pct(cpu.cpu_efficiency)} = TotalCPU {total} of steps / "
           f"(elapsed {format_elapsed(job.elapsed_s)} x {job.alloc_cpus or '?'} CPUs)"]
    out.append(f"  {'step':<10} {'name':<18} {'tasks':>5} {'nodes':>5} {'elapsed':>9} {'cpu eff':>8} "
               f"{'MaxRSS/task':>11} {'node <=':>9}  where")
    for s in cpu.steps:
        where = f"{s.max_rss_node or '?'} task {s.max_rss_task}" if s.max_rss_kib is not None else ""
        out.append(
            f"  {inert(s.step or ''):<10} {inert(s.name)[:18]:<18} {s.tasks or '?':>5} {s.nodes or '?':>5} "
            f"{format_elapsed(s.elapsed_s):>9} {_pct(s.cpu_efficiency):>8} {_mib(s.max_rss_kib):>11} "
            f"{_mib(s.node_rss_bound_kib):>9}  {inert(where)}"
        )
    out.append("  MaxRSS is the largest single task's peak; a node held at most MaxRSS x its tasks (node <=).")
    return out


def _mib(kib: float | None) -> str:
    if kib is None:
        return "-"
    return f"{kib / 1024 / 1024:.1f}G" if kib >= 1024 * 1024 else f"{kib / 1024:.0f}M"


def sampler_log(log_dir: str, stem: str, job_id: str, max_lines: int = 3) -> list[str]:
    """The first lines srun wrote for the sampler step (why it did not start, on old Slurm or errors)."""
    try:
        with open(srun_log_path(log_dir, stem, job_id), "rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return []
    return [ln.strip() for ln in head.splitlines() if ln.strip()][:max_lines]


def _no_files(report: UsageReport, entry: HistoryEntry, job_id: str) -> UsageReport:
    """No node is known and no file exists: one pseudo-node that says where the files were looked for."""
    where = sample_path(entry.log_dir, entry.log_stem, job_id, "<node>")
    return replace(report, nodes=(NodeStats("(all nodes)", where, "missing", None, ()),))


@dataclass(frozen=True)
class JobUsage:
    """Everything ``ntui report`` and the Report tab show for one job."""

    report: UsageReport
    cpu: StepAccounting | None
    slurm_error: str | None
    sampler_said: tuple[str, ...]  # the sampler step's first lines (why it did not start)


def job_usage(runner: CommandRunner, job_id: str, entry: HistoryEntry) -> JobUsage:
    """*Thread-side*: the report of ``job_id`` (ntui's, ``entry`` from the history) over its samples so far."""
    got = gather_facts(runner, job_id, entry)
    files = {n: sample_path(entry.log_dir, entry.log_stem, got.file_job_id, n) for n in got.facts.nodes}
    files.update(find_sample_files(entry.log_dir, entry.log_stem, got.file_job_id))
    report = build_report(files, got.facts)
    if not files and not got.facts.nodes:
        report = _no_files(report, entry, got.file_job_id)
    said = sampler_log(entry.log_dir, entry.log_stem, got.file_job_id)
    return JobUsage(report, got.cpu, got.slurm_error, tuple(said))


def usage_lines(usage: JobUsage, entry: HistoryEntry, width: int) -> list[str]:
    """:func:`format_report`, with what the sampler step said when there is no GPU data."""
    lines = format_report(usage.report, entry, usage.cpu, width)
    if usage.sampler_said and not usage.report.gpus:
        lines[1:1] = [f"the sampler step said: {inert(line)}" for line in usage.sampler_said]
    return lines
