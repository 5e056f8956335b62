"""General mechanisms of the progress reader, round s (issue [progress-real]): the training loss where a line says
it in forms the reader missed (several losses, one of them their sum; a log exporter's entry header before the
Trainer's dict). Every line here is written for the test, in the layout the named program's format strings give,
with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import epoch_phase_metrics, parse_line, training_loss, unheader
from tests.support.progress_logs import read_lines as _read

# ---------------------------------------------------------------- several losses, one of them their sum


def test_a_metric_logger_line_with_the_loss_in_parts_gives_their_total() -> None:
    """DeiT / MAE util/misc.py, MetricLogger.log_every(): '{header} [{i}/{n}] eta: {eta} {meters} time: {time} data:
    {data} max mem: {memory:.0f}', each meter SmoothedValue's '{median:.4f} ({global_avg:.4f})' under the name the
    script gives metric_logger.update(**{...}): a tokenizer's "loss/total" beside its terms "loss/recon" and
    "loss/commit". The sum is the run's loss, not one of its terms."""
    point = parse_line("Epoch: [2]  [ 300/750]  eta: 0:00:21  loss/total: 0.0412 (0.0437)  loss/recon: 0.0230 "
                       "(0.0241)  loss/commit: 0.0182 (0.0196)  lr: 0.000870 (0.000871)  time: 0.0412  data: 0.0003  "
                       "max mem: 611")
    assert point is not None and point.epoch == 2
    assert training_loss(point.metrics) == ("loss/total", 0.0412)


def test_the_sum_of_the_losses_is_read_by_its_word_in_any_spelling() -> None:
    """The sum's words as loops name it: "Tot Loss" (a hand-written loop's print), "loss_sum", "overall_loss"; an
    evaluation's total or a setting of the loss is not the training loss; a term alone stays no sum."""
    assert training_loss({"Loc Loss": 1.2, "Cls Loss": 1.4, "Tot Loss": 1.3}) == ("Tot Loss", 1.3)
    assert training_loss({"loss_sum": 2.5, "loss_ce": 1.0, "loss_kl": 1.5}) == ("loss_sum", 2.5)
    assert training_loss({"overall_loss": 0.9, "rec_loss": 0.5, "adv_loss": 0.4}) == ("overall_loss", 0.9)
    assert training_loss({"val_loss/total": 0.7, "val_loss/recon": 0.3}) is None
    assert training_loss({"loss_total_weight": 0.5, "loss/a": 0.1, "loss/b": 0.2}) is None


def test_the_metric_logger_run_shows_the_total_of_its_last_line(tmp_path: Path) -> None:
    """MetricLogger.log_every() lines of an epoch, in turn: the series' loss is the last line's sum."""
    lines = [f"Epoch: [0]  [{i:>4}/1000]  eta: 0:01:00  loss/total: {0.5 - i / 10000:.4f} (0.4800)  loss/recon: "
             f"0.2000 (0.2100)  loss/commit: 0.1000 (0.1100)  lr: 0.000100 (0.000100)  time: 0.0500  data: 0.0010"
             for i in range(0, 600, 100)]
    series, _ = _read(tmp_path, lines)
    assert training_loss(series.metrics) == ("loss/total", 0.45)


# ---------------------------------------------------------------- a log exporter's entry header


def test_an_exported_entry_header_comes_off_before_the_message() -> None:
    """Cloud Logging's entries as exported, one line each: the severity's first letter and the RFC 3339 UTC time
    (nanoseconds) before what the container wrote ("E 2024-03-02T10:11:12.123456789Z <text>", stderr as ERROR)."""
    assert unheader("E 2024-03-02T10:11:12.123456789Z {'loss': 0.25}") == "{'loss': 0.25}"
    assert unheader("I 2024-03-02T10:11:12Z step 5") == "step 5"
    assert unheader("E 2024-03-02T10:11:12Z") == "E 2024-03-02T10:11:12Z"  # (nothing after it: kept)
    assert unheader("E 2024 was a year") == "E 2024 was a year"


def test_the_trainer_dict_after_an_exported_entry_header_gives_the_loss(tmp_path: Path) -> None:
    """transformers trainer.py, Trainer.log() -> ProgressCallback.on_log(): print(logs), "{'loss': ..., 'learning_rate':
    ..., 'epoch': ...}", here in an exported entry each, the bar's redraws flushed between them."""
    point = parse_line("E 2024-03-02T10:11:12.123456789Z {'loss': 0.4127, 'learning_rate': 1.2e-05, 'epoch': 0.5}")
    assert point is not None and point.metrics["loss"] == 0.4127 and point.epoch == 0.5
    lines = [" 16%|#6        | 100/620 [01:40<08:40,  1.00s/it]",
             "E 2024-03-02T10:11:12.123456789Z {'loss': 0.6021, 'learning_rate': 1.8e-05, 'epoch': 0.32}",
             " 32%|###2      | 200/620 [03:20<07:00,  1.00s/it]",
             "E 2024-03-02T10:13:02.223456789Z {'loss': 0.5178, 'learning_rate': 1.6e-05, 'epoch': 0.65}"]
    series, _ = _read(tmp_path, lines)
    assert (series.step, series.total) == (200, 620)
    assert training_loss(series.metrics) == ("loss", 0.5178)


# ---------------------------------------------------------------- DeepSpeed's logger header, pdsh's host label


def test_deepspeed_logger_header_comes_off_whole() -> None:
    """deepspeed/utils/logging.py, LoggerFactory.create_logger(): the formatter "[%(asctime)s] [%(levelname)s]
    [%(filename)s:%(lineno)d:%(funcName)s] %(message)s": the file, the line and the function in one bracket."""
    assert unheader("[2025-04-01 10:00:01,250] [INFO] [train.py:71:train] loss : 6.0412") == "loss : 6.0412"
    assert unheader("[2025-04-01 10:00:01,250] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0") \
        == "[Rank 0] step=10, skipped=0"
    assert unheader("[2025-04-01 10:00:01,250] [WARNING] [engine.py:12] x") == "x"


def _deepspeed_run(label: str) -> list[str]:
    """deepspeed/runtime/engine.py, DeepSpeedEngine._report_progress(): log_dist(f"step={step}, skipped=
    {skipped_steps}, lr={lr}, mom={mom}", ranks=[0]) every steps_per_print steps; between them the script's own
    logger.info(f"loss : {loss}") after each step (no step of its own)."""
    lines = []
    for step in range(1, 31):
        lines.append(f"{label}[2025-04-01 10:00:{step:02d},100] [INFO] [train.py:71:train] loss : {7 - step / 10:.6f}")
        if step % 10 == 0:
            lines.append(f"{label}[2025-04-01 10:00:{step:02d},200] [INFO] [logging.py:96:log_dist] [Rank 0] "
                         f"step={step}, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]")
    lines.append(f"{label}[2025-04-01 10:00:31,100] [INFO] [train.py:71:train] loss : 3.900000")
    return lines


def test_the_engine_steps_take_the_loss_the_script_logs_apart(tmp_path: Path) -> None:
    """The script's "loss : x" messages between the engine's step lines: the run's loss is the last one said."""
    series, _ = _read(tmp_path, _deepspeed_run(""))
    assert series.step == 30
    assert training_loss(series.metrics) == ("loss", 3.9)


def test_the_loss_apart_is_read_under_pdsh_host_labels(tmp_path: Path) -> None:
    """deepspeed/launcher/multinode_runner.py, PDSHRunner.get_cmd(): "pdsh -S -f 1024 -w host0,host1 ...", pdsh's
    "host0: " before each line of that host's output; the first host's lines are the run's."""
    lines = ["[2025-04-01 09:59:00,000] [INFO] [multinode_runner.py:80:get_cmd] cmd = pdsh -S -f 1024 -w "
             "node-a1,node-a2 export PYTHONPATH=/home/u/proj; cd /home/u/proj; python -u -m deepspeed.launcher.launch"]
    lines += _deepspeed_run("node-a1: ")
    series, _ = _read(tmp_path, lines)
    assert series.step == 30
    assert training_loss(series.metrics) == ("loss", 3.9)


# ---------------------------------------------------------------- an evaluation's bracketed tag is the message's


def test_a_bracketed_evaluation_tag_after_the_header_stays_the_message_s() -> None:
    """PaddleClas ppcls/engine/train/utils.py log_info(): "[Train][Epoch {}/{}][Iter: {}/{}]{}, ..." and
    ppcls/engine/evaluation/classification.py: "[Eval][Epoch {}][Iter: {}/{}]{}, ...", behind its logger's "[date]
    ppcls INFO: ": the evaluation's tag is no logger's name, so its lines are no training step."""
    assert unheader("[2025/06/01 10:00:00] ppcls INFO: [Eval][Epoch 3][Iter: 10/25]CELoss: 1.20000, loss: 1.20000"
                    ).startswith("[Eval][Epoch 3]")
    assert unheader("[2025-06-01 10:00:00] [INFO] [valid] loss: 0.3").startswith("[valid]")
    assert parse_line("[2025/06/01 10:00:00] ppcls INFO: [Eval][Epoch 3][Iter: 10/25]CELoss: 1.20000, loss: "
                      "1.20000, top1: 0.51000, top5: 0.98000, batch_cost: 0.11000s, reader_cost: 0.02000, ips: "
                      "290.00000 images/sec") is None
    point = parse_line("[2025/06/01 10:00:00] ppcls INFO: [Train][Epoch 3/20][Iter: 40/150]lr(PiecewiseDecay): "
                       "0.10000000, top1: 0.51000, CELoss: 1.10000, loss: 1.10000, batch_cost: 0.20000s, "
                       "reader_cost: 0.07000, ips: 160.00000 samples/s, eta: 0:30:00")
    assert point is not None and point.phase == "train" and (point.step, point.total) == (40, 150)


def test_evaluation_between_epochs_is_no_restart(tmp_path: Path) -> None:
    """PaddleClas's train loop, then its evaluation after each epoch ("[Eval][Epoch e][Iter: i/n]" from 0): the
    evaluation's counter going back to 0 is not the training's; the run goes on in its epochs."""
    lines = []
    for epoch in (1, 2, 3):
        for i in range(0, 100, 20):
            lines.append(f"[2025/06/01 10:0{epoch}:{i // 2:02d}] ppcls INFO: [Train][Epoch {epoch}/10][Iter: {i}/100]"
                         f"lr(PiecewiseDecay): 0.10000000, top1: 0.50000, CELoss: 1.{i:02d}000, loss: 1.{i:02d}000, "
                         "batch_cost: 0.20000s, reader_cost: 0.07000, ips: 160.00000 samples/s, eta: 0:30:00")
        lines.append(f"[2025/06/01 10:0{epoch}:55] ppcls INFO: [Train][Epoch {epoch}/10][Avg]top1: 0.50000, "
                     "CELoss: 1.10000, loss: 1.10000")
        for i in range(0, 30, 10):
            lines.append(f"[2025/06/01 10:0{epoch}:56] ppcls INFO: [Eval][Epoch {epoch}][Iter: {i}/30]CELoss: "
                         "1.90000, loss: 1.90000, top1: 0.30000, top5: 1.00000, batch_cost: 0.11000s, reader_cost: "
                         "0.02000, ips: 290.00000 images/sec")
    series, _ = _read(tmp_path, lines)
    assert len(series.restarts) == 0
    assert series.step == 2 * 100 + 80 and series.total == 1000


# ---------------------------------------------------------------- an epoch bar that counts its validation too


def test_a_log_that_starts_within_the_run_learns_the_epoch_share_without_a_restart(tmp_path: Path) -> None:
    """pytorch_lightning 1.1 callbacks/progress.py, ProgressBar: the main bar's total is the epoch's training plus
    validation batches (on_train_epoch_start: total_train_batches + total_val_batches), its description "Epoch {e}",
    the "Validating" bar drawn beside it while the main bar keeps counting. A log cut in from epoch 7 on: the first
    epoch's points were counted before the validation told the training's share; the next epoch is no restart."""
    lines = []
    for epoch in (7, 8, 9):
        for n in range(50, 401, 50):
            lines.append(f"Epoch {epoch}:  {100 * n // 500}%|▊| {n}/500 [00:{n // 10:02d}<00:10,  9.00it/s, "
                         f"loss={0.9 - epoch / 100:.3f}, v_num=3]")
        for k in range(20, 101, 20):
            lines.append(f"Validating:  {k}%|█▌      | {k}/100 [00:{k // 10:02d}<00:05,  9.00it/s]")
            lines.append(f"Epoch {epoch}:  {100 * (400 + k) // 500}%|▉| {400 + k}/500 [00:{(400 + k) // 10:02d}<00:01,"
                         f"  9.00it/s, loss={0.9 - epoch / 100:.3f}, v_num=3]")
    lines.append("Epoch 10:  10%|▏| 50/500 [00:05<00:45,  9.00it/s, loss=0.800, v_num=3]")
    series, _ = _read(tmp_path, lines)
    assert len(series.restarts) == 0
    assert series.step == 10 * 400 + 50


# ---------------------------------------------------------------- ESPnet's logging header; a GAN's generator loss


def test_the_module_and_line_in_parentheses_are_a_logger_header() -> None:
    """ParallelWaveGAN's and ESPnet's logging.basicConfig format "%(asctime)s (%(module)s:%(lineno)d)
    %(levelname)s: %(message)s": the module and line are the header's, not a metric of the message."""
    text = "2025-03-04 05:06:07,891 (trainer:512) INFO: (Steps: 4000) train/generator_loss = 2.1034."
    assert unheader(text) == "(Steps: 4000) train/generator_loss = 2.1034."
    point = parse_line(text)
    assert point is not None and point.step == 4000 and "trainer" not in point.metrics


def test_a_gan_s_losses_give_the_generator_s() -> None:
    """parallel_wavegan/bin/train.py, Trainer._check_log_interval(): logging.info(f"(Steps: {self.steps}) {key} =
    {value:.4f}.") for each of its losses, "train/spectral_convergence_loss", "train/log_stft_magnitude_loss",
    "train/generator_loss" (their weighted sum with the adversarial term), "train/discriminator_loss": the run's
    loss is the generator's; an evaluation's generator loss is not."""
    metrics = {"train/spectral_convergence_loss": 0.52, "train/log_stft_magnitude_loss": 1.1,
               "train/generator_loss": 1.7, "train/discriminator_loss": 0.4}
    assert training_loss(metrics) == ("train/generator_loss", 1.7)
    assert training_loss({"gen_loss": 3.1, "disc_loss": 0.6}) == ("gen_loss", 3.1)
    assert training_loss({"eval/generator_loss": 1.9, "eval/discriminator_loss": 0.5}) is None


def test_losses_logged_a_line_each_give_the_generator_s(tmp_path: Path) -> None:
    """The same loop's lines, one loss a line at each logged step, behind its logging header."""
    lines = []
    for step in range(1000, 4001, 1000):
        for key, value in (("spectral_convergence_loss", 0.6), ("log_stft_magnitude_loss", 1.2),
                           ("generator_loss", 2.0 - step / 10000)):
            lines.append(f"2025-03-04 05:{step // 1000:02d}:00,000 (trainer:512) INFO: (Steps: {step}) "
                         f"train/{key} = {value:.4f}.")
    series, _ = _read(tmp_path, lines)
    assert series.step == 4000
    assert training_loss(series.metrics) == ("train/generator_loss", 1.6)


# ---------------------------------------------------------------- a bar beside the loop's lines, across a resume


def _vocoder_process(first: int, last: int, stamp: str) -> list[str]:
    """parallel_wavegan/bin/train.py: the tqdm bar "[train]" over all the run's steps (initial=self.steps,
    total=train_max_steps, desc="[train]"), redrawn every 250 steps here, each 1000th step's loss lines after it."""
    lines = []
    for step in range(first + 250, last + 1, 250):
        lines.append(f"[train]:   1%|          | {step}/800000 [{step // 250:02d}:00<99:00:00,  3.90it/s]")
        if step % 1000 == 0:
            lines += [f"{stamp} (trainer:567) INFO: (Steps: {step}) train/log_stft_magnitude_loss = 1.2000.",
                      f"{stamp} (trainer:567) INFO: (Steps: {step}) train/generator_loss = {2 - step / 10000:.4f}."]
    return lines


def test_the_bar_beside_the_loop_lines_counts_the_run_also_after_a_resume(tmp_path: Path) -> None:
    """The bar counts the steps the lines count, of the run's total; a second process resumed from a checkpoint
    ("Successfully resumed from ...checkpoint-2000steps.pkl.") starts its bar at that step: not another loop's
    count. The run's step is the bar's latest, past the last loss lines; its total the bar's."""
    lines = ["2025-03-04 05:00:00,000 (train:312) INFO: train_max_steps = 800000"]
    lines += _vocoder_process(0, 3500, "2025-03-04 05:10:00,000")
    lines += ["2025-03-04 06:00:00,000 (train:312) INFO: train_max_steps = 800000",
              "2025-03-04 06:00:01,000 (train:1047) INFO: Successfully resumed from exp/run/checkpoint-2000steps.pkl."]
    lines += _vocoder_process(2000, 5250, "2025-03-04 06:10:00,000")
    series, _ = _read(tmp_path, lines)
    assert series.step == 5250 and series.run_total == 800000
    assert training_loss(series.metrics) == ("train/generator_loss", 1.5)


# ---------------------------------------------------------------- an epoch's training line between the step lines


def test_an_epoch_and_phase_line_gives_the_training_metrics() -> None:
    """A hand-written loop's print('Epoch {} {} Loc Loss: {:.4f} Cls Loss: {:.4f} Tot Loss: {:.4f} Accu
    :{:.4f}'.format(epoch, phase, ...)) every few steps (WLASL's I3D train_i3d.py), its steps said apart ("Step
    {}/{}"): the training phase's metrics, their loss the sum; the evaluation's phase and a line with a step are not."""
    metrics = epoch_phase_metrics("Epoch 4 train Loc Loss: 2.1034 Cls Loss: 2.0518 Tot Loss: 2.0776 Accu :0.4012")
    assert metrics is not None and training_loss(metrics) == ("Tot_Loss", 2.0776)
    assert epoch_phase_metrics("Epoch 4 test Loc Loss: 2.3 Cls Loss: 2.4 Tot Loss: 2.35 Accu :0.3") is None
    assert epoch_phase_metrics("Epoch 4 train step 30 loss: 0.5") is None
    assert epoch_phase_metrics("Epoch 4 train Accu :0.4012") is None


def test_the_epoch_training_lines_give_the_latest_step_s_loss(tmp_path: Path) -> None:
    """The same loop: a dashed line and "Step s/T" at each epoch's start, its training lines every 10 steps, a
    "VALIDATION: test ..." line after the epoch: the run's loss is the last training line's, not the validation's."""
    lines = []
    for epoch in (0, 1, 2):
        lines += [f"Step {epoch * 60}/6000", "-" * 10]
        for k in range(1, 7):
            loss = 3 - epoch / 2 - k / 100
            lines.append(f"Epoch {epoch} train Loc Loss: {loss:.4f} Cls Loss: {loss:.4f} Tot Loss: {loss:.4f} "
                         "Accu :0.2000")
        lines.append("VALIDATION: test Loc Loss: 3.9000 Cls Loss: 3.9000 Tot Loss: 3.9000 Accu :0.1000")
    lines.append("Step 180/6000")
    series, _ = _read(tmp_path, lines)
    assert series.step == 180
    assert training_loss(series.metrics) == ("Tot_Loss", 1.94)
