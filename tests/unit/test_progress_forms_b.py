"""The run's model on the forms of the second study corpus (index-b): a tuner's fit before the run's, the loop's own
line glued after a bar's redraw, the evaluation a program announces on a line of its own (issue [progress-real])."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from ntui.core.progress.runwords import eval_start
from tests.support.progress_logs import read_lines as _read


def _bar(desc: str, n: int, total: int, post: str = "") -> str:
    pct = 100 * n // total
    return f"{desc}{pct:3d}%|{'#' * (pct // 10):10}| {n}/{total} [00:{n % 60:02d}<00:01, 4.76it/s{post}]"


def test_the_learning_rate_finders_fit_and_its_end_are_not_the_runs(tmp_path: Path) -> None:
    finder = [_bar("Finding best initial lr: ", n, 100) for n in (10, 50, 100)]
    run = [_bar(f"Epoch {e}: ", n, 30, ", loss=1.2, v_num=3") for e in (0, 1) for n in (10, 20, 30)]
    lines = [*finder, "`Trainer.fit` stopped: `max_steps=100` reached.", *run[:-1]]
    series, words = _read(tmp_path, lines)
    assert "done" not in words, words
    assert series.step == 50 and series.restarts == [], words
    # the run's own end, after its points, still ends it
    series, words = _read(tmp_path, [*lines, run[-1], "`Trainer.fit` stopped: `max_epochs=2` reached."])
    assert "done" in words and series.step == 60, words


def test_the_loops_own_line_glued_after_a_bar_counts_the_run(tmp_path: Path) -> None:
    point = parse_line(_bar("1|7|Loss: 1.62: ", 7, 25) + "Step 7 | loss:1.62 lr:2e-05")
    assert point is not None and (point.step, point.format) == (7, "log")
    lines = ["epochs: 2", "max_steps_per_epoch: 25"]
    for epoch in (1, 2):
        lines.append(_bar("", 0, 25))
        lines += [_bar(f"{epoch}|{g}|Loss: 0.9: ", g - 25 * (epoch - 1), 25) + f"Step {g} | loss:0.{g} lr:2e-05"
                  for g in range(25 * epoch - 24, 25 * epoch + 1)]
    series, words = _read(tmp_path, lines[:-20])
    assert (series.step, series.run_total, series.restarts) == (30, 50, []), words
    assert "done" not in words
    series, words = _read(tmp_path, lines)
    assert words == "step 50 of 50: done", words


def test_an_announced_evaluations_bar_after_the_end_is_no_restart(tmp_path: Path) -> None:
    assert eval_start("[INFO|trainer.py:1921] 2024-03-11 09:43:12,444 >> ***** Running Evaluation *****")
    assert eval_start("INFO:__main__:*** Evaluate ***")
    assert not eval_start("***** Running training *****")
    train = [_bar("", n, 48) for n in range(0, 49, 6)]
    evals = [_bar("", n, 16) for n in range(0, 17, 4)]
    series, words = _read(tmp_path, ["***** Running training *****", *train, "Training completed.",
                                     "***** Running Evaluation *****", *evals])
    assert (series.step, series.total, series.restarts) == (48, 48, []), words
    assert words == "step 48 of 48: done"
    # an evaluation announced in the middle: the run's bar comes back after it
    series, words = _read(tmp_path, ["***** Running training *****", *train[:4], "***** Running Evaluation *****",
                                     *evals, *train[4:6]])
    assert (series.step, series.total, series.restarts) == (30, 48, []), words
    assert "done" not in words


def test_the_new_rows_of_the_form_table() -> None:
    cases = {
        "2022-09-20T08:04:14 | mmf.trainers.callbacks.logistics: progress: 300/9000, train/vqa/cross_entropy: 0.61, "
        "train/total_loss: 0.61, train/total_loss/avg: 0.70, num_updates: 300, max_updates: 9000": (300, 9000, 0.61),
        "2025-11-03 09:13:12 | INFO | root | step 12 | epoch 0 | loss 0.5033 | grad_norm 1.05 | lr 1.00e-05":
            (12, None, 0.5033),
        "| epoch 007 | 0031200 updates | words/s   14775| trainloss     2.23 | train ppl     4.68": (31200, None, 2.23),
        "2025-03-09 21:17:47\tJob ID: 77\t# GPUs: 8\tSaving async checkpoint\tIteration: 250\tJob throughput: 4":
            (250, None, None),
    }
    for line, (step, total, loss) in cases.items():
        point = parse_line(line)
        assert point is not None and (point.step, point.total) == (step, total), line
        got = training_loss(point.metrics)
        assert (got[1] if got else None) == loss, (line, point.metrics)
    # the per-update "validloss" of the same form is not the training loss
    point = parse_line("| checkpoint 008 | epoch 008 | 0031300 updates | validloss     4.23 | valid ppl    18.78")
    assert point is not None and point.step == 31300 and training_loss(point.metrics) is None


def test_an_epochs_json_record_counts_epochs_the_trainers_dict_does_not() -> None:
    point = parse_line('{"train_lr": 0.0002, "train_loss": 3.47, "test_loss": 0.88, "epoch": 171, "n_parameters": 5}')
    assert point is not None and (point.step, point.counts_epochs) == (171, True)
    assert training_loss(point.metrics) == ("train_loss", 3.47)
    point = parse_line("{'loss': 0.0923, 'learning_rate': 9.65e-05, 'epoch': 3.0}")
    assert point is not None and (point.step, point.format) == (None, "hf")
    point = parse_line('{"train_loss": 2.5, "epoch": 4, "converged": false, "note": null}')  # JSON's own literals
    assert point is not None and (point.step, point.counts_epochs) == (4, True)


def test_a_new_job_of_the_run_in_megatrons_progress_file_is_a_restart(tmp_path: Path) -> None:
    def job(jid: int, start: int, end: int) -> list[str]:
        return [f"2025-03-09 2{jid % 10}:00:00\tJob ID: {jid}\t# GPUs: 8\tStarting job",
                *(f"2025-03-09 2{jid % 10}:{i // 50:02d}:00\tJob ID: {jid}\t# GPUs: 8\tSaved async checkpoint\t"
                  f"Iteration: {i}" for i in range(start, end + 1, 50))]
    series, words = _read(tmp_path, job(1, 50, 300) + job(2, 350, 500))
    assert (series.step, len(series.restarts)) == (500, 1), words
    assert "done" not in words


def test_fairseq_luas_jump_to_its_last_epoch_at_the_same_update_is_its_end(tmp_path: Path) -> None:
    lines = [f"| epoch 031 | {u:07d} updates | words/s   14775| trainloss     2.{u % 7} | train ppl     4.68"
             for u in range(1000, 1100, 10)]
    lines += ["| checkpoint 032 | epoch 032 | 0001090 updates | trainloss     2.18 | train ppl     4.53",
              "| checkpoint 032 | epoch 032 | 0001090 updates | validloss     4.48 | valid ppl    22.31"]
    series, words = _read(tmp_path, lines)
    assert (series.step, words) == (1090, "step 1,090 (no total printed)")
    assert training_loss(series.metrics) == ("loss", 2.18)
    lines.append("| epoch 060 | 0001090 updates | 0000000 epoch updates | path run/state_last.th7")
    series, words = _read(tmp_path, lines)
    assert (series.step, words) == (1090, "step 1,090: done"), words
    # the next epoch's lines at later updates are no end
    series, words = _read(tmp_path, [*lines[:-1], "| epoch 032 | 0001100 updates | words/s 14000| trainloss 2.2 | x"])
    assert "done" not in words


def test_an_evaluation_before_the_training_then_the_runs_bar(tmp_path: Path) -> None:
    evals = [_bar("", n, 16) for n in range(0, 17, 4)]
    train = [_bar("", n, 48) for n in range(0, 31, 6)]
    series, words = _read(tmp_path, ["***** Running Evaluation *****", *evals, *train])
    assert (series.step, series.total, series.restarts) == (30, 48, []), words
    # an evaluation cut short before the training: the next bar is not taken as the run's
    series, words = _read(tmp_path, ["***** Running Evaluation *****", *evals[:2], *train])
    assert series.step is None, words


def test_a_tuners_fit_with_bars_like_the_runs_then_the_run_is_not_done(tmp_path: Path) -> None:
    # Lightning's batch-size finder: short fits of the run's own bars, each ended by "max_steps=3 reached"
    trial = [_bar("Epoch 0: ", n, 3, ", v_num=1") for n in (1, 2, 3)]
    run = [_bar("Epoch 0: ", n, 30, ", loss=1.1, v_num=1") for n in range(1, 21)]
    series, words = _read(tmp_path, [*trial, "`Trainer.fit` stopped: `max_steps=3` reached.", *run])
    assert series.step == 20 and not series.ended, words
    assert "done" not in words


def test_an_end_said_before_the_one_final_render_of_the_bar_holds(tmp_path: Path) -> None:
    # Lightning's Rich bar reaches a file at its teardown, after the word of the end: the end is the run's
    rich = "Epoch 2/9  ━━━━━━━━━━━━━━━━━━━━ 13/20 0:00:38 • 0:00:00 0.19it/s train_loss: 0.412"
    series, words = _read(tmp_path, ["`Trainer.fit` stopped: `max_steps=53` reached.", rich])
    assert series.ended and "done" in words, words
    # training steps after it: the end was a fit's before the run's
    series, words = _read(tmp_path, ["`Trainer.fit` stopped: `max_steps=53` reached.", rich,
                                     rich.replace("13/20", "14/20")])
    assert not series.ended and "done" not in words, words
    # the first point of a run after a tuner's fit is not where that fit's end said it stopped: no end, no done
    first = "Epoch 0/9  ━━━━━━━━━━━━━━━━━━━━ 1/20 0:00:01 • 0:00:40 0.50it/s train_loss: 2.1"
    series, words = _read(tmp_path, ["`Trainer.fit` stopped: `max_steps=100` reached.", first])
    assert not series.ended and "done" not in words, words


def test_a_bar_whose_description_says_the_runs_step_counts_the_run(tmp_path: Path) -> None:
    # torchtune's bar alone (its metrics to a file logger): "{epoch}|{global step}|Loss: x" over one epoch's steps
    lines = ["epochs: 2"]
    for epoch in (1, 2):
        lines.append(_bar("", 0, 25))
        lines += [_bar(f"{epoch}|{g}|Loss: 0.{g}: ", g - 25 * (epoch - 1), 25) for g in range(25 * epoch - 24,
                                                                                          25 * epoch + 1)]
    series, words = _read(tmp_path, lines[:27])  # the first epoch over: not the run
    assert (series.step, series.run_total) == (25, 50) and "done" not in words, words
    series, words = _read(tmp_path, lines[:40])
    assert (series.step, series.run_total, series.restarts) == (37, 50, []), words
    assert training_loss(series.metrics) == ("Loss", 0.37)
    series, words = _read(tmp_path, lines)
    assert words == "step 50 of 50: done", words


def test_a_bar_of_another_total_after_the_runs_end_is_no_new_run(tmp_path: Path) -> None:
    # the Trainer's evaluation after "Training completed", without its header
    train = [_bar("", n, 48) for n in range(0, 49, 6)]
    evals = [_bar("", n, 16) for n in range(0, 17, 4)]
    series, words = _read(tmp_path, [*train, "Training completed. Do not forget to share your model", *evals])
    assert (series.step, series.restarts, words) == (48, [], "step 48 of 48: done"), words
    # a new run appended to the log after the end: its start said (the program's banner), or its bar going on long
    run2 = [_bar("", n, 2000) for n in range(1, 31)]
    series, words = _read(tmp_path, ["***** Running training *****", *train, "Training completed.",
                                     "***** Running training *****", *run2])
    assert (series.step, series.total, len(series.restarts)) == (30, 2000, 1) and "done" not in words, words
    run2 = [_bar("", n, 2000) for n in range(1, 1100)]
    series, words = _read(tmp_path, [*train, "Training completed.", *run2])
    assert series.step == 1099 and "done" not in words, words


def test_an_announced_evaluation_does_not_hold_another_bar_for_ever(tmp_path: Path) -> None:
    train = [_bar("", n, 48) for n in range(0, 30, 6)]
    evals = [_bar("", n, 16) for n in range(0, 17, 4)]
    other = [_bar("", n, 5000) for n in range(1, 1200)]  # the run's bar of another total now (its end unsaid)
    series, words = _read(tmp_path, [*train, "***** Running Evaluation *****", *evals, *other])
    assert series.step == 1199 and series.total == 5000, words
