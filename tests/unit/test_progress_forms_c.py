"""General mechanisms of the progress reader, on forms no row of the forms table names (issue [progress-real]): a
line that names a step counter and a training loss in any words, a dict or a JSON record that says its step, a
logger's header before a line, what a configuration says of the whole run, a banner printed again by another node.
Every line here is written for the test, in the layouts programs use, not taken from any."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.progress.lines import parse_line, training_loss, unheader
from ntui.core.progress.runwords import declared_epochs, declared_per_epoch, declared_total
from tests.support.progress_logs import read_lines as _read


@pytest.mark.parametrize(("line", "step", "total"), [
    ("update 450 | loss 3.21 | lr 0.0004", 450, None),
    ("num_updates: 450, loss: 3.21", 450, None),
    ("it 450/10000 loss 3.21", 450, 10000),
    ("step 450 of 10000 loss 3.21", 450, 10000),
    ("[450/10000] loss: 3.21", 450, 10000),
    ("global_step: 450, train_loss: 3.21", 450, None),
    ("0: global_step=450 loss=3.21", 450, None),
    ("iteration: 450 / 10000 | tokens: 1.2G | lm_loss: 3.21 | lr: 3e-05", 450, 10000),
])
def test_a_step_counter_and_a_loss_in_any_words_are_a_point(line: str, step: int, total: int | None) -> None:
    point = parse_line(line)
    assert point is not None, line
    assert (point.step, point.total) == (step, total)
    assert point.metrics.get("loss", point.metrics.get("train_loss", point.metrics.get("lm_loss"))) == 3.21


@pytest.mark.parametrize("line", [
    "Saving checkpoint at step 450",  # no loss: a counter alone says nothing of the run's progress
    "iter 80: val loss 1.2841, val time: 5133.70 ms",  # an evaluation's loss
    "eval | update 450 | loss 1.2",  # an evaluation's words lead the counter
    "step 450 | val_loss 1.2",  # only an evaluation's loss
])
def test_a_counter_without_a_training_loss_is_no_point(line: str) -> None:
    assert parse_line(line) is None


def test_a_batch_counter_under_a_named_epoch_counts_that_epoch(tmp_path: Path) -> None:
    point = parse_line("Epoch 3 | batch 20/50 | loss 0.71")
    assert point is not None and point.per_epoch and (point.step, point.total, point.epoch) == (20, 50, 3.0)
    series, words = _read(tmp_path, [f"Epoch {e} | batch {b}/50 | loss 0.71" for e in (1, 2) for b in (10, 30, 50)])
    assert series.step == 100 and series.restarts == [], words


@pytest.mark.parametrize(("line", "step", "epoch"), [
    ("{'global_step': 340, 'loss': 1.25, 'lr': 0.001}", 340, None),
    ('{"step": 340, "loss": 1.25, "epoch": 2}', 340, 2.0),
    ('{"train/global_step": 340, "train/loss": 1.25}', 340, None),
    ('{"iter": "340", "loss": "1.25"}', 340, None),
])
def test_a_dict_or_json_record_that_says_its_step_is_a_point(line: str, step: int, epoch: float | None) -> None:
    point = parse_line(line)
    assert point is not None and (point.step, point.epoch) == (step, epoch)
    assert not any(k.endswith(("step", "iter")) for k in point.metrics)  # its counters are no metrics
    assert 1.25 in point.metrics.values()


def test_a_json_log_of_steps_counts_the_run(tmp_path: Path) -> None:
    lines = ['{"max_steps": 500, "lr": 0.001}'] + [f'{{"step": {s}, "loss": 1.5}}' for s in (100, 200, 300)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (300, 500) and series.restarts == [], words


@pytest.mark.parametrize("line", [
    "2025-03-02 18:40:51,120 - INFO - trainer - Epoch 3/10",
    "2025-03-02 18:40:51.120 | INFO     | trainer:fit:88 - Epoch 3/10",
    "[2025-03-02 18:40:51,120][trainer][INFO] - Epoch 3/10",
    "03/02/2025 18:40:51 [INFO|DP=0|PP=0|TP=0]: Epoch 3/10",
    "I0302 18:40:51.120000 4242 trainer.py:88] Epoch 3/10",
    "INFO:trainer:Epoch 3/10",
])
def test_a_loggers_header_is_taken_off_before_a_form_that_leads_its_line(line: str) -> None:
    # Keras' epoch line is read only where it is the whole message: after any logger's header too
    point = parse_line(line)
    assert point is not None and (point.step, point.total, point.form) == (3, 10, "keras"), line


def test_a_loggers_header_keeps_its_time_and_leaves_a_message_without_one_alone() -> None:
    point = parse_line("2025-03-02 18:40:51,120 INFO [fit.py:88] {'step': 40, 'loss': 0.5}")
    assert point is not None and point.step == 40 and point.time is not None
    assert unheader("[Step 450/10000] loss=3.2") == "[Step 450/10000] loss=3.2"
    assert unheader("Epoch(train) [83][150/2693]") == "Epoch(train) [83][150/2693]"
    assert unheader("INFO") == "INFO"


def test_an_end_or_an_error_under_a_prefix_and_a_header_is_read(tmp_path: Path) -> None:
    steps = [f"0: 2025-03-02 18:40:{s:02d},000 INFO step {s} | loss 1.5" for s in range(1, 6)]
    series, words = _read(tmp_path, [*steps, "0: 2025-03-02 18:41:00,000 ERROR Traceback (most recent call last):"])
    assert series.stopped is not None and "done" not in words, words
    series, words = _read(tmp_path, ["max_steps: 5", *steps, "0: 2025-03-02 18:41:00,000 INFO Training completed"])
    assert "done" in words, words


@pytest.mark.parametrize(("line", "total", "epochs", "per_epoch"), [
    ("{'lr': 0.1, 'num_epochs': 20, 'batch_size': 32}", None, 20, None),
    ("Namespace(batch_size=64, epochs=90, lr=0.1)", None, 90, None),
    ("n_epochs=30 total_iters=6000", 6000, 30, None),
    ("{'max_train_steps': 4000, 'num_train_epochs': 4}", 4000, 4, None),
    ("| num_training_steps | 1200 |", 1200, None, None),
    ("config: epochs=5, iters_per_epoch=120", None, 5, 120),
    ("num_updates 1212 | valid_loss 8.7", None, None, None),  # a counter's name, not a total
])
def test_what_a_configuration_says_of_the_whole_run(line: str, total: int | None, epochs: int | None,
                                                     per_epoch: int | None) -> None:
    assert (declared_total(line), declared_epochs(line), declared_per_epoch(line)) == (total, epochs, per_epoch)


def test_a_params_dict_says_the_runs_epochs_and_an_epoch_counted_run_is_not_done_before_them(tmp_path: Path) -> None:
    lines = ["{'lr': 0.003, 'num_epochs': 6, 'world_size': 4}",
             *[f"Epoch {e}, batch {b}, loss[loss=0.3], tot_loss[loss=0.31]" for e in (1, 2) for b in (0, 50, 100)]]
    series, words = _read(tmp_path, lines)
    assert series.run_total == 6 and "done" not in words, words


def test_a_line_that_says_the_runs_steps_and_its_epochs_says_both(tmp_path: Path) -> None:
    lines = ["Namespace(epochs=3, steps_per_epoch=40, lr=0.1)",
             *[f"Epoch 1 | batch {b}/40 | loss 0.9" for b in (10, 20)]]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (20, 120), words


def _bar(n: int, total: int) -> str:
    pct = 100 * n // total
    return f"{pct:3d}%|{'#' * (pct // 10):10}| {n}/{total} [00:{n % 60:02d}<00:01, 4.76it/s]"


def test_another_nodes_banner_after_the_bar_started_is_no_restart(tmp_path: Path) -> None:
    banner = ["***** Running training *****", "  Num examples = 6,400", "  Total optimization steps = 100"]
    lines = [*banner, *[_bar(n, 100) for n in (0, 10, 20)], *banner, *[_bar(n, 100) for n in (30, 40)]]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total, series.restarts) == (40, 100, []), words
    # a new run appended to the log (its banner, then its bar from its beginning) is one
    series, words = _read(tmp_path, [*lines, *banner, *[_bar(n, 100) for n in (1, 5)]])
    assert series.step == 5 and len(series.restarts) == 1, words


def test_a_keras_epoch_one_batch_short_of_its_bars_total_is_not_done(tmp_path: Path) -> None:
    # the bar draws its count exactly: its epoch is over at its total, not within a log interval of it
    bar = "[==============================]"
    lines = ["Epoch 1/2", f"120/469 {bar[:10]}>.] - ETA: 26s - loss: 0.30",
             f"469/469 {bar} - 41s 87ms/step - loss: 0.21", "Epoch 2/2",
             f"468/469 {bar[:30]}>.] - ETA: 1s - loss: 0.12"]
    series, words = _read(tmp_path, lines)
    assert "done" not in words and series.step == 2, words
    series, words = _read(tmp_path, [*lines, f"469/469 {bar} - 40s 86ms/step - loss: 0.11"])
    assert "done" in words, words


def test_the_rest_of_a_wrapped_line_gives_the_last_steps_metrics(tmp_path: Path) -> None:
    lines = ["Epoch 1/1", "468/469 [=========>.] - ETA: 11:41 - loss: 0.1217 - accuracy: 0.91 - ETA: 27s - lo",
             "ss: 0.1202 - accuracy: 0.92 - ETA: 1s - loss: 0.0776 - accuracy: 0.955"]
    series, words = _read(tmp_path, lines)
    assert series.metrics["loss"] == 0.0776, series.metrics
    # an epoch's summary in words of its own, or an evaluation's, is not the rest of a line
    series, _ = _read(tmp_path, [*lines, "Train Error: Avg loss: 0.5", "- val_loss: 0.3 - val_accuracy: 0.9"])
    assert series.metrics["loss"] == 0.0776, series.metrics


def test_a_loss_of_several_words_is_one_name_not_the_training_loss() -> None:
    point = parse_line("Epoch [3/60], Step [40/463], Loss: 0.32309, Disc Loss: 3.27, S2S Loss: 0.34, Mono Loss: 0.054")
    assert point is not None and point.metrics["Loss"] == 0.32309 and point.metrics["Mono_Loss"] == 0.054
    point = parse_line("step 120 | val loss: 1.25 | train loss: 2.5")
    assert point is not None and point.metrics == {"val_loss": 1.25, "train_loss": 2.5}


def test_a_step_that_starts_again_as_the_epoch_goes_on_counts_the_epochs_batches(tmp_path: Path) -> None:
    lines = [f"| Training Device=dev:0 Epoch={e} Step={s} Loss=0.{9 - e}1 Rate=1700.0"
             for e in (1, 2) for s in (0, 20, 40)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.restarts) == (2, []), words
    # a loop that starts again from its first epoch is a restart
    series, words = _read(tmp_path, [*lines, "| Training Device=dev:0 Epoch=1 Step=0 Loss=0.91 Rate=1700.0"])
    assert len(series.restarts) == 1, words


def test_a_step_with_many_metrics_and_no_single_loss_is_a_point(tmp_path: Path) -> None:
    fields = " - ".join(f"{k}:{v}" for k, v in [("actor/pg_loss", 0.012), ("actor/entropy_loss", 0.31),
                                                 ("critic/score", 0.44), ("response_length/mean", 412.0),
                                                 ("perf/throughput", 1820.5), ("timing_s/gen", 20.1),
                                                 ("timing_s/step", 66.5)])
    lines = ["(Runner pid=4242) Total training steps: 90", *[f"(Runner pid=4242) step:{s} - {fields}" for s in (7, 8)]]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (8, 90), words
    assert parse_line("step:8 - lr:0.1 - warmup:100") is None  # a few numbers beside a counter: no progress line


def test_a_counter_alone_heads_a_block_of_metrics(tmp_path: Path) -> None:
    block = ["\t Train time/batch: {b}", "\t Train loss/train/total: {loss}", "\t Train metrics/train/Perplexity: 9.1"]
    lines = ["max_duration: 4ba"]
    for b, loss in ((1, 9.5), (2, 9.25), (3, 9.0)):
        lines += [f"[batch={b}/4]:", *(row.format(b=b - 1, loss=loss) for row in block)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (3, 4) and "done" not in words, words
    assert series.metrics["loss/train/total"] == 9.0


def test_an_epochs_batch_count_may_go_unnamed_in_brackets() -> None:
    point = parse_line("Epoch:[3/12](2100/18742) loss:2.331 lr:0.00016861 epoch_Time:72.0min:")
    assert point is not None and (point.epoch, point.epochs, point.step, point.total) == (3.0, 12, 2100, 18742)
    assert point.per_epoch and point.metrics["loss"] == 2.331


def test_an_epoch_table_whose_bar_draws_no_glyphs_and_names_the_last_epochs_index(tmp_path: Path) -> None:
    head = ["Starting training for 80 epochs...", "     Epoch   gpu_mem       box       obj       cls    labels"]
    rows = [f"     {e}/79     20.9G    0.1167   0.07977   0.04393        19      1280:  {100 * n // 162}% {n}/162 "
            f"[00:{n % 60:02d}<00:10,  1.90s/it]" for e in (0, 1) for n in (1, 80, 162) if (e, n) != (1, 162)]
    series, words = _read(tmp_path, [*head, *rows])
    assert (series.step, series.run_total, series.restarts) == (1, 80, []) and "done" not in words, words


def test_the_trainers_summary_ends_a_run_whose_lines_said_no_step(tmp_path: Path) -> None:
    dicts = [f"{{'loss': 0.{50 - e}, 'grad_norm': 3.1, 'epoch': {e / 10}}}" for e in range(1, 4)]
    series, words = _read(tmp_path, dicts)
    assert "done" not in words, words
    summary = "{'train_runtime': 41.2, 'train_samples_per_second': 27.9, 'train_loss': 0.61, 'epoch': 0.3}"
    series, words = _read(tmp_path, [*dicts, summary])
    assert "done" in words and series.metrics["loss"] == 0.47, words
    # not after an error: the summary is the Trainer's at its end only
    series, words = _read(tmp_path, [*dicts, "Traceback (most recent call last):", "RuntimeError: boom"])
    assert "done" not in words, words


def test_a_number_leading_its_message_with_a_loss_by_its_objectives_name(tmp_path: Path) -> None:
    lines = [f"INFO - 03/11/21 10:0{i}:00 - 1:02:0{i} -    {3860 + 5 * i} -   56.10 sent/s -  2121.11 words/s - "
             f"MLM-fr:  6.{84 - i} -  - model LR: 3.8600e-05" for i in range(4)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.run_total) == (3875, None) and series.metrics["MLM-fr"] == 6.81, words
    assert series.own_times  # the logger's own times, its header taken off
    assert parse_line("INFO - 03/11/21 10:00:00 - 1:02:00 -    3860 -   56.10 sent/s - model LR: 3.8e-05") is None


@pytest.mark.parametrize(("line", "step", "total", "phase"), [
    ("Training ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 450/1000 0:01:00 • 0:01:10 loss=0.42", 450, 1000, "train"),
    ("Fine-tuning ━━━━━━━━━━━━━━━━━╺━━━━━━━━━━━━━━━  45% 450/1000 0:01:10", 450, 1000, "train"),
    ("Validating ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 12/40 0:00:03 • 0:00:09", 12, 40, "validation"),
])
def test_any_rich_bar_with_its_counts_is_read(line: str, step: int, total: int, phase: str) -> None:
    point = parse_line(line)
    assert point is not None and (point.step, point.total, point.phase) == (step, total, phase)


@pytest.mark.parametrize(("line", "step", "total"), [
    ("| epoch   3 |   200/ 2983 batches | lr 4.00 | ms/batch 21.3 | loss  5.20 | ppl   181.91", 200, 2983),
    ("Step #1200 loss=0.231", 1200, None),
    ('{"_step": 1200, "train/loss": 0.231}', 1200, None),
])
def test_more_counters(line: str, step: int, total: int | None) -> None:
    point = parse_line(line)
    assert point is not None and (point.step, point.total) == (step, total)


def test_a_batch_of_its_total_is_an_epochs_not_the_runs(tmp_path: Path) -> None:
    # no "done" at an epoch's last batch: where no epoch is named, the run's total is unknown
    series, words = _read(tmp_path, [f"batch {b}/500 loss={b / 1000}" for b in (100, 300, 500)])
    assert series.step == 500 and "done" not in words and series.run_total is None, words
    series, words = _read(tmp_path, ["Epoch 2/3", *[f"batch {b}/500 loss={b / 1000}" for b in (100, 500)]])
    assert series.step == 1000 and "done" not in words, words  # the epoch a line before named: its batches


@pytest.mark.parametrize(("line", "ended"), [
    ("Training finished.", True), ("Done training!", True), ("TRAINING COMPLETE", True),
    ("2025-03-02 18:40:51,120 INFO training is complete, saving the model", True),
    ("Training done for epoch 3", False), ("Epoch 3 training complete", False),
])
def test_the_end_of_training_in_other_words(tmp_path: Path, line: str, ended: bool) -> None:
    steps = [f"step {s}/100 | loss 0.{90 - s}" for s in (10, 20, 30)]
    series, words = _read(tmp_path, [*steps, line])
    assert ("done" in words) == ended, words


@pytest.mark.parametrize("line", [
    "Segmentation fault (core dumped)", "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.0",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 4242)",
])
def test_a_crash_after_the_last_step_gives_no_finish_time(tmp_path: Path, line: str) -> None:
    steps = [f"2025-03-02 18:40:{s:02d},000 INFO step {s}/100 | loss 0.{90 - s}" for s in (10, 20, 30)]
    series, words = _read(tmp_path, [*steps, line])
    assert series.stopped is not None and "finishes" not in words and "done" not in words, words


@pytest.mark.parametrize(("line", "total", "epochs"), [
    ("Max steps: 5000", 5000, None), ("Number of training steps: 1200", 1200, None),
    ("Number of epochs: 20", None, 20), ("Training for 20 epochs", None, 20), ("Total epochs: 12", None, 12),
])
def test_a_banners_total_in_words(line: str, total: int | None, epochs: int | None) -> None:
    assert (declared_total(line), declared_epochs(line)) == (total, epochs)


def test_a_step_past_a_total_only_the_configuration_said_is_not_done(tmp_path: Path) -> None:
    # the configuration counts optimizer steps, the loop's lines micro-batch iterations: 1200 of 1000 is no end
    lines = ["max_train_steps = 1000", *[f"iter {i} | loss 0.{90 - i // 100}" for i in (400, 800, 1200)]]
    series, words = _read(tmp_path, lines)
    assert "done" not in words and "finishes" not in words, words
    series, words = _read(tmp_path, [*lines[:3], "iter 1000 | loss 0.80"])
    assert "done" in words, words  # at the total said, it is its end


@pytest.mark.parametrize(("metrics", "name"), [
    ({"loss_avg": 1.0, "lr": 0.1}, "loss_avg"), ({"Loss/mean": 1.0}, "Loss/mean"),
    ({"loss_cls": 0.3, "loss_ema": 1.1}, "loss_ema"), ({"MLM-en": 6.8, "lr": 1e-4}, "MLM-en"),
    ({"loss/train/total": 9.2, "loss/val": 9.9}, "loss/train/total"),
])
def test_loss_synonyms(metrics: dict[str, float], name: str) -> None:
    found = training_loss(metrics)
    assert found is not None and found[0] == name


def test_a_step_loss_line_that_names_its_epoch_resets_with_it(tmp_path: Path) -> None:
    lines = [f"Epoch {e} | Step {s} | loss 0.{9 - e}" for e in (1, 2, 3) for s in (0, 50, 100)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.restarts) == (3, []), words
