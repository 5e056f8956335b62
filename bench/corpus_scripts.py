"""Score ``ntui import`` and ``ntui check`` on the sbatch-script corpus (``tests/data/corpus/sbatch-scripts/``).

    python bench/corpus_scripts.py [--split study|heldout|spent|all] [--show wrong|partly|all] [--index FILE]

Imports: each fixture is read and imported as ``ntui import`` does (:func:`~ntui.core.compose.scriptread.
read_script`, :func:`~ntui.core.compose.scriptimport.import_script`). An importable entry is **right** when the
preset has its launcher, its node count (where the script says one) and its program (the file's name, or
``-m module``), **partly** when the launcher alone is right, **wrong** otherwise; **refused** when ntui refused a
script that could be imported; **crash** when the reader raised anything but its own error. An entry the corpus
marks not importable is right when refused.

Traps: an expected trap is **found** when a finding of ``ntui check`` stands at its line (a refused import
keeps the findings checking made before it: ``ScriptError.findings``); a finding of an error or warning on a
script whose entry expects no trap at all is counted as a **possible false alarm** (the table cannot say which
rule should have fired: the corpus names traps in its own words, the rules in theirs). **Presets refused**:
imports whose preset ntui's own rules refuse (an error of ``ntui check`` on the preset).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ntui.core.compose.scriptimport import import_script  # noqa: E402
from ntui.core.compose.scriptread import ScriptError, read_script  # noqa: E402
from ntui.core.compose.spec import validate  # noqa: E402
from tests.support.corpus import SPLITS, Entry, entries, score_table  # noqa: E402

GRADES = ("right", "partly", "wrong", "refused", "crash")
#: Entries whose imported preset ntui's own rules refuse (the job would not be submitted as imported).
INVALID: set[str] = set()
#: The corpus' launcher names that are one of ntui's under another name (Lightning under srun is srun's launch).
SAME_LAUNCHER = {"lightning-srun": "srun"}


def _program(preset: dict[str, Any]) -> str | None:
    script = preset.get("script")
    if isinstance(script, str) and script:
        return os.path.basename(script)
    module = preset.get("module") or (preset.get("launcher") or {}).get("module")
    return f"-m {module}" if module else None


def grade(entry: Entry) -> tuple[str, str, int, int, int]:
    """The import's grade and words; traps found, traps expected, possible false alarms."""
    want = entry.fields["expect"]
    traps = [t for t in entry.fields.get("traps") or [] if t.get("id") != "none-of-these" and t.get("line")]
    try:
        facts = read_script(entry.path.read_text(), str(entry.path))
        imported = import_script(facts)
    except ScriptError as exc:  # the import refused; what checking found before it still counts
        g = "right" if not want.get("importable") else "refused"
        lines = {f.line for f in exc.findings}
        return (g, str(exc)[:120], sum(1 for t in traps if t["line"] in lines), len(traps),
                len(exc.findings) if not traps else 0)
    except Exception as exc:  # a traceback for the user: the worst answer
        return "crash", f"{type(exc).__name__}: {exc}"[:120], 0, len(traps), 0
    lines = {f.line for f in imported.findings}
    spec, problems = validate(imported.loaded(f"{entry.path} (imported)"))
    if spec is None or any(p.is_error for p in problems):
        INVALID.add(entry.id)
    found = sum(1 for t in traps if t["line"] in lines)
    alarms = len(imported.findings) if not traps else 0
    if not want.get("importable"):
        return "wrong", "imported a script the corpus says cannot be", found, len(traps), alarms
    preset = imported.preset
    launcher = (preset.get("launcher") or {}).get("type")
    nodes = (preset.get("sbatch") or {}).get("nodes")
    program = _program(preset)
    want_program = want.get("program")
    want_program = want_program if not want_program or want_program.startswith("-m ") else os.path.basename(
        want_program)
    ok_launcher = launcher == SAME_LAUNCHER.get(want.get("launcher"), want.get("launcher"))
    ok_nodes = want.get("nodes") is None or nodes == want.get("nodes")
    ok_program = program == want_program
    said = f"launcher {launcher}, nodes {nodes}, program {program}"
    if ok_launcher and ok_nodes and ok_program:
        return "right", said, found, len(traps), alarms
    return ("partly" if ok_launcher else "wrong"), said, found, len(traps), alarms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=(*SPLITS, "all"), default="all")
    ap.add_argument("--show", choices=("none", "wrong", "partly", "all"), default="none")
    ap.add_argument("--index", metavar="FILE", help="only the entries of this index file (index.yaml, index-b.yaml); "
                    "a helper that tunes reads only its own index's entries")
    args = ap.parse_args()
    rows = [(e, *grade(e)) for e in entries("sbatch-scripts") if args.split in ("all", e.split)
            and args.index in (None, e.index.name)]
    shown = {"none": (), "wrong": ("wrong", "refused", "crash"), "partly": ("wrong", "refused", "crash", "partly"),
             "all": GRADES}[args.show]
    for e, g, said, *_ in rows:
        if g in shown:
            want = e.fields["expect"]
            print(f"{e.id} {e.split:7} {g:7} want {want.get('launcher')} x{want.get('nodes')} "
                  f"{want.get('program')}: {said}")
    def more(part: list[int]) -> str:
        found, expected, alarms = (sum(rows[i][k] for i in part) for k in (3, 4, 5))
        importable = [rows[i] for i in part if rows[i][0].fields["expect"].get("importable")]
        right_imports = sum(r[1] == "right" for r in importable)
        invalid = sum(rows[i][0].id in INVALID for i in part)
        return (f"  {right_imports:5} of {len(importable):<4}      {found:5} of {expected:<4} {alarms:8}"
                f"   {invalid:8}")

    print("\n".join(score_table([r[0].split for r in rows], [r[1] for r in rows], GRADES, "scripts",
                                 "  importable right  traps found  possible false alarms  presets refused", more)))


if __name__ == "__main__":
    main()
