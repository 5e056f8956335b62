"""General mechanisms of the progress reader, round AA (issue [progress-real]): a step count that a line says within
the epoch it names (its total an epoch's, not the run's), and a count that starts again after a loop's summary of
an epoch (the next epoch, no restart). Every line here is written for the test, in the layout the named program's
format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import epoch_over, parse_line
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- a step of its total within the epoch named


def _ssd_line(epoch: int, step: int, loss: float, minute: int) -> str:
    """pytorch-ssd (jetson-inference) train_ssd.py, train(): logging.info(f"Epoch: {epoch}, Step: {i}/{len(loader)},
    " f"Avg Loss: {avg_loss:.4f}, " f"Avg Regression Loss {avg_reg_loss:.4f}, " f"Avg Classification Loss:
    {avg_clf_loss:.4f}") every debug_steps batches, under the logging format '%(asctime)s - %(message)s'."""
    return (f"2025-02-03 14:{minute:02d}:10 - Epoch: {epoch}, Step: {step}/380, Avg Loss: {loss:.4f}, "
            f"Avg Regression Loss {loss / 2:.4f}, Avg Classification Loss: {loss / 2:.4f}")


def test_a_step_of_its_total_after_the_epoch_named_counts_that_epoch() -> None:
    """The "Step: i/n" after "Epoch: e" with no epochs' count: i of the epoch's n batches, the run counted in its
    epochs (n is no run's total)."""
    point = parse_line(_ssd_line(2, 150, 3.2517, 5))
    assert point is not None
    assert (point.step, point.total, point.counts_epochs, point.batch, point.batches) == (2, None, True, 150, 380)


def test_the_ssd_run_mid_epoch_says_no_finish_time(tmp_path: Path) -> None:
    """A run of these lines stopping mid epoch 0: where the run is, the epoch, and no total (the epochs are never
    said), so no finish time of one epoch's batches taken for the run's."""
    lines = [_ssd_line(0, step, 6.0 - step / 100, step // 10) for step in range(10, 300, 10)]
    series, words = _read(tmp_path, lines)
    assert (series.step, series.total, len(series.restarts)) == (0, None, 0)
    assert "finishes" not in words


def test_the_ssd_run_into_its_next_epoch_counts_epochs(tmp_path: Path) -> None:
    """Into epoch 1 its steps start again from the first debug step: the next epoch, no restart."""
    lines = [_ssd_line(0, step, 6.0 - step / 100, step // 10) for step in range(10, 380, 10)]
    lines += [_ssd_line(1, step, 2.5 - step / 1000, 40 + step // 10) for step in range(10, 200, 10)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.total, len(series.restarts)) == (1, None, 0)


def test_a_step_of_its_total_with_the_epochs_said_counts_global_steps(tmp_path: Path) -> None:
    """A hand-written loop's print(f"Epoch: {epoch}/{epochs}, Step: {i}/{n}, loss: {loss:.4f}") (epochs from 1):
    with the epochs' count said, the run's global steps, its total the epochs times an epoch's steps (the
    epoch-step form's reading, before the counters': a guard that the rule above leaves it so)."""
    lines = [f"Epoch: {e}/4, Step: {i}/50, loss: {1.0 - e / 10 - i / 1000:.4f}" for e in (1, 2) for i in (10, 20, 30)]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.total, len(series.restarts)) == (80, 200, 0)


# ---------------------------------------------------------------- a count that starts again after an epoch's summary


def _pccai_epoch(epoch: int, batches: int, every: int, until: int | None = None) -> list[str]:
    """PccAI pccai/pipelines/train.py: train_pccnet()'s logger.log.info(f'Training at epoch {epoch} (total
    {total_epoch}) with lr {lr}' + f' and aux_lr {aux_lr}'), train_one_epoch()'s '    batch count: %d/%d, iter: %d, '
    % (batch_id, len_data, batch_id) then '%s: %f, ' of each loss and 'aux_loss: %f, ' (the last ', ' cut) every
    print_freq batches, and the epoch's 'Epoch: %d/%d --- time: %f, lr: %f, ' % (epoch, total_epoch, elapse, lr)
    with 'avg_%s: %f, ' of each loss, a newline after it; its logger's '[%(asctime)s] %(message)s'."""
    stamp = f"[2025-06-10 09:{epoch:02d}:00,000]"
    lines = [f"{stamp} Training at epoch {epoch} (total {epoch}) with lr 0.001 and aux_lr 0.01"]
    for b in range(0, until if until is not None else batches, every):
        loss = 0.5 - epoch / 20 - b / 10000
        lines.append(f"{stamp}     batch count: {b}/{batches}, iter: {b}, rate_loss: {loss / 2:.6f}, dist_loss: "
                     f"{loss / 2:.6f}, loss: {loss:.6f}, aux_loss: {900 - epoch:.6f}")
    if until is None:
        lines += [f"{stamp} Epoch: {epoch}/{epoch} --- time: {300.5 * (epoch + 1):.6f}, lr: 0.001000, avg_rate_loss: "
                  f"0.200000, avg_dist_loss: 0.200000, avg_loss: {0.4 - epoch / 20:.6f}", ""]
    return lines


def test_an_epoch_summary_of_averages_says_its_epoch_is_over() -> None:
    """The summary line names its epoch, then the epoch's averages (a training loss's among them) and no step;
    a line of one epoch's loss, or one with a step, is no such summary."""
    assert epoch_over("Epoch: 3/3 --- time: 1204.000000, lr: 0.001000, avg_rate_loss: 0.1, avg_loss: 0.25") == 3
    assert epoch_over("Epoch 3 | mean_loss: 0.25 | mean_acc: 0.91") == 3
    assert epoch_over("Epoch 3, loss: 0.25, val_loss: 0.31") is None
    assert epoch_over("Epoch: 3, step: 40, avg_loss: 0.25") is None


def test_a_count_that_starts_again_after_the_epoch_summary_is_the_next_epoch(tmp_path: Path) -> None:
    """Epochs 0-2 whole, epoch 3 to batch 120 of 200: where the run is, epoch 3 of an unknown count (the '/E' is the
    epochs trained so far), and no restart at each epoch's first batch count."""
    lines = [line for e in range(3) for line in _pccai_epoch(e, 200, 20)] + _pccai_epoch(3, 200, 20, until=140)
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.total, len(series.restarts)) == (3, None, 0)


def test_a_count_that_starts_again_with_no_summary_between_stays_a_restart(tmp_path: Path) -> None:
    """The same lines with no epoch's summary between: a count back to 0 is the program's start again."""
    lines = [line for line in _pccai_epoch(0, 200, 20) if "---" not in line]
    lines += _pccai_epoch(0, 200, 20, until=100)[1:]
    series, _ = _read(tmp_path, lines)
    assert len(series.restarts) == 1
