"""General mechanisms of the progress reader, round u (issue [progress-real]): what sets r and s showed missing, each
closed as a rule of its own, not a case per log. Every line here is written for the test, in the layout of the
program named (its source named with it), with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import parse_line
from tests.support.progress_logs import read_series as _read

# ---------------------------------------------- a bar whose description names its rank is that rank's


def _rv_bar(word: str, gpu: int, n: int, total: int) -> str:
    """raster-vision's per-rank bar: tqdm(self.train_dl, desc=f'Training (GPU={self.ddp_rank})'), its redraws
    joined by carriage returns on the job's stream."""
    width = 10
    fill = n * width // total
    return (f"{word} (GPU={gpu}): {100 * n // total:3d}%|{'#' * fill}{' ' * (width - fill)}| {n}/{total} "
            f"[00:{n // 6:02d}<00:{(total - n) // 6:02d},  6.01it/s]")


def _rv_epoch(gpu: int, upto: int, total: int = 180) -> str:
    return "\r".join(_rv_bar("Training", gpu, n, total) for n in range(0, upto + 1, 60))


def test_a_bar_description_naming_its_gpu_gives_the_points_rank() -> None:
    """azavea/raster-vision, rastervision_pytorch_learner/learner.py (Learner.train_epoch: ``desc = f'Training
    (GPU={self.ddp_rank})'`` where the run is distributed, else 'Training'): the bar's rank is the one it names;
    a bar that names none has no rank."""
    point = parse_line(_rv_bar("Training", 3, 120, 180))
    assert point is not None and point.rank == 3 and point.step == 120 and point.phase == "train"
    bare = parse_line("Training:  66%|######    | 120/180 [00:20<00:10,  6.01it/s, loss=0.31, gpu_mem=11.2]")
    assert bare is not None and bare.rank is None
    bracketed = parse_line("[rank 2] train:  50%|#####     | 90/180 [00:15<00:15,  6.01it/s]")
    assert bracketed is not None and bracketed.rank == 2


def test_every_ranks_bar_in_turn_is_no_restart(tmp_path: Path) -> None:
    """azavea/raster-vision, rastervision_pytorch_learner/learner.py (as above; every rank of four draws its own
    bar, one line each in the order they end, then each rank's 'Validating (GPU=g)'): one rank's bars are the run's,
    the next rank's from 0 no restart."""
    lines: list[str] = []
    for epoch in range(3):
        lines += [f"2026-02-03 10:0{epoch}:00:rv.learner: INFO - epoch: {epoch}"] * 4
        order = (2, 0, 3, 1) if epoch % 2 else (1, 3, 0, 2)
        upto = 180 if epoch < 2 else 120
        lines += [_rv_epoch(g, upto) for g in order]
        if epoch < 2:
            lines += [_rv_bar("Validating", g, 20, 20) for g in order]
    series = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.step is not None and series.step > 0


# ---------------------------------------------- pytorch-ignite: "epoch[e]" names the epoch; the evaluator's run


def test_an_epoch_in_brackets_right_after_its_word_is_the_lines_epoch() -> None:
    """pytorch/ignite, examples (mnist.py's log_training_loss: ``f"Epoch[{engine.state.epoch}] Iteration[{iter}/
    {len(train_loader)}] Loss: {engine.state.output:.2f}"``): the epoch in brackets glued to its word is the line's
    epoch, the iteration its batch of the epoch's."""
    point = parse_line("Epoch[4] Iteration[120/480] Loss: 0.37")
    assert point is not None and point.epoch == 4 and point.step == 120 and point.total == 480
    lower = parse_line("INFO:root:epoch[2] - iteration[30/480] loss: 0.512")
    assert lower is not None and lower.epoch == 2 and lower.step == 30


def _ignite_epoch(epoch: int, upto: int, per: int = 300) -> list[str]:
    return [f"INFO:root:epoch[{epoch}] - iteration[{i}/{per}] loss: {0.9 - epoch / 20 - i / 9000:.3f}"
            for i in range(20, upto + 1, 20)]


def test_an_evaluators_engine_run_is_not_the_runs_epochs(tmp_path: Path) -> None:
    """pytorch/ignite, ignite/engine/engine.py (Engine._setup_engine / _internal_run: ``self.logger.info(f"Engine run
    starting with max_epochs={max_epochs}.")``, the evaluator an Engine too, run with max_epochs=1 after each
    epoch): the trainer's epochs, said first, stay the run's; each epoch's iterations from 1 no restart."""
    engine = "INFO:ignite.engine.engine.Engine:"
    lines = [f"{engine}Engine run starting with max_epochs=12."]
    for epoch in (1, 2):
        lines += _ignite_epoch(epoch, 300)
        lines += [f"{engine}Engine run starting with max_epochs=1.",
                  f"{engine}Epoch[1] Complete. Time taken: 00:00:41",
                  f"{engine}Engine run complete. Time taken: 00:00:41",
                  f"{engine}Epoch[{epoch}] Complete. Time taken: 00:04:02"]
    lines += _ignite_epoch(3, 100)
    series = _read(tmp_path, lines)
    assert series.restarts == []
    assert series.declared_epochs == 12
    assert series.step == 2 * 300 + 100 and series.total == 12 * 300
