"""General mechanisms of the progress reader, round n (issue [progress-real]): forms the last rounds left open and
frameworks no round had read, each read from the source of the program that prints it; each test names the
repository, the file and the function. Every line here is written for the test, in the layout those sources give,
with values of our own."""

from __future__ import annotations

from pathlib import Path

from ntui.core.progress.lines import loss_parts, parse_line, training_loss
from tests.support.progress_logs import read_text as _read

# ---------------------------------------------------------------- RETURNN's engine: "key value" fields apart by ", "


def test_returnn_train_step_line_counts_epochs() -> None:
    """rwth-i6/returnn, returnn/torch/engine.py, Engine.train_epoch (report_prefix "ep %i train") and _print_process
    (", ".join of "step %i", the scores "%s %s", "%.3f sec/step", "elapsed", "exp. remaining", "complete %.02f%%"):
    the run counts epochs (from 1), the step is the epoch's, the loss is the score "ce"."""
    point = parse_line("ep 7 train, step 212, ce 1.043, fer 0.288, num_seqs 17, 0.412 sec/step, elapsed 0:01:27, "
                       "exp. remaining 0:04:10, complete 25.81%")
    assert point is not None
    assert (point.form, point.step, point.batch, point.counts_epochs, point.first_epoch) == ("returnn", 7, 212, True, 1)
    assert training_loss(point.metrics) == ("ce", 1.043)
    assert point.metrics["fer"] == 0.288


def test_returnn_eval_line_is_no_training_point() -> None:
    """rwth-i6/returnn, returnn/torch/engine.py, Engine.eval_model (report_prefix "ep %i %s eval" of the dataset's
    name) and _print_process: an evaluation's step, not the run's."""
    assert parse_line("ep 7 dev-clean eval, step 12, ce 0.911, fer 0.240, 0.102 sec/step") is None


def test_returnn_run_over_epochs(tmp_path: Path) -> None:
    """rwth-i6/returnn, returnn/torch/engine.py, Engine.train_epoch and _print_process: each epoch's steps count from
    0 again ("start epoch %i global train step %i ..." between): the run is at its epoch, no restart."""
    lines = [f"ep 3 train, step {s}, ce {2.0 - s / 100:.3f}, fer 0.4, 0.300 sec/step" for s in range(0, 40, 10)]
    lines.append("start epoch 4 global train step 40 with effective learning rate 0.001 ...")
    lines += [f"ep 4 train, step {s}, ce {1.5 - s / 100:.3f}, fer 0.3, 0.300 sec/step" for s in range(0, 30, 10)]
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert series.step == 4
    assert series.restarts == []
    assert training_loss(series.metrics) == ("ce", 1.3)


def test_returnn_tf_engine_train_line() -> None:
    """rwth-i6/returnn, returnn/tf/engine.py, Engine.train_epoch (Runner.run with report_prefix "train epoch %s",
    "pretrain ..." in its pretraining) and Runner._print_process ("step %i", the sorted "%s %s" of its eval info,
    "cost:output" its output layer's loss): the run counts epochs; an evaluation's "epoch %i %r eval" is not it."""
    point = parse_line("train epoch 12, step 431, cost:output 0.8714, error:output 0.2519, 0.318 sec/step, "
                       "elapsed 0:02:17, exp. remaining 0:05:51, complete 28.12%")
    assert point is not None and (point.step, point.batch, point.counts_epochs) == (12, 431, True)
    assert training_loss(point.metrics) == ("cost:output", 0.8714)
    assert parse_line("epoch 12 'dev' eval, step 6, cost:output 0.9021, error:output 0.2708") is None


def test_spaced_fields_give_a_counter_line_its_loss() -> None:
    """rwth-i6/returnn, returnn/torch/engine.py, _print_process ("%s %s" of each score, fields apart by ", "), as a
    general rule: a loop line of "key value" fields apart by ", " or " | " names its counter and its loss or
    objective (cross-entropy "ce", "nll"; a perplexity is no loss)."""
    point = parse_line("iteration 500, nll 3.214, ppl 24.88, lr 0.0003")
    assert point is not None and point.step == 500
    assert training_loss(point.metrics) == ("nll", 3.214)
    piped = parse_line("step 120 | ce 2.310 | acc 0.41")
    assert piped is not None and piped.step == 120
    assert training_loss(piped.metrics) == ("ce", 2.31)
    assert parse_line("step 120, ppl 24.88, acc 0.41") is None


# ---------------------------------------------------------------- reinforcement learning: CleanRL, Stable-Baselines3


def test_cleanrl_episode_line_says_the_global_step(tmp_path: Path) -> None:
    """vwxyzjn/cleanrl, cleanrl/ppo.py (and dqn.py, ...), the rollout loop's print(f"global_step={global_step},
    episodic_return={...}") as an episode ends, its return a float or an array: the run's environment steps."""
    point = parse_line("global_step=1536, episodic_return=[-187.]")
    assert point is not None and (point.form, point.step) == ("cleanrl", 1536)
    series = _read(tmp_path, "global_step=512, episodic_return=[12.]\nSPS: 980\n"
                             "global_step=1024, episodic_return=21.5\n")
    assert series.step == 1024
    assert series.metrics["episodic_return"] == 21.5


def test_sb3_table_says_total_timesteps_and_its_losses(tmp_path: Path) -> None:
    """DLR-RM/stable-baselines3, stable_baselines3/common/logger.py, HumanOutputFormat.write (rows "| key | value |"
    between dashes, sorted, each key indented under its tag's row) and on_policy_algorithm.py, _dump_logs
    ("time/total_timesteps"): the step is total_timesteps, the train/ rows after it the last step's metrics."""
    table = ["-" * 40, "| rollout/               |            |", "|    ep_rew_mean         | 31.7       |",
             "| time/                  |            |", "|    iterations          | {it}          |",
             "|    total_timesteps     | {n}       |", "| train/                 |            |",
             "|    entropy_loss        | -0.671     |", "|    loss                | {loss}       |",
             "|    value_loss          | 40.2       |", "-" * 40]
    text = "\n".join(line.format(it=i, n=2048 * i, loss=9.0 - i) for i in (1, 2, 3) for line in table) + "\n"
    series = _read(tmp_path, text)
    assert series.step == 6144
    assert training_loss(series.metrics) == ("loss", 6.0)
    assert parse_line("|    value_loss          | 40.2       |") is None


# ---------------------------------------------------------------- MONAI's tutorials' loops


def test_monai_loop_counts_epochs_from_its_headers(tmp_path: Path) -> None:
    """Project-MONAI/tutorials, 3d_segmentation (spleen_segmentation_3d): print(f"epoch {epoch + 1}/{max_epochs}")
    after a rule of dashes, each step's f"{step}/{len(train_ds) // batch_size}, train_loss: {loss:.4f}", the epoch's
    f"epoch {epoch + 1} average loss: ..." and after the loop "train completed, best_metric: ... at epoch: ...":
    the run counts epochs (the header's is where it is), its end is said."""
    head = ["-" * 10, "epoch 1/2", "1/3, train_loss: 0.9120", "2/3, train_loss: 0.8410", "3/3, train_loss: 0.8005",
            "epoch 1 average loss: 0.8512", "-" * 10, "epoch 2/2", "1/3, train_loss: 0.7310",
            "2/3, train_loss: 0.7004"]
    series = _read(tmp_path, "\n".join(head) + "\n")
    assert (series.step, series.run_total, series.ended) == (2, 2, False)
    assert training_loss(series.metrics) == ("train_loss", 0.7004)
    done = head + ["3/3, train_loss: 0.6950", "epoch 2 average loss: 0.7088",
                   "train completed, best_metric: 0.6611 at epoch: 2"]
    series = _read(tmp_path, "\n".join(done) + "\n")
    assert (series.step, series.ended) == (2, True)


# ---------------------------------------------------------------- LLM pre-training loops: nanotron, GPT-NeoX, MaxText


def test_nanotron_line_with_human_formatted_values() -> None:
    """huggingface/nanotron, src/nanotron/logging/base.py, LoggerWriter.add_scalars_from_list ("iteration: %d / %d",
    then "tag: value" apart by " | ") and human_format (a value with its unit's letter, "1.2M"): the run's step of
    its train steps, the loss "lm_loss"; a value with a letter after it is no number (not its first digit)."""
    point = parse_line("iteration: 250 / 12000 | consumed_tokens: 262M | time_per_iteration_ms: 2.41K | "
                       "tokens_per_sec: 435K | tokens_per_sec_per_gpu: 54.4K | global_batch_size: 1.05M | "
                       "lm_loss: 3.87 | lr: 0.000291 | model_tflops_per_gpu: 181 | eta: 8:02:11")
    assert point is not None and (point.step, point.total) == (250, 12000)
    assert training_loss(point.metrics) == ("lm_loss", 3.87)
    assert "consumed_tokens" not in point.metrics and "tokens_per_sec" not in point.metrics


def test_gpt_neox_training_log_line() -> None:
    """EleutherAI/gpt-neox, megatron/training.py, training_log: " samples/sec: %.3f |" first, then " iteration
    %8d/%8d |", the learning rate, " approx flops per GPU: ..." and each loss of total_loss_dict " lm_loss: %.6E |"."""
    point = parse_line(" samples/sec: 88.412 | iteration     1400/  143000 | elapsed time per iteration (ms): 5790.3 | "
                       "learning rate: 5.994E-04 | approx flops per GPU: 143.2TFLOPS | lm_loss: 2.417831E+00 | "
                       "loss scale: 131072.0 | number of skipped iterations:   0 | number of nan iterations:   0 |")
    assert point is not None and (point.step, point.total) == (1400, 143000)
    assert training_loss(point.metrics) == ("lm_loss", 2.417831)


def test_maxtext_completed_step_and_its_config_steps(tmp_path: Path) -> None:
    """AI-Hypercomputer/maxtext, MaxText/metric_logger.py (its console line "completed step: %d, seconds: %.3f,
    TFLOP/s/device: ..., Tokens/s/device: ..., total_weights: %d, loss: %.3f"; an evaluation's "eval metrics after
    step: ..." is not a point) and pyconfig's "Config param steps: N" (the run's total)."""
    lines = ["Config param steps: 3000"]
    lines += [f"completed step: {s}, seconds: 1.212, TFLOP/s/device: 160.515, Tokens/s/device: 6758.001, "
              f"total_weights: 131072, loss: {9.0 - s / 10:.3f}" for s in range(4)]
    lines.append("eval metrics after step: 3, loss=8.400, total_weights=65536.0")
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert (series.step, series.run_total) == (3, 3000)
    assert training_loss(series.metrics) == ("loss", 8.7)


# ---------------------------------------------------------------- spaCy's training table


def test_spacy_table_rows_say_the_step_and_each_components_loss(tmp_path: Path) -> None:
    """explosion/spaCy, spacy/training/loggers.py, console_logger (header "E", "#", "Loss <pipe>" of each component,
    the scores, "Score", upper-cased; each row the epoch, the step, the losses "%.2f") and spacy/training/loop.py,
    train ("Saved pipeline to output directory" after its loop, where no error came): the step is "#", the loss in
    its components' parts."""
    text = ("ℹ Pipeline: ['tok2vec', 'tagger']\n"
            "E    #       LOSS TOK2VEC  LOSS TAGGER  TAG_ACC  SCORE \n"
            "---  ------  ------------  -----------  -------  ------\n"
            "  0       0          0.00        12.40    21.05    0.21\n"
            "  0     500         40.18      1703.22    88.61    0.89\n"
            "  2    1000         33.90       905.47    91.02    0.91\n")
    series = _read(tmp_path, text)
    assert (series.step, series.ended) == (1000, False)
    assert series.metrics["loss_tagger"] == 905.47 and series.metrics["loss_tok2vec"] == 33.9
    series = _read(tmp_path, text + "✔ Saved pipeline to output directory\ntraining/model-last\n")
    assert (series.step, series.ended) == (1000, True)


# ---------------------------------------------------------------- Lightning 0.x's bar of each epoch


def test_lightning_zero_bar_counts_epochs_from_its_postfix(tmp_path: Path) -> None:
    """Lightning-AI/pytorch-lightning 0.x, pytorch_lightning/models/trainer.py, Trainer.__train (a tqdm bar of
    nb_tng_batches + nb_val_batches each epoch; from 0.5 its description "Epoch {epoch_nb + 1}") and
    __tng_tqdm_dic (postfix "batch_nb", "epoch" the loop's own from 0, "v_nb"): the run counts epochs, from 1."""
    point = parse_line("Epoch 4:  50%|#####     | 150/300 [00:12<00:12, 12.00batch/s, batch_nb=149, epoch=3, "
                       "gpu=0, loss=0.812, v_nb=2]")
    assert point is not None
    assert (point.form, point.step, point.counts_epochs, point.batch, point.batches) == ("epoch-bar", 4, True, 150,
                                                                                         300)
    assert "epoch" not in point.metrics and training_loss(point.metrics) == ("loss", 0.812)
    bare = parse_line(" 20%|##        | 60/300 [00:05<00:20, 12.00it/s, batch_nb=59, epoch=0, tng_loss=2.301, v_nb=0]")
    assert bare is not None and (bare.step, bare.counts_epochs) == (1, True)
    # Lightning 1.x's bar names its epoch from 0 and says no loop's epoch: a bar of the epoch's batches
    later = parse_line("Epoch 3:  50%|#####     | 150/300 [00:12<00:12, 12.00it/s, loss=0.812, v_num=2]")
    assert later is not None and (later.step, later.counts_epochs) == (150, False)
    text = "\r".join(f"Epoch {e + 1}:  {p}%|#    | {n}/300 [00:10<00:10, 12.0batch/s, batch_nb={min(n, 239) - 1}, "
                     f"epoch={e}, gpu=0, loss={2.0 - e / 10:.3f}, v_nb=1]" for e in range(3) for p, n in
                     ((40, 120), (80, 240), (100, 300)))
    series = _read(tmp_path, text + "Epoch 00003: early stopping\n")
    assert (series.step, series.ended) == (3, True)


# ---------------------------------------------------------------- a loop's own lines beside a bar


def test_bar_that_counts_the_loops_steps_gives_its_total(tmp_path: Path) -> None:
    """tqdm/tqdm, tqdm/std.py, tqdm.__iter__ (the bar's count, updated as the loop goes) beside a loop's own
    print of its step without a total (a hand-written loop's "step N | loss x"): where the bar's count keeps with the
    loop's step, it counts the same steps and its total is the run's; a bar that starts again below the loop's step
    counts an epoch's batches, its total not the run's. Its end is no "done" without the program's word."""
    same = []
    for s in range(10, 60, 10):
        same += [f"Training:  {s // 10}%|#         | {s}/1000 [00:{s:02d}<10:00,  1.0it/s]",
                 f"step {s} | loss {3 - s / 100:.3f} | lr 0.0003"]
    series = _read(tmp_path, "\n".join(same) + "\n")
    assert (series.step, series.run_total) == (50, 1000)
    epochs, step = [], 0
    for _ in range(3):
        for b in (100, 200, 300):
            step += 100
            epochs += [f"{b // 3}%|###       | {b}/300 [00:10<00:20, 10.0it/s]", f"step {step} | loss 1.5 | lr 0.1"]
    series = _read(tmp_path, "\n".join(epochs) + "\n")
    assert (series.step, series.run_total) == (900, None)
    first = _read(tmp_path, "\n".join(epochs[:6]) + "\n")
    assert first.step == 300
    assert first.run_total is None or not first.reached(300, first.run_total)


# ---------------------------------------------------------------- fairseq's bar with --update-freq


def test_fairseq_bar_with_update_freq_counts_updates(tmp_path: Path) -> None:
    """facebookresearch/fairseq, fairseq_cli/train.py, train (the epoch's iterator wrapped in
    iterators.GroupedIterator(itr, update_freq) before progress_bar: the bar counts groups of update_freq batches,
    one update each; "num_updates=" its postfix): the run's total is its epochs times the bar's total."""
    lines = ["Namespace(max_epoch=4, max_update=0, update_freq=[8], arch='transformer')"]
    for e, n, u in ((1, 250, 250), (1, 500, 499), (2, 125, 624)):
        lines.append(f"epoch 00{e}:  {n // 5}%|##   | {n}/500 [01:00<03:00, 4.1it/s, loss=6.2, nll_loss=5.1, ppl=34.3, "
                     f"wps=9000, ups=4.1, wpb=40000, bsz=1200, num_updates={u}, lr=0.0005, gnorm=0.9, wall=60]")
    series = _read(tmp_path, "\n".join(lines) + "\n")
    assert (series.step, series.run_total) == (624, 2000)


# ---------------------------------------------------------------- Rich's default columns: a percentage, no count


def test_rich_default_columns_percentage_with_a_total_said_elsewhere(tmp_path: Path) -> None:
    """Textualize/rich, rich/progress.py, Progress.get_default_columns (TextColumn of the description, BarColumn,
    TaskProgressColumn "NN%", TimeRemainingColumn "0:01:02" or "-:--:--"; rich.progress.track's): no count, so a
    step only where the run's total is said elsewhere (max_steps), no total made up; an evaluation's is not the
    run's."""
    assert parse_line("Evaluating ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━  42% -:--:--") is None
    point = parse_line("Training ━━━━━━━━━━━━━━━━━━━━━╺━━━━━━━━━━━━━━━━━━  52% 0:03:10")
    assert point is not None and (point.step, point.total, point.percent) == (None, None, 52.0)
    rule = "━" * 40
    bars = "".join(f"Training {rule}  {p}% 0:0{9 - p // 10}:00\n" for p in (10, 20, 30))
    series = _read(tmp_path, "max_steps: 5000\n" + bars)
    assert (series.step, series.run_total) == (1500, 5000)
    series = _read(tmp_path, bars)
    assert (series.step, series.run_total) == (None, None)


# ---------------------------------------------------------------- LLaMA-Factory's logger


def test_llamafactory_header_before_the_trainers_dict(tmp_path: Path) -> None:
    """hiyouga/LLaMA-Factory, src/llamafactory/extras/logging.py (formatter "[%(levelname)s|%(asctime)s]
    %(name)s:%(lineno)s >> %(message)s") and src/llamafactory/train/callbacks.py, LogCallback.on_log (webui mode:
    "{'loss': ..., 'learning_rate': ..., 'epoch': ...}" after it): the header off, the dict the Trainer's; the
    Trainer's banner under the older "[INFO|trainer.py:2134] <date> >> " header says the run's total."""
    point = parse_line("[INFO|2025-02-11 08:15:40] llamafactory.train.callbacks:307 >> "
                       "{'loss': 1.0412, 'learning_rate': 9.8000e-05, 'epoch': 0.21}")
    assert point is not None and point.format == "hf"
    assert training_loss(point.metrics) == ("loss", 1.0412)
    text = ("[INFO|trainer.py:2134] 2025-02-11 08:10:00,512 >>   Total optimization steps = 2,400\n"
            "  1%|          | 30/2400 [01:30<1:58:30,  3.00s/it]\n"
            "[INFO|2025-02-11 08:11:30] llamafactory.train.callbacks:307 >> "
            "{'loss': 1.0412, 'learning_rate': 9.8000e-05, 'epoch': 0.04}\n")
    series = _read(tmp_path, text)
    assert (series.step, series.run_total) == (30, 2400)
    assert training_loss(series.metrics) == ("loss", 1.0412)
    assert not any("llamafactory" in name for name in series.metrics)


# ---------------------------------------------------------------- tqdm-loggable's records (levanter, openpi)


def test_tqdm_loggable_record_is_read_as_its_bar(tmp_path: Path) -> None:
    """tradingstrategy-ai/tqdm-loggable, tqdm_loggable/tqdm_logging.py, logging_tqdm.display ("Progress on:%s %s/%s
    rate:%s remaining:%s elapsed:%s postfix:%s", the counts by tqdm's format_sizeof with their unit, the rate "%.1f
    it/s" or "%.1f s/it"; its first releases "%f/%f" and no remaining), as levanter's pbar_logger (desc "train",
    postfix "loss=") logs it where the output is no terminal: the bar's count, total, rate and postfix."""
    point = parse_line("2025-01-09 11:20:31,044 - INFO - tqdm_loggable.tqdm_logging - Progress on:train "
                       "2.40kit/20.0kit rate:1.6it/s remaining:3:03:20 elapsed:25:00 postfix:loss=3.12")
    assert point is not None and point.phase == "train"
    assert (point.step, point.total, point.rate, point.elapsed) == (2400, 20000, 1.6, 1500.0)
    assert training_loss(point.metrics) == ("loss", 3.12)
    slow = parse_line("Progress on:train 9.00it/20.0kit rate:2.5s/it remaining:13:53:07 elapsed:00:22 postfix:-")
    assert slow is not None and (slow.step, slow.rate) == (9, 0.4)
    old = parse_line("Progress on:train 300.000000/5000.000000 rate:3.1 it/s elapsed:96.7 postfix:None")
    assert old is not None and (old.step, old.total) == (300, 5000)
    evaluation = parse_line("Progress on:eval 12.0it/50.0it rate:4.0it/s remaining:00:09 elapsed:00:03 postfix:-")
    assert evaluation is not None and evaluation.phase == "evaluation"
    text = "".join(f"Progress on:train {n:.2f}kit/20.0kit rate:1.6it/s remaining:3:00:00 elapsed:{n * 10:.0f}:00 "
                   f"postfix:loss={4 - n / 10:.2f}\n" for n in (1.2, 2.4, 3.6))
    series = _read(tmp_path, text)
    assert (series.step, series.run_total) == (3600, 20000)


# ---------------------------------------------------------------- OLMo-core's console logger


def test_olmo_core_progress_marker_with_eta_and_unknown_total(tmp_path: Path) -> None:
    """allenai/OLMo-core, src/olmo_core/train/callbacks/console_logger.py, ConsoleLoggerCallback._get_progress_marker
    ("[step={step}/{max_steps or '???'},epoch={epoch},eta={eta}]", the eta only where known) and its metrics on the
    indented lines after it ("    {name}={format_float(value)}", the loss "train/CE loss"): the run's step and total,
    none where it says "???"."""
    text = ("[step=10/20000,epoch=1,eta=13h12m]\n    train/CE loss=7.412\n    train/PPL=1,655\n"
            "[step=20/20000,epoch=1,eta=13h10m]\n    train/CE loss=6.918\n")
    series = _read(tmp_path, text)
    assert (series.step, series.run_total) == (20, 20000)
    assert training_loss(series.metrics) == ("CE_loss", 6.918)
    unknown = _read(tmp_path, "[step=30/???,epoch=2]\n    train/CE loss=5.5\n")
    assert (unknown.step, unknown.run_total) == (30, None)


def test_tqdm_rich_bar_with_thousands_commas() -> None:
    """tqdm/tqdm, tqdm/rich.py, tqdm_rich.__init__ (columns: description, "{task.percentage:>4.0f}%", BarColumn,
    FractionColumn "{completed:,.0f}/{total:,.0f}", "[ elapsed < remaining , rate ]"), as Stable-Baselines3's
    ProgressBarCallback draws it over total_timesteps; a console that is no terminal prints its last frame: the
    counts with their thousands' commas, the run's step and total."""
    point = parse_line("  42% ━━━━━━━━━━━━━━━━━━━━━╸                               1,261,568/3,000,000  "
                       "[ 0:09:31 < 0:13:07 , 2,207 it/s ]")
    assert point is not None and (point.step, point.total, point.phase) == (1261568, 3000000, "train")


# ---------------------------------------------------------------- DiT's train.py and its forks


def test_dit_step_line_and_its_epochs(tmp_path: Path) -> None:
    """facebookresearch/DiT, train.py, main (logger "[%(asctime)s] %(message)s": "Training for {epochs} epochs...",
    "Beginning epoch {epoch}...", f"(step={train_steps:07d}) Train Loss: {avg_loss:.4f}, Train Steps/Sec: ..."): the
    run's step zero-padded, its loss; a field's name with a colon in it is no "key value" field's ("Loss1_ae: 0.2")."""
    text = ("[2025-03-01 10:00:09] Training for 80 epochs...\n[2025-03-01 10:00:09] Beginning epoch 0...\n"
            "[2025-03-01 10:01:00] (step=0000100) Train Loss: 0.1534, Train Steps/Sec: 2.31\n"
            "[2025-03-01 10:01:43] (step=0000200) Train Loss: 0.1493, Train Steps/Sec: 2.32\n")
    series = _read(tmp_path, text)
    assert series.step == 200
    assert training_loss(series.metrics) == ("Train_Loss", 0.1493)
    point = parse_line("(step=0012000) Loss2: 0.4, Loss1_ae: 0.2, Loss1_disc: 0.1, Train Steps/Sec: 2.31")
    assert point is not None and point.step == 12000
    assert not any(name.endswith(":") for name in point.metrics)
    assert loss_parts(point.metrics) == {"Loss2": 0.4, "Loss1_ae": 0.2, "Loss1_disc": 0.1}


def test_counter_line_with_its_loss_in_parts() -> None:
    """facebookresearch/DiT's forks' train.py (a logger.info of "(step=%07d)" and several losses by their own names)
    and the GAN loops' "Step N: loss_G x, loss_D y": a counter of the run's with two named loss parts or more is a
    progress line, its loss said in parts; a count that leads the line with no loss is none."""
    point = parse_line("Step 500: loss_G 0.41, loss_D 0.22")
    assert point is not None and point.step == 500
    assert loss_parts(point.metrics) == {"loss_G": 0.41, "loss_D": 0.22}
    assert parse_line("[450/10000] val_loss: 0.5, acc: 0.5, lr: 0.1, wd: 0.05, m: 0.9, b1: 0.9, b2: 0.99") is None


# ---------------------------------------------------------------- NeMo-RL's step banners


def test_nemo_rl_step_banner_and_its_results(tmp_path: Path) -> None:
    """NVIDIA-NeMo/RL, nemo_rl/algorithms/grpo.py and sft.py (print(f"\\n{'=' * 25} Step {step + 1}/{min(len(
    dataloader), max_num_steps)} {'=' * 25}") as each step begins, "===== Epoch {e + 1}/{max_num_epochs} =====" before
    each epoch's steps, then "📊 Training Results:" and "  • Loss: ..."): the run's step of its total, an epoch's
    steps after its epoch's banner, the bulleted loss the step's; the step said as it begins is under way, never
    "done" without the program's word."""
    text = "".join(f"\n{'=' * 25} Step {s}/500 {'=' * 25}\n▶ Preparing batch...\n\n📊 Training Results:\n"
                   f"  • Loss: {0.05 - s / 1000:.4f}\n  • Avg Reward: 0.1100\n" for s in (1, 2, 3))
    series = _read(tmp_path, text)
    assert (series.step, series.run_total) == (3, 500)
    assert training_loss(series.metrics) == ("Loss", 0.047)
    epochs = []
    for e in (1, 2):
        epochs.append(f"{'=' * 25} Epoch {e}/2 {'=' * 25}")
        for s in (1, 2, 3):
            epochs += [f"{'=' * 25} Step {s}/3 {'=' * 25}", "📊 Training Results:",
                       f"  • Loss: {2 - e / 2 - s / 10:.4f}"]
    series = _read(tmp_path, "\n".join(epochs[:-2]) + "\n")
    assert (series.step, series.run_total, series.restarts) == (6, 6, [])
    assert series.step is not None and series.run_total is not None
    assert not series.reached(series.step, series.run_total)
