"""General mechanisms of the progress reader, round KK (issue [progress-real]): a hand-written loop's validation bar
named by a last word or a bracketed tag, a step 0 printed again at each epoch, and a rank said as "[GPUr]". Every line
here is written for the test, in the layout the named program's format strings give, with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line, training_loss
from tests.support.progress_logs import read_lines, read_text

# ---------------------------------------------------------------- a loop's per-epoch bars, the evaluation's named


def _frames(desc: str, total: int, counts: list[int]) -> str:
    """One physical line of tqdm frames of one bar, each led by a CR (tqdm's default bar on a file that is no
    terminal: '{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]')."""
    out = []
    for n in counts:
        pct = 100 * n // total
        bar = ("█" * (pct // 10)).ljust(10)
        out.append(f"\r{desc}: {pct:3d}%|{bar}| {n}/{total} [00:01<00:02, 31.25it/s]")
    return "".join(out) + "\n"


def test_a_bar_described_with_its_epoch_then_val_is_the_validation() -> None:
    """A hand-written loop's tqdm(val_loader, desc=f"Epoch {epoch}/{epochs} val") beside its tqdm(train_loader,
    desc=f"Epoch {epoch}/{epochs} train"): the word after the epoch names the phase, as "train" names the training."""
    val = parse_line("Epoch 3/12 val:  40%|████      | 8/20 [00:00<00:00, 88.10it/s]")
    train = parse_line("Epoch 3/12 train:  40%|████      | 32/80 [00:01<00:02, 28.40it/s]")
    assert val is not None and val.phase == "validation"
    assert train is not None and train.phase == "train"


def test_a_bar_led_by_a_bracketed_eval_tag_is_no_training() -> None:
    """The same loop's tqdm(test_loader, desc=f"[Eval] Best Model at Epoch {epoch}") after a new best model: the tag
    in brackets before the words names the phase (the description is not cut to "Best Model at Epoch 3"); a tag that
    names the training, or a bracketed time before a bar, leaves it the training's."""
    point = parse_line("[Eval] Best Model at Epoch 3:   5%|▌         | 2/40 [00:01<00:28,  1.35it/s]")
    assert point is not None and point.phase != "train"
    train = parse_line("[Train] Epoch 3:   5%|▌         | 2/40 [00:01<00:28,  1.35it/s]")
    assert train is not None and train.phase == "train"


def test_the_epochs_of_a_loop_with_val_and_eval_bars_are_no_restarts(tmp_path: Path) -> None:
    """A loop per epoch: its 'Epoch e/E train' bar over 80 batches, its 'Epoch e/E val' bar over 20, the
    '[Name] Epoch e/E Train Loss: %.4f | Val Loss: %.4f' summary, and after a new best the '[Eval] Best Model at
    Epoch e' bar redrawn each batch; cut inside epoch 4's train bar. Counted in global steps (3 x 80 + 48), of 12 x
    80; no epoch's bar going back to a low count is a restart."""
    text = "Using device: cpu\n"
    for epoch in range(1, 4):
        text += _frames(f"Epoch {epoch}/12 train", 80, [0, 1, 16, 32, 48, 64, 80])
        text += _frames(f"Epoch {epoch}/12 val", 20, [0, 7, 14, 20])
        text += f"[Toy] Epoch {epoch}/12 Train Loss: {0.5 / epoch:.4f} | Val Loss: {0.6 / epoch:.4f}\n"
        text += _frames(f"[Eval] Best Model at Epoch {epoch}", 20, list(range(0, 21)))
    text += _frames("Epoch 4/12 train", 80, [0, 1, 16, 32, 48]).rstrip("\n")
    series = read_text(tmp_path, text)
    assert series.restarts == []
    assert series.step == 3 * 80 + 48
    assert series.run_total == 12 * 80
    assert training_loss(series.metrics) == ("Train_Loss", 0.1667)


# ---------------------------------------------------------------- a step 0 again at each epoch, a "[GPUr]" rank


def _mingpt(epoch: int, ranks: list[int], loss: float, kind: str = "Train") -> list[str]:
    """PyTorch's examples/distributed/minGPT-ddp trainer.py, _run_epoch(): print(f"[GPU{self.global_rank}] Epoch
    {epoch} | Iter {iter} | {step_type} Loss {batch_loss:.5f}") every 100 of the epoch's batches (iter from
    enumerate), from each rank, the ranks in any order."""
    return [f"[GPU{r}] Epoch {epoch} | Iter 0 | {kind} Loss {loss + r / 1000:.5f}" for r in ranks]


def test_a_loop_whose_iter_0_comes_again_at_each_epoch_counts_epochs(tmp_path: Path) -> None:
    """minGPT-ddp where an epoch has fewer than 100 batches: "Iter 0" alone at each epoch, 1 to 4 (its train() adds
    1 to the range's index). The iteration is the epoch's first batch, not the run's step: the run counts epochs,
    no restart and no step 0."""
    lines: list[str] = []
    for epoch in range(1, 5):
        lines += _mingpt(epoch, [0], 3.0 - epoch / 10)
        lines += _mingpt(epoch, [0], 3.1 - epoch / 10, "Eval")
    series, _ = read_lines(tmp_path, lines)
    assert series.step == 4
    assert series.restarts == []


def test_the_gpu_label_of_each_rank_gives_the_lowest_ranks_loss(tmp_path: Path) -> None:
    """minGPT-ddp on 4 ranks, each printing its own line, "[GPUr]" its global rank: the run's loss is the lowest
    rank's, as its rank-zero loggers report, wherever its line falls among the others'."""
    lines: list[str] = []
    for epoch in range(1, 4):
        lines += _mingpt(epoch, [2, 0, 3, 1], 2.0 - epoch / 10)
        lines += _mingpt(epoch, [1, 0, 2, 3], 2.1 - epoch / 10, "Eval")
    lines += _mingpt(4, [3, 0, 1, 2], 1.5)
    series, _ = read_lines(tmp_path, lines)
    assert series.step == 4
    assert series.restarts == []
    assert training_loss(series.metrics) == ("loss", 1.5)
