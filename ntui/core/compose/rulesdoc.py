"""The rule table's documents: ``docs/rules.md`` (:func:`markdown`) and the README's list of what the generated
script guarantees (:func:`readme_section`), each made from the table's rows (``python -m ntui.core.compose.rules
--markdown`` or ``--readme`` writes them)."""

from __future__ import annotations

from collections.abc import Sequence

from ntui.core.compose.draft import Rule
from ntui.core.problems import Severity

__all__ = ["README_BEGIN", "README_END", "markdown", "readme_section"]

README_BEGIN = "<!-- rules:begin (generated: python -m ntui.core.compose.rules --readme) -->"
README_END = "<!-- rules:end -->"


def markdown(rules: Sequence[Rule]) -> str:
    """``docs/rules.md``: every rule with its id, kind, keys and source."""
    lines = [
        "# Rules for generated scripts",
        "",
        "Generated from `ntui/core/compose/rules.py` by `python -m ntui.core.compose.rules --markdown`; do not edit.",
        "Errors stop `check`, `render` and `submit`; warnings are shown; guarantees hold for every",
        "script ntui renders. Each problem ends with its rule id, e.g. `(G1)`. A machine's own limits (a node's GPUs",
        "and CPUs, a QOS policy) are not ntui's: a site layer says them, with its own ids (README \"Site layer\";",
        "`sites/nersc/site.yaml` for Perlmutter).",
        "",
        "| Id | Kind | What | Applies to | Source |",
        "|---|---|---|---|---|",
    ]
    for r in rules:
        keys = ", ".join(f"`{k}`" for k in r.where)
        kind = r.kind + (" (blocks submit)" if r.blocks_submit else "")
        lines.append(f"| {r.id} | {kind} | {r.summary.replace('|', '/')} | {keys} | {r.source} |")
    return "\n".join(lines) + "\n"


def readme_section(rules: Sequence[Rule]) -> str:
    """The bullet list under the README's "What the generated script guarantees"."""
    lines = [README_BEGIN, ""]
    for r in rules:
        tag = "" if r.kind == "guarantee" else (" *(refused)*" if r.severity is Severity.ERROR else " *(warning)*")
        lines.append(f"- **{r.id}**{tag} {r.summary}")
    lines += ["", "Full table with sources: [docs/rules.md](docs/rules.md).", README_END]
    return "\n".join(lines)
