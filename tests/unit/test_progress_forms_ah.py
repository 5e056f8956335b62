"""General mechanisms of the progress reader, round DD (issue [progress-real]): an error's report glued to the bar's
last redraw (a run stopped at its last step, not done) and lit-gpt 2023's loops, sized in iterations. Every line here
is written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.series import estimate
from tests.support.progress_logs import read_lines as _read
from tests.support.progress_logs import read_text

# ---------------------------------------------------------------- an error glued to the bar at its total


def test_an_error_report_glued_to_the_last_bar_at_its_total_is_a_stop_not_done(tmp_path: Path) -> None:
    """swanlab's excepthook (its run's _except_handler: swanlog's "Error happened while training") on an uncaught
    exception raised at the loop's last step, glued to tqdm's last redraw '{n}/{total} [{elapsed}<{remaining},
    {rate}]' before the traceback: the program never said its training is over, so the run stopped at 120, not
    done."""
    bars = "\r".join(f"{p:3d}%|##        | {i}/120 [00:{i // 4:02d}<00:10,  4.00it/s]"
                     for i, p in ((100, 83), (110, 91)))
    text = (f"{bars}\r100%|##########| 120/120 [00:30<00:00,  4.00it/s]swanlab: Error happened while training\n"
            "swanlab: View run at https://example.org/our-team/toy-run\n"
            "Error in sys.excepthook:\nTraceback (most recent call last):\n  File \"/opt/toy/cb.py\", line 12, in h")
    series = read_text(tmp_path, text)
    words = estimate(series, now=0.0, time_left_s=None).words
    assert series.step == 120
    assert "stopped" in words and "done" not in words


def test_a_program_that_goes_on_after_its_last_bar_then_fails_is_still_done(tmp_path: Path) -> None:
    """diffusers' script after its training loop: its save's "Model weights saved in ..." glued to the last bar, a
    config notice, then a traceback of its inference part: the training ended (no error glued to the bar)."""
    text = ("Steps:  99%|#########9| 99/100 [00:20<00:00,  5.00it/s, loss=0.21]\r"
            "Steps: 100%|##########| 100/100 [00:20<00:00,  5.00it/s, loss=0.19]Model weights saved in out/w.bin\n"
            "{'toy_option'} was not found in config. Values will be initialized to default values.\n"
            "Traceback (most recent call last):\n  File \"/opt/toy/infer.py\", line 3, in <module>\n"
            "OSError: no file named w.bin\n")
    series = read_text(tmp_path, text)
    assert estimate(series, now=0.0, time_left_s=None).words.endswith("done")


# ---------------------------------------------------------------- lit-gpt 2023: iterations


def test_lit_gpt_2023_lines_count_iterations_with_no_max_iters_said(tmp_path: Path) -> None:
    """lit-gpt (2023) pretrain/redpajama.py: f"iter {state['iter_num']} step {state['step_count']}: loss
    {loss.item():.4f}, LR: {lr:.6f}, iter time: {(t1 - iter_t0) * 1000:.2f}ms{' (optimizer.step)' if not
    is_accumulating else ''}", its loop sized by max_iters: the step is the iteration (70), where no configuration
    was printed."""
    lines = [f"iter {i} step {i + 1}: loss {6.0 - i / 100:.4f}, LR: 0.000{i + 10}, iter time: 812.50ms "
             "(optimizer.step) " for i in range(0, 80, 10)]
    series, words = _read(tmp_path, lines)
    assert series.step == 70, words


def test_the_later_litgpt_lines_keep_the_optimizer_step(tmp_path: Path) -> None:
    """litgpt's later finetune loop: f"Epoch {e} | iter {iter_num} step {step_count} | loss train: ..., iter time:
    ...ms (step)" counts optimizer steps (its gradient accumulation 4 here): the step stays the optimizer's."""
    lines = [f"Epoch 1 | iter {i} step {i // 4} | loss train: 1.{i:03d}, val: n/a | iter time: 90.00 ms"
             + (" (step)" if i % 4 == 0 else "") for i in range(1, 41)]
    series, words = _read(tmp_path, lines)
    assert series.step == 10, words
