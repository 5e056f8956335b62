"""General mechanisms of the progress reader, round W (issue [progress-real]): the run's total where it is said in
forms the reader missed (a notebook bar's widget repr pasted as text; a saliency trainer's args dict), a staged
pipeline's next stage as the training's end, an epoch's header between a banner's rules and the total loss under
it. Every line
here is written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import training_loss
from ntui.core.progress.runwords import declared_total, stage_start, widget_counts
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


# ---------------------------------------------------------------- a staged pipeline's next stage


def _irn_stage(total: int, last: int) -> list[str]:
    """IRN's train_cam.py: print('step:%5d/%5d' % (step - 1, max_step), 'loss:%.4f' % ..., 'imps:%.1f' % ...,
    'lr: %.4f' % ..., 'etc:%s' % ...) every 100 steps (0-based), 'validating ... ' and 'loss: %.4f' after each epoch,
    under run_sample.py's pyutils.Timer('step.train_cam:') (its start: the message and time.ctime())."""
    lines = ["step.train_cam: Wed Apr  2 08:00:01 2025", "Epoch 1/2"]
    lines += [f"step:{s:5d}/{total:5d} loss:{0.3 - s / 10000:.4f} imps:51.2 lr: 0.0100 etc:Wed Apr  2 08:30:00 2025"
              for s in range(0, last + 1, 100)]
    return [*lines, "validating ... loss: 0.2200"]


def test_a_stage_start_is_read_as_such() -> None:
    """pyutils.Timer's start message: 'step.<stage>:' and time.ctime() (a day under 10 padded with a space); a
    line of the loop's own ('step: 100/ 900 ...') is none."""
    assert stage_start("step.make_cam: Wed Apr  2 08:31:10 2025")
    assert stage_start("step.eval_cam: Thu Apr 17 09:00:00 2025")
    assert not stage_start("step:  100/  900 loss:0.2500 imps:50.0 lr: 0.0100 etc:Wed Apr  2 08:30:00 2025")
    assert not stage_start("step.make_cam: started")


def test_the_next_stage_after_the_training_reaching_its_total_is_its_end(tmp_path: Path) -> None:
    """The training stage's last line within a print's interval of its total (1300 of 1366, 0-based), then the next
    stage's start: the training is over."""
    series, words = _read(tmp_path, [*_irn_stage(1366, 1300), "step.make_cam: Wed Apr  2 08:31:10 2025"])
    assert series.step == 1300 and series.run_total == 1366
    assert "done" in words


def test_the_next_stage_said_short_of_the_total_is_no_end(tmp_path: Path) -> None:
    """A stage's start after a training that stopped well short of its total (an error, a cut) says nothing of its
    end."""
    _, words = _read(tmp_path, [*_irn_stage(1366, 700), "step.make_cam: Wed Apr  2 08:31:10 2025"])
    assert "done" not in words


# ---------------------------------------------------------------- an epoch's header between a banner's rules


def _banner_epochs(epochs: int) -> list[str]:
    """A hand-written YOLOv3 loop (PyTorch-YOLOv3's train.py as its users change it): its argparse Namespace
    printed first, then each epoch print('*' * 12 + 'epoch: ' + str(epoch) + ' ' + '*' * 15) (from 0) and its block of
    metrics: print('total loss:', loss), the parts, 'recall:' and 'precision:'."""
    lines = ["Namespace(batch_size=4, data_config='config/boxes.data', epochs=80, img_size=320, lr=0.001, n_cpu=2)"]
    for e in range(epochs):
        lines += ["*" * 12 + f"epoch: {e} " + "*" * 15, f"total loss: {900.0 - e * 10.5}",
                  "loss1:30.25, loss2: 310.5, loss3: 559.25", "x loss: 0.3125", "conf loss: 12.5", "recall: 0.0",
                  "precision: 0.0"]
    return lines


def test_an_epoch_header_between_rules_counts_the_epochs(tmp_path: Path) -> None:
    """The banner's epoch is the run's epoch (the Namespace's epochs its total), as a bare "epoch: N" header."""
    series, words = _read(tmp_path, _banner_epochs(6))
    assert series.step == 5 and series.run_total == 80
    assert "of 80" in words


def test_the_total_loss_under_the_header_is_the_epochs_loss(tmp_path: Path) -> None:
    """'total loss: x' alone on its line under the epoch's header: the run's loss (the sum, not a part's)."""
    series, _ = _read(tmp_path, _banner_epochs(4))
    said = training_loss(series.metrics)
    assert said is not None and said[1] == 868.5


# ---------------------------------------------------------------- Lightning's ModelCheckpoint lines, no bar drawn


def _checkpoint_lines(per: int, epochs: range) -> list[str]:
    """lightning/pytorch/callbacks/model_checkpoint.py, ModelCheckpoint(verbose=True): f"Epoch {epoch:d}, global step
    {step:d}: {monitor!r} reached {current:0.5f} (best {best:0.5f}), saving model to {filepath!r} as top {k}", or
    f"Epoch {epoch:d}, global step {step:d}: {monitor!r} was not in top {save_top_k}", once an epoch."""
    lines = []
    for e in epochs:
        step = (e + 1) * per
        lines.append(f"Epoch {e}, global step {step}: 'valid/mae' reached {0.5 - e / 100:0.5f} (best "
                     f"{0.5 - e / 100:0.5f}), saving model to 'ckpt/epoch={e}-step={step}.ckpt' as top 2"
                     if e % 3 else f"Epoch {e}, global step {step}: 'valid/mae' was not in top 2")
    return lines


def test_the_checkpoint_lines_say_the_global_step(tmp_path: Path) -> None:
    """A fit with the progress bar off: its ModelCheckpoint lines are its only progress; the step is the global
    step of the last, either wording."""
    series, _ = _read(tmp_path, _checkpoint_lines(25, range(4)))
    assert series.step == 100
    series, _ = _read(tmp_path, _checkpoint_lines(25, range(5)))
    assert series.step == 125


def test_the_checkpoint_lines_and_the_max_epochs_give_the_run_total(tmp_path: Path) -> None:
    """Consecutive epochs' lines a like number of steps apart say an epoch's steps; fit_loop's "`Trainer.fit`
    stopped: `max_epochs=8` reached." says the epochs and the end: the run's total is their product."""
    lines = [*_checkpoint_lines(25, range(8)), "`Trainer.fit` stopped: `max_epochs=8` reached."]
    series, words = _read(tmp_path, lines)
    assert series.step == 200 and series.run_total == 200
    assert "done" in words


def test_checkpoints_every_n_steps_within_an_epoch_say_no_epoch_length(tmp_path: Path) -> None:
    """ModelCheckpoint(every_n_train_steps=N): its lines name the same epoch at several steps: no epoch's steps."""
    lines = [f"Epoch 0, global step {s}: 'train_loss' was not in top 1" for s in (50, 100, 150)]
    series, _ = _read(tmp_path, [*lines, "`Trainer.fit` stopped: `max_epochs=3` reached."])
    assert series.step == 150 and series.run_total is None
