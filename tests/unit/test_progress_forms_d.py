"""General mechanisms of the progress reader, round d (issue [progress-real]): a log pasted through ``cat -v``
(its carriage returns as "^M"), a run of one epoch whose bar names it, an epoch's counter before a block's header,
a duration in Composer's time string. Every line here is written for the test, in the layouts programs use, not
taken from any."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.read import unescape
from ntui.core.progress.runwords import declared_epochs, declared_steps_flag, declared_total, eval_start
from tests.support.progress_logs import read_lines as _read


def test_caret_notation_is_what_it_stands_for() -> None:
    assert unescape("a^Mb^[[Ac") == "a\rb\x1b[Ac"
    assert unescape("pattern '^[a-z]+' and ^Z") == "pattern '^[a-z]+' and ^Z"  # a class, another control: as is


def test_a_log_pasted_through_cat_v_gives_its_dicts_loss(tmp_path: Path) -> None:
    lines = []
    for n in (40, 41, 42):
        lines.append(f"^M  3%|3         | {n - 1}/1200 [00:{n}<05:00,  3.10it/s]^M  3%|3         | {n}/1200 "
                     f"[00:{n}<05:00,  3.10it/s]^M{' ' * 30}^M{{'loss': 2.{n}, 'learning_rate': 1e-05, 'epoch': 0.1}}")
    lines.append("^M  3%|3         | 42/1200 [00:43<05:00,  3.10it/s]"
                 "^M  3%|3         | 43/1200 [00:43<05:00,  3.10it/s]")
    series, words = _read(tmp_path, lines)
    assert series.samples[-1].step == 43
    assert training_loss(series.metrics) == ("loss", 2.42)
    assert "of 1,200" in words and "done" not in words


@pytest.mark.parametrize(("epochs", "step", "total"), [(1, 250, 1000), (3, 2, 3)])
def test_a_bar_of_the_runs_only_epoch_is_the_runs(epochs: int, step: int, total: int) -> None:
    point = parse_line(f"Train epoch [2/{epochs}]:  25%|##5       | 250/1000 [10:00<30:00,  2.40s/it, pg=-0.1, kl=0.01]"
                       if epochs > 1 else
                       "Train epoch [1/1]:  25%|##5       | 250/1000 [10:00<30:00,  2.40s/it, pg=-0.1, kl=0.01]")
    assert point is not None
    assert (point.step, point.total, point.counts_epochs) == (step, total, epochs > 1)


def test_a_one_epoch_bar_runs_to_its_total_not_done_before(tmp_path: Path) -> None:
    lines = [f"Train epoch [1/1]:  {n // 10}%|#         | {n}/1000 [0{n // 100}:00<30:00,  2.40s/it, pg=-0.1]"
             for n in (100, 200, 300)]
    series, words = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.total) == (300, 1000)
    assert "done" not in words


def test_a_block_header_with_its_epoch_counts_the_runs_batches(tmp_path: Path) -> None:
    point = parse_line("[epoch=3][batch=15/50]:")
    assert point is not None and (point.step, point.total, point.epoch, point.per_epoch) == (15, 50, 3.0, True)
    assert parse_line("[epoch=3][loss=0.5]:") is None  # no counter of the run's
    lines = ["max_duration: 3ep"]
    for epoch in (1, 2):
        for batch in (25, 50):
            lines += [f"[epoch={epoch}][batch={batch}/50]:", f"\t Train loss/train/total: {epoch}.{batch}",
                      "\t Train throughput/batches_per_sec: 0.20"]
    lines += ["[epoch=3][batch=25/50]:", "\t Train loss/train/total: 0.75"]
    series, words = _read(tmp_path, lines)
    assert (series.samples[-1].step if series.samples else None, series.restarts) == (125, [])
    assert "of 150" in words and "done" not in words
    assert training_loss(series.metrics) == ("loss/train/total", 0.75)


@pytest.mark.parametrize(("line", "epochs", "total"), [
    ("max_duration: 4ep", 4, None),
    ("max_duration: '12ep'", 12, None),
    ("max_duration: 2400ba", None, 2400),
    ("max_duration: 1000000tok", None, None),  # (tokens are no step the lines count)
])
def test_composer_duration(line: str, epochs: int | None, total: int | None) -> None:
    assert (declared_epochs(line), declared_total(line)) == (epochs, total)


@pytest.mark.parametrize(("line", "starts"), [
    ("Running evaluation step...   ", True),
    ("Starting validation", True),
    ("Start evaluation.", True),
    ("Running evaluation on dev", True),
    ("Running evaluation done", False),
    ("Evaluation finished", False),
    ("Running evaluation at step 100 took 3 s", False),
    ("***** Running Evaluation *****", True),
])
def test_an_evaluations_start_in_words(line: str, starts: bool) -> None:
    assert eval_start(line) is starts


def test_an_evaluation_before_training_under_a_loggers_header_is_no_restart(tmp_path: Path) -> None:
    head = "[2031-03-09 10:00:0{}] [INFO] [trainer.core.evaluate:88] [PID:4242] [RANK:0] "
    lines = [head.format(1) + "Running evaluation step...     "]
    lines += [f"{n * 25:3d}%|##        | {n}/4 [00:0{n}<00:03,  1.90it/s]" for n in range(5)]
    lines.append("{'eval_loss': 1.5, 'eval_runtime': 2.1}")
    lines += [f"  {n}%|          | {n}/300 [00:{10 + n}<10:00,  2.10s/it]" for n in range(0, 9, 2)]
    lines.append("{'loss': 1.25, 'learning_rate': 0.0002, 'epoch': 0.03}")
    series, words = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.total, series.restarts) == (8, 300, [])
    assert training_loss(series.metrics) == ("loss", 1.25)
    assert "done" not in words


@pytest.mark.parametrize(("line", "epoch", "epochs"), [
    ("======================= Epoch  12 / 90 =======================", 12, 90),
    ("--- Epoch 3/20 ---", 3, 20),
    ("*** Epoch 3/20 done ***", None, None),
])
def test_an_epoch_banner_between_rules(line: str, epoch: int | None, epochs: int | None) -> None:
    point = parse_line(line)
    got = (point.step, point.total, point.counts_epochs) if point is not None else (None, None, None)
    assert got == ((epoch, epochs, True) if epoch is not None else (None, None, None))


def test_a_row_of_fields_after_an_epoch_banner_gives_the_loss(tmp_path: Path) -> None:
    lines = []
    for epoch in (7, 8):
        lines.append(f"=========== Epoch  {epoch} / 60 ===========")
        for pct, loss in ((0.5, 3.25), (50.1, 2.75)):
            lines.append(f"| Progress [##        ][{pct:5.2f}%] | LR 0.000500 | Loss   {loss:.4f} (  2.9000) |")
        lines += ["", "- Average Loss: 2.900", "- Epoch Time: 0:03:10"]
    lines.append("=========== Epoch  9 / 60 ===========")
    lines.append("| Progress [          ][ 0.50%] | LR 0.000500 | Loss   2.1250 (  2.1250) |")
    series, words = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.total, series.restarts) == (9, 60, [])
    assert training_loss(series.metrics) == ("loss", 2.125)
    assert "done" not in words


def test_a_bar_whose_postfix_counts_updates_gives_the_runs_step() -> None:
    point = parse_line("| epoch 003:  10%| | 120/1200 [01:00<09:00,  2.00it/s, loss=4.5, ppl=22.6, wpb=4000, "
                       "num_updates=2530, lr=0.0005, ")
    assert point is not None
    assert (point.step, point.total, point.batches) == (2530, None, 1200)
    assert "num_updates" not in point.metrics and point.metrics["loss"] == 4.5
    lightning = parse_line("Epoch 0:   1%|          | 40/6000 [01:00<2:29:00,  1.50s/it, loss=3.1, global_step=39.0]")
    assert lightning is not None and (lightning.step, lightning.total) == (40, 6000)  # (its bar is the run's)


def test_ranks_bars_out_of_step_with_one_updates_counter_are_no_restarts(tmp_path: Path) -> None:
    lines = []
    for update in (3, 6, 9):
        for rank_lag in (0, 1, 0, 2):  # four processes, each its own bar, a batch or two apart
            n = update - rank_lag
            lines.append(f"| epoch 001:   0%| | {n}/5000 [00:{10 + n}<4:00:00,  2.60s/it, loss=1{update}.5, "
                         f"num_updates={update}, lr=1e-06, ")
    series, words = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.run_total, series.restarts) == (9, None, [])
    assert training_loss(series.metrics) == ("loss", 19.5)
    assert "done" not in words


def test_a_loggers_line_glued_after_a_bar_counts_the_run() -> None:
    bar = "Iteration:  30%|###       | 600/2000 [01:30<03:30,  6.60it/s]"
    point = parse_line(bar + "LOG 2031-03-09 10:00:01.500000 - Training Epoch: 1 Training Iteration: 2601 "
                       "step_loss : 0.4375 learning_rate : 1e-05     ")
    assert point is not None and (point.step, point.total, point.epoch) == (2601, None, 1.0)
    assert training_loss(point.metrics) == ("step_loss", 0.4375)
    plain = parse_line(bar + "LOG 2031-03-09 10:00:01.500000 - saving a checkpoint")
    assert plain is not None and (plain.format, plain.step, plain.total) == ("tqdm", 600, 2000)


@pytest.mark.parametrize(("line", "total"), [
    ("LOG 2031-03-09 10:00:00.100000 - PARAMETER steps : 4000 ", 4000),
    ("steps: 900", 900),
    ("--steps 200", 200),
    ("LOG 2031-03-09 10:00:00.100000 - PARAMETER warmup_steps : 400", None),
    ("scheduler steps: 900 done, lr 0.1", None),
])
def test_a_parameter_steps_as_a_lines_message(line: str, total: int | None) -> None:
    assert declared_steps_flag(line) == total


def test_a_glued_loggers_line_with_its_parameters_total(tmp_path: Path) -> None:
    lines = ["LOG 2031-03-09 10:00:00.100000 - PARAMETER steps : 4000 "]
    for epoch, base in ((0, 0), (1, 2000)):
        lines.append(f"Epoch:  {epoch * 50}%|   | {epoch}/2 [00:00<?, ?it/s]")
        for n in (500, 1000):
            lines.append(f"Iteration:  {n // 20}%|##   | {n}/2000 [01:{n // 100:02d}<03:30,  6.60it/s]LOG "
                         f"2031-03-09 10:0{epoch}:{n // 100:02d}.500000 - Training Epoch: {epoch} Training "
                         f"Iteration: {base + n + 1} step_loss : 0.{n} learning_rate : 1e-05     ")
    series, words = _read(tmp_path, lines)
    assert (series.samples[-1].step, series.run_total, series.restarts) == (3001, 4000, [])
    assert "done" not in words


def test_a_resume_after_the_banner_keeps_the_step_it_goes_on_from(tmp_path: Path) -> None:
    lines = ["***** Running training *****", "  Total optimization steps = 5,000"]
    lines += [f" 60%|######    | {n}/5000 [10:00<05:00,  5.00it/s]" for n in (2980, 2990, 3000)]
    lines += ["***** Running training *****", "  Total optimization steps = 4,000",
              "  Continuing training from global step 3000"]
    lines += ["  0%|          | 0/4000 [00:00<?, ?it/s]", "  0%|          | 2/4000 [00:01<30:00,  2.20it/s]"]
    series, words = _read(tmp_path, lines)
    assert (series.step, len(series.restarts)) == (3000, 1)  # (its bar counts from 0 again: it has not gone back)
    assert "done" not in words
