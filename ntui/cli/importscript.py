"""``ntui import SCRIPT [-o PRESET]`` and ``ntui check SCRIPT``: a hand-written sbatch script, read (never run),
checked against the rules, imported into a preset (:mod:`ntui.core.compose.scriptimport`).

``check`` prints every finding at its line (the H rules on the script as written, then the imported preset's own
problems at the script lines they came from); ``import`` writes the preset (stdout, or ``-o``: a new file,
atomically; an existing one is refused), its header listing what was fixed and what was not imported. Exit codes:
0 ok (warnings allowed); 2 errors in the script, or a file that cannot be imported (said with its line).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS, print_problems
from ntui.core.compose.presets import current_site
from ntui.core.compose.scriptimport import Imported, import_script
from ntui.core.compose.scriptread import ScriptError, ScriptFacts, read_script
from ntui.core.compose.spec import JobSpec, validate
from ntui.core.paths import atomic_write
from ntui.core.problems import PresetError, Problem, Source

__all__ = ["check_script_file", "configure", "looks_like_script"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    p.add_argument("script", metavar="SCRIPT", help="an sbatch script (not a preset)")
    p.add_argument("-o", "--output", metavar="PRESET",
                   help="write the preset here (a new file), not to stdout ('-': stdout, as without -o)")
    p.set_defaults(func=cmd_import)


def looks_like_script(path: str) -> bool:
    """A file that is not a preset: a file whose name does not end in .yaml or .yml (presets do; a batch script,
    or anything else, is read as a script and said to be one or not)."""
    p = Path(path)
    return p.suffix not in (".yaml", ".yml") and p.is_file()


def _read(path: str) -> tuple[ScriptFacts | None, Imported | None, list[Problem]]:
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        return None, None, [Problem(Source(path), "", f"cannot read: {exc.strerror or exc}")]
    except UnicodeDecodeError as exc:
        return None, None, [ScriptError(path, text_line(exc), "not UTF-8 text: not a batch script").problem]
    try:
        facts = read_script(text, path)
        imported = import_script(facts, _cluster_node_gpus)
    except ScriptError as exc:  # the refusal first, then what checking found before it (its traps are still there)
        return None, None, [exc.problem, *(f.problem(path) for f in exc.findings)]
    except RecursionError:
        return None, None, [Problem(Source(path), "", "nested too deeply to read (bash -c inside bash -c ...)")]
    return facts, imported, []


def _cluster_node_gpus(partition: str | None) -> int | None:
    """The GPUs a node of ``partition`` (None: the default one) has, from one ``scontrol show partition``: its
    TRES' gres/gpu over its nodes, where that divides evenly; None without Slurm, or where the cluster's nodes
    differ or have none."""
    import re

    from ntui.cli.slurm import cli_runner
    from ntui.core.compose.sitecheck import cluster_limits

    parts = cluster_limits(cli_runner())
    part = next((p for p in parts if (p.name == partition if partition else p.default)), None)
    if part is None or not part.total_nodes:
        return None
    total = re.search(r"(?:^|,)gres/gpu=([0-9]+)(?:,|$)", part.tres)  # the untyped count is every type's
    gpus = int(total.group(1)) if total else 0
    return gpus // part.total_nodes if gpus and gpus % part.total_nodes == 0 else None


def text_line(exc: UnicodeDecodeError) -> int:
    return exc.object[:exc.start].count(b"\n") + 1 if isinstance(exc.object, bytes) else 0


def _validate(imported: Imported, path: str) -> tuple[JobSpec | None, list[Problem]]:
    """The imported preset checked as ntui checks a preset, with the site's rules where a site is in effect (a
    node's GPUs, the QOS: the machine's facts are the site's, said only to its users). Its defaults and locks are
    not merged under the script: they are what a preset starts from, not what the script says."""
    loaded = imported.loaded(path)
    try:
        site = current_site()
    except PresetError as exc:  # a damaged site.yaml: said, and the script checked without it
        print_problems(exc.problems)
        site = None
    if site is not None:
        loaded.site = replace(site, locked={})
    return validate(loaded)


def _problems(path: str, imported: Imported) -> list[Problem]:
    """The H findings and the imported preset's problems (the site's rules among them), at the script's lines."""
    spec, preset_problems = _validate(imported, path + " (imported)")
    found = [f.problem(path) for f in imported.findings]
    said = {(p.rule, p.source.line) for p in found}
    for p in imported.problems_at_script_lines(preset_problems, path):
        if (p.rule, p.source.line) not in said:
            found.append(p)
    return sorted(found, key=lambda p: (p.source.line, not p.is_error))


def check_script_file(path: str) -> int:
    """``ntui check SCRIPT``."""
    facts, imported, problems = _read(path)
    if imported is None:
        print_problems(problems)
        return EXIT_PROBLEMS
    found = _problems(path, imported)
    print_problems(found)
    errors = sum(1 for p in found if p.is_error)
    warnings = len(found) - errors
    if errors:
        print(f"{errors} error(s), {warnings} warning(s); `ntui import {path}` writes a preset with the fixes",
              file=sys.stderr)
        return EXIT_PROBLEMS
    print(f"ok: {path} ({imported.preset['launcher']['type']}, {imported.preset['sbatch'].get('nodes', 1)} "
          f"node(s))" + (f", {warnings} warning(s)" if warnings else ""))
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    if args.output == "-":  # the usual word for standard output, never a file named '-'
        args.output = None
    facts, imported, problems = _read(args.script)
    if imported is None:
        print_problems(problems)
        return EXIT_PROBLEMS
    spec, preset_problems = _validate(imported, args.output or args.script + " (imported)")
    print_problems(imported.problems_at_script_lines(preset_problems, args.script))
    for fix in imported.fixes:
        print(f"fixed: {fix}", file=sys.stderr)
    for note in imported.notes:
        print(f"to check: {note}", file=sys.stderr)
    for line, why in imported.not_imported:
        print(f"not imported: {args.script}:{line}: {why}", file=sys.stderr)
    if args.output:
        out = Path(args.output)
        if out.exists():
            print(f"ntui: {out} exists; choose another name (an import never replaces a file)", file=sys.stderr)
            return EXIT_PROBLEMS
        atomic_write(out, imported.yaml_text, mode=0o644)
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(imported.yaml_text)
    return EXIT_PROBLEMS if spec is None else EXIT_OK
