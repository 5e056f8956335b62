"""Drawing one job's GPU usage (pure: a board or an allocation in, Textual ``Content`` out), for the GPU pane.

Small jobs get one bar row per GPU (:func:`render_board`); a job with more than
:data:`~ntui.core.gpu.heatmap.HEATMAP_OVER` GPUs gets a compact heatmap (one cell per GPU, rows of nodes) with the
outliers in words (:func:`render_heatmap`); the summary line says where the numbers come from
(:func:`source_text`); without data the allocation from ``scontrol show job -d`` (:func:`render_allocation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.content import Content

from ntui.core.gpu.heatmap import GLYPHS, LEVELS, heatmap
from ntui.core.gpu.samples import SampleBoard
from ntui.core.gpu.smi import GpuIssue, GpuSample, GpuView, no_gpus_allocated, sparkline
from ntui.core.hosts import compress_nodelist, format_index_ranges

__all__ = ["render_allocation", "render_board", "render_heatmap", "render_issues", "render_summary", "source_text"]


BAR_WIDTH = 12
_EIGHTHS = " ▏▎▍▌▋▊▉"
_TRACK = "on $panel"
#: columns before the sparkline: "  " idx(3) flag(1) " " bar " " pct(4) "  " bar " " mem(15)
#: "  " temp(5) "  " power(6) "  "
_FIXED = 2 + 3 + 1 + 1 + BAR_WIDTH + 1 + 4 + 2 + BAR_WIDTH + 1 + 15 + 2 + 5 + 2 + 6 + 2


def _bar(fraction: float | None, width: int = BAR_WIDTH, color: str = "$accent") -> Content:
    if fraction is None:
        return Content.styled(" " * width, _TRACK)
    eighths = round(min(max(fraction, 0.0), 1.0) * width * 8)
    full, rem = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[rem] if rem and full < width else "")
    return Content.styled(text.ljust(width), f"{color} {_TRACK}")


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0f}%"


def _gib(mib: float | None) -> str:
    return "?" if mib is None else f"{mib / 1024:.1f}"


def _mem_total(used: float | None, total: float) -> str:
    """A job's memory: GiB, or TiB from 10 TiB on (a 256-node job has 40 TiB of GPU memory)."""
    if total >= 10 * 1024 * 1024:
        return f"{(used or 0.0) / 1024 / 1024:.1f}/{total / 1024 / 1024:.1f} TiB"
    return f"{_gib(used)}/{_gib(total)} GiB"


def _watts(w: float) -> str:
    return f"{w / 1000:.1f} kW" if w >= 10_000 else f"{w:.0f} W"


def _mem_text(s: GpuSample) -> str:
    if s.mem_used_mib is None or s.mem_total_mib is None:
        return "n/a"
    if s.mem_total_mib >= 1024:
        return f"{_gib(s.mem_used_mib)}/{_gib(s.mem_total_mib)} GiB"
    return f"{s.mem_used_mib:.0f}/{s.mem_total_mib:.0f} MiB"




def render_allocation(expected: Mapping[str, tuple[int, ...]] | None, requested: str | None = None) -> Content:
    """The allocation block: per node, the physical GPU indices from ``scontrol show job -d``
    (``None``: unknown, scontrol gave no record)."""
    lines = [Content.styled("Allocation (scontrol show job -d)", "bold")]
    if expected is None:
        lines.append(Content.styled("  unknown: no job record", "$text-muted"))
        return Content("\n").join(lines)
    if not any(expected.values()):
        where = f" on {compress_nodelist(list(expected))}" if expected else " on any node"
        lines.append(Content.styled(f"  no GPUs allocated{where}: the job has no GPUs", "$text-muted"))
        if requested:
            lines.append(Content.styled(f"  requested: {requested}", "$text-muted"))
        return Content("\n").join(lines)
    width = max(len(n) for n in expected)
    for node, idx in expected.items():
        lines.append(
            Content.assemble(
                f"  {node.ljust(width)}  ",
                (f"{len(idx)} GPU{'s' if len(idx) != 1 else ''}", "bold"),
                (f"  IDX {format_index_ranges(idx)}" if idx else "", "$text-muted"),
            )
        )
    total = sum(len(i) for i in expected.values())
    lines.append(Content.styled(f"  {total} GPUs on {len(expected)} node(s)", "$text-muted"))
    return Content("\n").join(lines)


def source_text(board: GpuView) -> str:
    """Where the numbers come from, in words (the summary line says it)."""
    if isinstance(board, SampleBoard):
        if board.ended:
            return f"from the job's own samples, every {board.interval_s:g} s: the whole run (sampling ended)"
        return f"from the job's own samples, every {board.interval_s:g} s"
    return f"live from a watch step, every {board.interval_s:g} s"


def render_summary(board: GpuView, job_id: str, now: float | None = None) -> Content:
    """The top line: job averages over the fresh allocated GPUs, the source, and the SIMULATED label."""
    s = board.summary(now)
    parts: list[Content | tuple[str, str] | str] = [(f"job {job_id}", "bold")]
    if no_gpus_allocated(board.expected):
        visible = sum(len(g) for g in board.latest().values())
        parts.append(("  the job has no GPUs", "bold"))
        if visible:
            parts.append(f"  (nvidia-smi on its nodes shows {visible} GPU{'s' if visible != 1 else ''}, not the job's)")
        parts.append((f"  {source_text(board)}", "$text-muted"))
        return Content.assemble(*parts)
    parts.append(f"  {s.gpus} GPU{'s' if s.gpus != 1 else ''} on {s.nodes} node{'s' if s.nodes != 1 else ''}")
    parts += ["  util ", (_pct(s.util_gpu_mean), "bold")]
    if s.mem_total_mib:
        pct = 100.0 * (s.mem_used_mib or 0.0) / s.mem_total_mib
        parts += ["  memory ", (_mem_total(s.mem_used_mib, s.mem_total_mib), "bold"), f" ({pct:.0f}%)"]
    if s.power_w is not None:
        parts += ["  power ", (_watts(s.power_w), "bold")]
    parts.append((f"  {source_text(board)}", "$text-muted"))
    if s.simulated:
        parts += ["  ", (" SIMULATED nvidia-smi ", "bold $text-warning on $warning-muted")]
    return Content.assemble(*parts)


def render_issues(issues: Sequence[GpuIssue]) -> Content:
    lines = []
    for issue in issues:
        style = "$text-error" if issue.kind in ("stale", "never_reported", "no_nvidia_smi") else "$text-warning"
        lines.append(Content.assemble(("⚠ ", style), (issue.message, style)))
    return Content("\n").join(lines)


def render_board(board: GpuView, width: int, now: float | None = None) -> Content:
    """Per node a header, then per GPU: util bar, memory bar, temperature, power, utilisation sparkline."""
    issues = board.issues(now)
    idle = {(i.node, i.index) for i in issues if i.kind == "idle" and i.index is not None}
    by_node: dict[str, list[GpuIssue]] = {}
    for issue in issues:
        by_node.setdefault(issue.node, []).append(issue)
    spark_w = max(8, min(board.history, width - _FIXED))
    latest = board.latest()
    lines: list[Content] = []
    head = Content.styled(
        "  GPU  "
        + "util".ljust(BAR_WIDTH + 5)
        + "  "
        + "memory".ljust(BAR_WIDTH + 16)
        + "  "
        + " temp"
        + "  "
        + " power"
        + "  "
        + "util history",
        "$text-muted",
    )
    for node in board.nodes:
        if lines:
            lines.append(Content(""))
        gpus = latest.get(node, {})
        want = board.expected.get(node)
        title: list[Content | tuple[str, str] | str] = [(node, "bold $text-primary")]
        if want != ():  # no GPUs allocated: the issue below says so, and what nvidia-smi shows
            title.append(f"  {len(gpus)} GPU{'s' if len(gpus) != 1 else ''}")
        if want:
            title.append((f"  allocated {len(want)}: IDX {format_index_ranges(want)}", "$text-muted"))
        if (tool := board.tool(node)) != "nvidia-smi":  # another vendor's GPUs: said, the rest reads the same
            title.append((f"  {tool}", "$text-muted"))
        for issue in by_node.get(node, []):
            if issue.kind in ("stale", "never_reported", "fewer_gpus", "more_gpus", "unexpected_node",
                              "no_nvidia_smi", "ended"):
                msg = issue.message.removeprefix(f"{node}: ")
                style = ("$text-error" if issue.kind in ("stale", "never_reported", "no_nvidia_smi")
                         else "$text-muted" if issue.kind == "ended" else "$text-warning")
                title += ["  ", (msg, style)]
        lines.append(Content.assemble(*title))
        if not gpus:
            continue
        lines.append(head)
        for idx, s in gpus.items():
            flagged = (node, idx) in idle
            util_style = "bold $text-warning" if flagged else ""
            mem_frac = s.mem_fraction
            hist = board.util_series(node, idx, spark_w)
            lines.append(
                Content.assemble(
                    f"  {idx:>3}",
                    ("!" if flagged else " ", "bold $text-warning"),
                    " ",
                    _bar(None if s.util_gpu is None else s.util_gpu / 100.0, color="$success"),
                    (f" {_pct(s.util_gpu):>4}", util_style),
                    "  ",
                    _bar(mem_frac, color="$primary"),
                    f" {_mem_text(s):>15}",
                    f"  {'n/a' if s.temp_c is None else f'{s.temp_c:.0f}°C':>5}",
                    f"  {'n/a' if s.power_w is None else f'{s.power_w:.0f} W':>6}",
                    "  ",
                    (sparkline(hist), "$text-success"),
                )
            )
    return Content("\n").join(lines)


#: the heatmap's colour per utilisation level (idle .. 85 %+), then "no reading"
HEAT_STYLES = ("bold #e0503c", "#e8912d", "#d7c53c", "#6cb85a", "bold #3fd46b", "$text-muted")


def render_heatmap(board: GpuView, width: int) -> Content:
    """Many GPUs: one cell per GPU (glyph and colour: utilisation), node blocks packed per line, a legend,
    and the outliers in words (layout and outliers: :mod:`ntui.core.gpu.heatmap`)."""
    heat = heatmap(board.latest(), width)
    # the outliers first: on a small terminal the map itself scrolls
    if heat.outliers:
        lines = [Content.assemble(("⚠ ", "$text-warning"), (o, "$text-warning")) for o in heat.outliers]
    else:
        lines = [Content.styled("no outliers: every GPU busy, no node lagging", "$text-success")]
    legend: list[Content | tuple[str, str] | str] = [("utilisation ", "$text-muted")]
    for level, (_, words) in enumerate(LEVELS):
        legend += [(GLYPHS[level], HEAT_STYLES[level]), (f" {words}  ", "$text-muted")]
    legend += [(GLYPHS[-1], HEAT_STYLES[-1]), (" no reading", "$text-muted")]
    lines.append(Content.assemble(*legend))
    lines.append(Content.styled(f"{heat.nodes_per_line} nodes per line, {heat.gpus_per_node} cells (GPUs) per node",
                                "$text-muted"))
    for line in heat.lines:
        parts: list[Content | tuple[str, str] | str] = [(line.label.ljust(heat.label_width), "$text-primary")]
        for block in line.blocks:
            parts.append(" ")
            parts += [(c.glyph, HEAT_STYLES[c.level]) for c in block]
            parts.append(" " * (heat.gpus_per_node - len(block)))
        lines.append(Content.assemble(*parts))
    return Content("\n").join(lines)
