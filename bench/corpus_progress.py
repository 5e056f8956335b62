"""Score ``ntui progress`` on the training-log corpus (``tests/data/corpus/progress-logs/``): right / partly / wrong.

    python bench/corpus_progress.py [--split study|heldout|all] [--show wrong|partly|all] [--index index.yaml]

Each fixture is read as ``ntui progress FILE`` reads it (:func:`ntui.core.progress.read.read_progress`, then
:func:`ntui.core.progress.series.estimate` with no time limit). Five things are compared with the entry's
``expect``: the last step (``step``), the run's ``total``, ``finished`` (the words say "done"), the ``restarts``
and the last training ``loss`` (within 0.1 %; not judged where the entry has none; where every rank prints its own
loss, the lowest rank's, as the frameworks' rank-zero loggers report it). An entry is **right** when all
hold, **partly** when the step does (or three of the five), **wrong** otherwise, **nothing** when no step was read
from a log that prints steps. A "done" said of a run that is not finished is counted apart (``false done``): the
answer a user acts on.

The run's unit is the one the study entries of the same framework use, which is how the framework itself sizes the
run: in epochs where its run is set and shown in epochs and its step bar counts one epoch (Keras' ``Epoch 3/10``,
the YOLO family's epoch table, fastai's table, the MetricLogger's and PaddleDetection's ``Epoch: [e] [i/n]``
with no epoch count or one set in epochs, loops that print one summary line per epoch); in steps or iterations
where the framework counts them over the run (the Trainer, Lightning's bars turned into the global step, Megatron,
DeepSpeed, mmengine's iterations, fairseq's ``num_updates``, nanoGPT-style loops). A hand-written loop whose line
says both ``epoch e/E`` and ``step s/S`` of the epoch is counted in its global steps (the epochs before times an
epoch's steps, plus this epoch's; the total the epochs times an epoch's steps where both are said, else null). A
count within an epoch that is not the training's alone (Lightning 0.x's bar, which counts the validation's batches
too) is counted in epochs. The entries' ``unit`` says which applied. The run's ``total`` is what the program says of
the whole run: its steps, else its epochs times an epoch's steps where it says both (fairseq's ``max_epoch`` times
the updates of an epoch's bar where ``max_update`` is 0; DeepSpeed-Chat's epochs times its ``Total Micro Batches``
over the gradient accumulation its timer lines show), else null.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ntui.core.progress.lines import training_loss  # noqa: E402
from ntui.core.progress.read import read_progress  # noqa: E402
from ntui.core.progress.series import estimate  # noqa: E402
from tests.support.corpus import SPLITS, Entry, entries, score_table  # noqa: E402

GRADES = ("right", "partly", "wrong", "nothing")


def _same_loss(got: Any, want: Any) -> bool:
    if want is None:
        return True
    if got is None:
        return False
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return math.isclose(float(got), float(want), rel_tol=1e-3, abs_tol=1e-6)


def grade(entry: Entry) -> tuple[str, dict[str, Any], bool]:
    """The grade, what was read, and whether it said "done" of a run that is not finished."""
    want = entry.fields["expect"]
    try:
        series = read_progress(entry.path)
        guess = estimate(series, now=time.time(), time_left_s=None)
    except Exception as exc:  # a crash is a wrong answer, and the benchmark says which entry
        return "wrong", {"crashed": f"{type(exc).__name__}: {exc}"}, False
    done = "done" in guess.words
    got = {"step": guess.step, "total": guess.total, "finished": done, "restarts": len(series.restarts),
           "loss": (loss[1] if (loss := training_loss(series.metrics)) else None), "words": guess.words}
    checks = {
        "step": got["step"] == want.get("step"),
        "total": got["total"] == want.get("total"),
        "finished": done == bool(want.get("finished")),
        "restarts": got["restarts"] == (want.get("restarts") or 0),
        "loss": _same_loss(got["loss"], want.get("loss")),
    }
    false_done = done and not want.get("finished")
    if want.get("step") is not None and got["step"] is None:
        return "nothing", got, false_done
    if all(checks.values()):
        return "right", got, false_done
    return ("partly" if checks["step"] or sum(checks.values()) >= 3 else "wrong"), got, false_done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=(*SPLITS, "all"), default="all")
    ap.add_argument("--show", choices=("none", "wrong", "partly", "all"), default="none")
    ap.add_argument("--index", help="only the entries of this index file (index.yaml, index-b.yaml, ...)")
    args = ap.parse_args()
    rows = []
    for entry in entries("progress-logs"):
        if (args.split != "all" and entry.split != args.split) or (args.index and entry.index.name != args.index):
            continue
        g, got, false_done = grade(entry)
        rows.append((entry, g, got, false_done))
    shown = {"none": (), "wrong": ("wrong", "nothing"), "partly": ("wrong", "nothing", "partly"),
             "all": GRADES}[args.show]
    for entry, g, got, false_done in rows:
        if g in shown or (false_done and args.show != "none"):
            want = {k: entry.fields["expect"].get(k) for k in ("step", "total", "finished", "restarts", "loss")}
            print(f"{entry.id} {entry.split:7} {g:7} {entry.fields['framework']}: want {want}, got "
                  f"{ {k: v for k, v in got.items() if k != 'words'} } ({got.get('words', '')[:60]})")
    print("\n".join(score_table([r[0].split for r in rows], [r[1] for r in rows], GRADES, "logs", "  false done",
                                 lambda part: f"  {sum(rows[i][3] for i in part):10}")))


if __name__ == "__main__":
    main()
