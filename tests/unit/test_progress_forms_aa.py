"""General mechanisms of the progress reader, round W (issue [progress-real]): the run's total where it is said in
forms the reader missed (a notebook bar's widget repr pasted as text; a saliency trainer's args dict). Every line
here is written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.runwords import declared_total, widget_counts
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- a notebook bar's widget repr


def _widget(desc: str, total: int) -> str:
    """tqdm.notebook's bar as text where no frontend drew it: the repr of its HBox (status_printer's FloatProgress,
    max the bar's total, description its desc), cut at the display's width."""
    return (f"HBox(children=(FloatProgress(value=0.0, description='{desc}', max={total}.0, "
            f"style=ProgressStyle(description_width='i\u2026")


def test_a_widget_repr_says_the_epochs_or_an_epochs_steps() -> None:
    """transformers 3.x Trainer.train(): trange(..., desc="Epoch") over the run's epochs, tqdm(train_dataloader,
    desc="Iteration") over an epoch's steps, each a FloatProgress whose max is its total; another bar's says
    neither."""
    assert widget_counts(_widget("Epoch", 3)) == (3, None)
    assert widget_counts(_widget("Iteration", 4210)) == (None, 4210)
    assert widget_counts(_widget("Evaluating", 310)) == (None, None)
    assert widget_counts("FloatProgress is a widget") == (None, None)


def test_the_trainer_widgets_and_its_log_dicts_give_the_run_total(tmp_path: Path) -> None:
    """The Trainer 3.x in a notebook: the two widgets, then its log() dicts every logging_steps ('{"loss": ...,
    "learning_rate": ..., "epoch": ..., "step": N}', json.dumps of logs): the run's total is the epochs times an
    epoch's steps (3 x 500), as the bench's convention counts the Trainer in steps."""
    lines = [_widget("Epoch", 3), _widget("Iteration", 500)]
    lines += [f'{{"loss": {2.5 - s / 1000}, "learning_rate": 4e-05, "epoch": {s / 500}, "step": {s}}}'
              for s in range(100, 700, 100)]
    series, words = _read(tmp_path, lines)
    assert series.step == 600 and series.run_total == 1500
    assert "of 1,500" in words


# ---------------------------------------------------------------- a saliency trainer's args dict


def test_the_args_dict_of_an_r3net_style_trainer_says_its_iterations() -> None:
    """R3Net's train.py (and the saliency trainers built on it): args = {'iter_num': N, 'train_batch_size': B,
    'last_iter': 0, 'lr': ..., ...}, printed or written first: 'iter_num' beside 'last_iter' is the run's total; a
    loop's own dict of its iteration now ('iter_num' with no 'last_iter') is not."""
    assert declared_total("{'iter_num': 8000, 'train_batch_size': 4, 'last_iter': 0, 'lr': 0.002, "
                          "'lr_decay': 0.9, 'snapshot': ''}") == 8000
    assert declared_total("{'iter_num': 350, 'loss': 0.41, 'lr': 0.002}") is None


def test_the_resumed_trainer_reads_against_its_new_args(tmp_path: Path) -> None:
    """R3Net's loop: '[iter %d], [total loss %.5f], [loss0 %.5f], [loss1 %.5f], [lr %.13f]' each iteration; a
    process resumed from a snapshot prints its args again (a larger 'iter_num') and counts from 1: one restart, the
    run's total the new dict's."""
    def its(iters: range) -> list[str]:
        return [f"[iter {i}], [total loss {0.7 - i / 10000:.5f}],[loss0 0.30000],[loss1 0.30000],"
                f"[lr 0.0020000000000] " for i in iters]
    lines = ["{'iter_num': 400, 'train_batch_size': 4, 'last_iter': 0, 'lr': 0.002, 'snapshot': ''}", ""]
    lines += its(range(1, 401))
    lines += ["{'iter_num': 900, 'train_batch_size': 4, 'last_iter': 0, 'lr': 0.002, 'snapshot': '400'}", ""]
    lines += its(range(1, 51))
    series, _ = _read(tmp_path, lines)
    assert series.step == 50 and series.run_total == 900 and len(series.restarts) == 1
