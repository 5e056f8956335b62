"""General mechanisms of the progress reader, round CC (issue [progress-real]): icefall's training script's last
word, and the epoch line a loop prints with Python's self-documenting f-string (``f"{epoch=}: ..."``). Every line
here is written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- icefall's "Done!"


def _icefall(epochs: range, num_epochs: int) -> list[str]:
    """icefall egs/yesno/ASR/tdnn/train.py under its "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d]
    %(message)s" format: train_one_epoch()'s f"Epoch {params.cur_epoch}, batch {batch_idx}, {loss_info}, tot_loss:
    ..." records and the checkpoint's save, epochs from 0 of ``num_epochs``."""
    lines = ["2025-03-04 08:00:00,100 INFO [train.py:470] Training started",
             f"2025-03-04 08:00:00,200 INFO [train.py:471] {{'start_epoch': 0, 'num_epochs': {num_epochs}}}"]
    for e in epochs:
        for b in (0, 10):
            lines.append(f"2025-03-04 08:00:{e + 1:02d},{b:03d} INFO [train.py:411] Epoch {e}, batch {b}, "
                         f"loss[loss=0.{70 - e:02d}, over 1800.00 frames. ], tot_loss[loss=0.{71 - e:02d}, over "
                         f"9000.00 frames. ], batch size: 3")
        lines.append(f"2025-03-04 08:00:{e + 1:02d},500 INFO [checkpoint.py:70] Saving checkpoint to "
                     f"exp/epoch-{e}.pt")
    return lines


def test_icefall_training_script_done_ends_the_run(tmp_path: Path) -> None:
    """icefall's recipes' train.py, run(): logging.info("Done!") after the loop over range(start_epoch, num_epochs),
    its logger's header naming the script ("[train.py:548] Done!"): the run is over at its last epoch."""
    lines = [*_icefall(range(5), 5), "2025-03-04 08:00:09,000 INFO [train.py:548] Done!"]
    series, words = _read(tmp_path, lines)
    assert series.ended and "done" in words


def test_a_done_of_another_script_or_without_a_header_is_no_end(tmp_path: Path) -> None:
    """The same word from icefall's decode.py (its decoding, not the training), or a bare "Done!" a program prints
    after anything, says nothing of the training's end."""
    decode = [*_icefall(range(3), 5), "2025-03-04 08:00:09,000 INFO [decode.py:300] Done!"]
    series, words = _read(tmp_path, decode)
    assert not series.ended and "done" not in words
    bare = [*_icefall(range(3), 5), "Done!"]
    series, words = _read(tmp_path, bare)
    assert not series.ended and "done" not in words


# ---------------------------------------------------------------- the f"{epoch=}: ..." line


def test_a_self_documenting_epoch_line_is_the_epoch_and_its_loss() -> None:
    """PEFT's example notebooks (examples/causal_language_modeling/peft_prefix_tuning_clm.ipynb), their loop's
    print(f"{epoch=}: {train_ppl=} {train_epoch_loss=} {eval_ppl=} {eval_epoch_loss=}"), each value a tensor's repr:
    the epoch (from 0) is the step, the train loss the training's, the eval loss not."""
    point = parse_line("epoch=7: train_ppl=tensor(1.4210, device='cuda:0') train_epoch_loss=tensor(0.3514, "
                       "device='cuda:0') eval_ppl=tensor(1.2903, device='cuda:0') eval_epoch_loss=tensor(0.2549, "
                       "device='cuda:0')")
    assert point is not None and point.step == 7 and point.counts_epochs
    assert training_loss(point.metrics) == ("train_epoch_loss", 0.3514)


def test_the_epoch_lines_win_over_the_bars_between_them(tmp_path: Path) -> None:
    """Two finished tqdm bars per epoch (its train and its eval batches) then the epoch's line: the run's step is
    the last epoch the lines name, not a bar's batch count."""
    lines = []
    for e in range(6):
        lines += ["100%|##########| 9/9 [00:01<00:00,  6.12it/s]", "100%|##########| 9/9 [00:00<00:00, 21.40it/s]",
                  f"epoch={e}: train_ppl=tensor(1.{90 - e}00) train_epoch_loss=tensor(0.{60 - e}10) "
                  f"eval_ppl=tensor(1.{80 - e}00) eval_epoch_loss=tensor(0.{50 - e}20)"]
    series, _ = _read(tmp_path, lines)
    assert series.step == 5
    assert training_loss(series.metrics) == ("train_epoch_loss", 0.551)
