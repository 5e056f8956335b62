"""General mechanisms of the progress reader, round X (issue [progress-real]): forms the reader read as nothing or in
part (a logger's tab-separated header turned into spaces, diffusers' Flax epoch summary, the legacy OpenNMT-py's
batch line, chainer's PrintReport table, AllenNLP's 0-based epoch header and batch lines, a log viewer's bracketed
line numbers, Keras' next header glued after its bar). Every line here is written for the test, in the layout the
named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss, unheader
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- OLMo's console header, its tabs as spaces


def test_olmo_header_with_its_tabs_turned_to_spaces_comes_off() -> None:
    """OLMo's logging formatter, "%(asctime)s\\t%(hostname)s:%(local_rank)s\\t%(name)s:%(lineno)s\\t%(levelname)s\\t
    %(message)s", as a terminal pastes it (each tab as spaces): the header comes off before its message; a message's
    own "name:N" before spaces (no level nor another item after it) stays."""
    assert unheader("2026-01-02 03:04:05.678 node-7:0  olmo.train:120  INFO    [step=5/9000,epoch=0]") \
        == "[step=5/9000,epoch=0]"
    assert unheader("2026-01-02 03:04:05 epoch:3  loss: 0.5") == "epoch:3  loss: 0.5"


def test_olmo_records_give_the_step_of_the_total_and_the_cross_entropy(tmp_path: Path) -> None:
    """OLMo's trainer.log_metrics_to_console(): f"[step={step}/{max_steps},epoch={epoch}]" then each metric on an
    indented line "    name=value" (its format_float: commas over 1000, a raw repr under 1e-4)."""
    lines = []
    for step, loss in ((1, "9.871"), (2, "4.105"), (3, "3.25e-05")):
        lines += [f"2026-01-02 03:0{step}:05.678 node-7:0  olmo.train:120  INFO    [step={step}/9000,epoch=0]",
                  "    optim/total_grad_norm=1.250", f"    train/CrossEntropyLoss={loss}",
                  "    throughput/total_tokens=1,048,576"]
    series, words = _read(tmp_path, lines)
    assert series.step == 3 and "of 9,000" in words
    assert training_loss(series.metrics) == ("train/CrossEntropyLoss", 3.25e-05)


# ---------------------------------------------------------------- diffusers' Flax epoch summary


def test_diffusers_flax_epoch_summary_is_the_epoch_of_the_run_and_its_loss(tmp_path: Path) -> None:
    """diffusers examples/text_to_image/train_text_to_image_flax.py: at each epoch's end the epochs bar's
    write(f"Epoch... ({epoch + 1}/{num_train_epochs} | Loss: {train_metric['loss']})"), padded by tqdm's clearing."""
    point = parse_line("Epoch... (7/40 | Loss: 0.21875432133674622)" + " " * 40)
    assert point is not None and point.step == 7 and point.total == 40
    losses = (0.35, 0.3125, 0.28, 0.26, 0.24, 0.23, 0.226, 0.225)
    lines = [f"Epoch... ({e}/40 | Loss: {loss})" + " " * 30 for e, loss in enumerate(losses, 1)]
    series, words = _read(tmp_path, lines)
    assert series.step == 8 and "of 40" in words
    assert training_loss(series.metrics) == ("Loss", 0.225)


# ---------------------------------------------------------------- the legacy OpenNMT-py's batch line


def test_legacy_opennmt_batch_line_is_its_epoch(tmp_path: Path) -> None:
    """The legacy OpenNMT-py's Statistics.output(): "Epoch %2d, %5d/%5d; acc: %6.2f; ppl: %6.2f; %3.0f src tok/s;
    %3.0f tgt tok/s; %6.0f s elapsed" every report_every batches: the run counts its epochs (no count of them said);
    its perplexity is no loss."""
    lines = [f"Epoch {e:2d}, {b:5d}/  420; acc:  31.20; ppl:  {20 - e:.2f}; 4410 src tok/s; 4702 tgt tok/s;"
             f"     {b // 10:2d} s elapsed" for e in (1, 2, 3) for b in range(40, 440, 40) if e < 3 or b <= 200]
    series, _ = _read(tmp_path, lines)
    assert series.step == 3 and series.total is None
    assert training_loss(series.metrics) is None


# ---------------------------------------------------------------- chainer's PrintReport table


def _chainer_row(values: list[str], widths: list[int]) -> str:
    return "".join((v.ljust(w) if v else " " * w) + "  " for v, w in zip(values, widths, strict=True))


def test_chainer_print_report_rows_with_blank_columns_give_the_iteration_and_the_loss(tmp_path: Path) -> None:
    """chainer's extensions.PrintReport (ESPnet1's asr_train.py): each column "{:<%dg}  " of width max(len(name), 10),
    a value not reported yet (the validation's, before the first evaluation) as blanks; its rows say the run's
    iteration; the ProgressBar's "\\x1b[4A\\x1b[J" erases its bars before the next row."""
    names = ["epoch", "iteration", "main/loss", "validation/main/loss", "main/acc", "elapsed_time"]
    widths = [max(len(n), 10) for n in names]
    lines = ["  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True))]
    for it, loss in ((200, "412.5"), (400, "388.25"), (600, "371.125")):
        lines += ["\x1b[4A\x1b[J" + _chainer_row(["0", str(it), loss, "", "0.0025", f"{it / 2:g}"], widths),
                  "\x1b[J     total [..................................................]  0.40%",
                  "this epoch [#.................................................]  3.10%",
                  f"       {it} iter, 0 epoch / 20 epochs",
                  "    2.2 iters/sec. Estimated time to finish: 1 day, 2:03:04.05."]
    series, _ = _read(tmp_path, lines)
    assert series.step == 600 and series.total is None
    assert training_loss(series.metrics) == ("main/loss", 371.125)


# ---------------------------------------------------------------- AllenNLP's epoch header and batch lines


def test_allennlp_header_from_zero_and_its_batch_lines_count_epochs(tmp_path: Path) -> None:
    """AllenNLP 0.x's Trainer with no_tqdm: logger.info("Epoch %d/%d", epoch, self._num_epochs - 1), then
    logger.info("Batch %d/%d: %s", batch_num, num_training_batches, description), its description the metrics
    "name: %.2f" and " ||": the run counts its epochs (from 0, the header names the last one's index)."""
    head = "2026-01-02 03:04:{:02d},100 - INFO - allennlp.training.trainer - "
    lines = [head.format(0) + "Beginning training.", head.format(1) + "Epoch 0/19", head.format(2) + "Training"]
    lines += [head.format(3 + i) + f"Batch {b}/8200: accuracy: 0.61, loss: {1.5 - i / 10:.2f} ||"
              for i, b in enumerate((1, 310, 640, 955))]
    series, words = _read(tmp_path, lines)
    assert series.step == 0 and "of 20" in words
    assert training_loss(series.metrics) == ("loss", 1.2)


def test_allennlp_later_epoch_headers_keep_their_count_from_zero(tmp_path: Path) -> None:
    """The same trainer's next epoch: "Epoch 1/19" after "Epoch 0/19", still the run's 20 epochs."""
    head = "2026-01-02 03:04:{:02d},100 - INFO - allennlp.training.trainer - "
    lines = [head.format(1) + "Epoch 0/19", head.format(2) + "Batch 8200/8200: accuracy: 0.70, loss: 0.80 ||",
             head.format(3) + "Epoch 1/19", head.format(4) + "Batch 120/8200: accuracy: 0.71, loss: 0.78 ||"]
    series, words = _read(tmp_path, lines)
    assert series.step == 1 and "of 20" in words


# ---------------------------------------------------------------- a log viewer's bracketed line numbers


def test_a_log_viewer_bracketed_line_numbers_come_off_and_are_no_ranks(tmp_path: Path) -> None:
    """A log viewer that numbers each line "[N] " (no padding): the Trainer's bar redrawn on its own lines and its
    log dict (transformers ProgressCallback.on_log: print(logs)) every 5 steps; the numbers are not ranks: the
    last dict's loss is the run's."""
    lines, n = [], 5100
    for step in range(0, 16):
        lines.append(f"[{n}] {step * 100 // 900:3d}%|          | {step}/900 [00:{step:02d}<10:00,  1.20it/s]")
        n += 1
        if step and step % 5 == 0:
            lines += [f"[{n}] " + " " * 40, f"[{n + 1}] {{'loss': {2.0 / step:.4f}, 'learning_rate': 1e-05, "
                      f"'epoch': 0.0{step}}}", f"[{n + 2}] "]
            n += 3
    series, words = _read(tmp_path, lines)
    assert series.step == 15 and "of 900" in words
    assert training_loss(series.metrics) == ("loss", 0.1333)


def test_rank_labels_that_follow_one_another_are_no_line_numbers(tmp_path: Path) -> None:
    """A launcher's label of each rank's line, "[0] ", "[1] " (two ranks, each printing the Trainer's log dict, one
    after the other): the labels are ranks, not a viewer's line numbers: the run's loss is rank 0's."""
    lines = []
    for step in (10, 20, 30):
        lines += [f"[0] {{'loss': {1 / step:.4f}, 'learning_rate': 1e-05, 'epoch': 0.{step}}}",
                  f"[1] {{'loss': {2 / step:.4f}, 'learning_rate': 1e-05, 'epoch': 0.{step}}}"]
    series, _ = _read(tmp_path, lines)
    assert training_loss(series.metrics) == ("loss", 0.0333)


# ---------------------------------------------------------------- Keras' next header glued after its bar


def test_keras_next_epoch_header_glued_after_the_bar_starts_that_epoch(tmp_path: Path) -> None:
    """Keras 2's Progbar at an epoch's end ("%d/%d [====] - 41s 3s/step - loss: %.4f - val_loss: %.4f") and
    fit's next f"Epoch {epoch + 1}/{epochs}" header glued after the line's padding (a terminal's line that did not
    break): the run is in that epoch."""
    bar = "11/11 [==============================] - 41s 4s/step - loss: {:.4f} - val_loss: 9.1000"
    lines = ["Epoch 1/25", bar.format(12.5), "Epoch 2/25", bar.format(11.25) + " " * 20 + "Epoch 3/25"]
    series, words = _read(tmp_path, lines)
    assert series.step == 3 and "of 25" in words
    assert training_loss(series.metrics) == ("loss", 11.25)
