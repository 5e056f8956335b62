"""Score ``ntui triage`` on the failure-log corpus (``tests/data/corpus/failure-logs/``): right / partly / wrong.

    python bench/corpus_triage.py [--split study|heldout|all] [--show wrong|partly|all] [--json]

Each entry's fixture goes through the same engine as ``ntui triage`` (:func:`ntui.core.logs.joblogs.files_verdict`,
the launcher read off the logs). An entry is

* **right** when the verdict's headline says what the thread settled (one of its ``expect_any`` words) and names
  the rank that failed first (when the entry knows it: ``first_rank``);
* **partly** when one of the two holds;
* **wrong** otherwise; "no failure found" on a failed job is counted apart (``none``), as the worst wrong.

The held-out part (every fifth entry) is scored apart: no change may be tuned on it. The table is the issue's
figure of merit; the per-entry lines say what the verdict was.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ntui.core.logs.joblogs import files_verdict  # noqa: E402
from tests.support.corpus import SPLITS, Entry, entries, score_table  # noqa: E402

GRADES = ("right", "partly", "wrong", "none")


def _words(text: str) -> str:
    return text.lower().replace("-", " ")


def grade(entry: Entry) -> tuple[str, str, int | None]:
    """The entry's grade, the verdict's line and the rank it named."""
    try:
        verdict, _ = files_verdict(entry.files)
    except Exception as exc:  # a crash is a wrong answer, and the benchmark says which entry
        return "wrong", f"crashed: {type(exc).__name__}: {exc}", None
    line = verdict.line
    if not verdict.failed and entry.fields["cause_kind"] != "none_visible":
        return "none", line or "no failure found", None
    said = any(_words(word) in _words(line) for word in entry.fields["expect_any"])  # out-of-memory: out of memory
    first = entry.fields.get("first_rank")
    ranked = first is None or verdict.rank == first
    if said and ranked:
        return "right", line, verdict.rank
    return ("partly" if said or (ranked and first is not None) else "wrong"), line, verdict.rank


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=(*SPLITS, "all"), default="all")
    ap.add_argument("--show", choices=("none", "wrong", "partly", "all"), default="none",
                    help="list the entries graded so (wrong: wrong and none; partly: those and partly)")
    ap.add_argument("--json", action="store_true", help="every entry's grade as JSON")
    args = ap.parse_args()
    rows = []
    for entry in entries("failure-logs"):
        if args.split != "all" and entry.split != args.split:
            continue
        g, line, rank = grade(entry)
        rows.append({"id": entry.id, "split": entry.split, "grade": g, "kind": entry.fields["cause_kind"],
                     "first_rank": entry.fields.get("first_rank"), "rank": rank, "line": line})
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    shown = {"none": (), "wrong": ("wrong", "none"), "partly": ("wrong", "none", "partly"), "all": GRADES}[args.show]
    for r in rows:
        if r["grade"] in shown:
            print(f"{r['id']:7} {r['split']:7} {r['grade']:6} want {r['kind']} rank {r['first_rank']}, "
                  f"got rank {r['rank']}: {r['line'][:110]}")
    print("\n".join(score_table([str(r["split"]) for r in rows], [str(r["grade"]) for r in rows], GRADES, "logs")))


if __name__ == "__main__":
    main()
