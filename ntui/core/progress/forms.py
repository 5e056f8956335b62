"""The forms table: each training loop's own progress line, one row each (:data:`FORMS`), and the forms whose line
also holds another counter's bar (:data:`BAR_FORMS`).

A row is a regular expression whose named groups say where the run is, and in which unit the run counts
(:class:`LineForm`); :func:`ntui.core.progress.lines.parse_line` tries the rows in order, first match wins. Data
only: no reading here (that is :mod:`ntui.core.progress.lines`'). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["BAR_COUNTED", "BAR_FORMS", "FORMS", "INT", "NUM", "LineForm"]

#: a number as programs print it: digits with thousands' commas, a fraction, an exponent, or nan / inf (as Python
#: prints them, or as C, Java and JavaScript do: "-nan", "NaN", "Inf")
NUM = r"[-+]?(?:\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|nan|inf|NaN|Inf|NAN|INF)"
#: a whole number with thousands' commas
INT = r"\d[\d,]*"


@dataclass(frozen=True)
class LineForm:
    """One framework's progress line: a regular expression whose named groups say where the run is.

    ``step`` (the run's step, or iteration or update) and ``total`` (the run's); or ``batch`` of ``batches`` within
    ``epoch`` (then the run's step is the epochs before times an epoch's batches, plus this one); ``epochs`` the
    run's epochs. ``first_epoch``: how the program numbers its first epoch. ``unit``: what the run counts in, as
    the program schedules it: ``step`` (iterations, updates), or ``epoch`` (Keras' ``fit(epochs=)``, the vision
    scripts' ``--epochs``): then the step shown is the epoch the line names, the total the run's epochs, and an
    epoch's batch lines give metrics only. The metrics are the line's ``key: value`` / ``key=value`` pairs after
    the match (``loss`` among them)."""

    name: str
    regex: re.Pattern[str]
    first_epoch: int = 0
    unit: Literal["step", "epoch"] = "step"
    generic: bool = False  # a hand-written loop's words: not when an evaluation's words lead the line
    # a counter of the whole run's: not where the line names its epoch of the run's epochs before it (a hand-written
    # loop's "Epoch[3/120] Iter[45/383]": its iterations are then the epoch's, read by a form that says both)
    run_counter: bool = False


def _form(name: str, regex: str, first_epoch: int = 0, unit: Literal["step", "epoch"] = "step", *,
          generic: bool = False, run_counter: bool = False) -> LineForm:
    return LineForm(name, re.compile(regex), first_epoch, unit, generic, run_counter)


#: Every form, first match wins (the more specific before the general); see each row's name for its program.
FORMS: tuple[LineForm, ...] = (
    # fairseq: "| epoch 001:    450 / 2240 loss=8.1, ..., num_updates=445" (its updates are the run's steps; the
    # batch counter of the epoch is not), the hydra era's "train_inner | epoch 001: ...", and the 2017 form without
    # num_updates ("| epoch 010  2000 / 8223 loss=1.27 (1.50)"); a fork's longer prefix before the count (the TPU
    # fork's "| epoch 001 | training on xla:0/3:     21 / 4830 loss=...", not a validation's "| valid on 'valid' ...")
    _form("fairseq", r"\bepoch (?P<epoch>\d+)(?: \| (?![^|]*\b(?:valid|eval|test))[^|:]*(?::[^|:\s]*)*)?:?\s+"
          rf"(?P<batch>\d+) / (?P<batches>\d+) .*?\bnum_updates=(?P<step>{INT})", 1),
    _form("fairseq", r"^\|? ?epoch (?P<epoch>\d+):?\s+(?P<batch>\d+) / (?P<batches>\d+) loss[=:]", 1, "epoch"),
    _form("fairseq", rf"\btrain_inner \| \{{.*?\"num_updates\": \"?(?P<step>{INT})"),
    # its epoch's summary, the JSON form: "| train | {"epoch": 13, "train_loss": "8.595", ..., "train_num_updates": ..."
    _form("fairseq", rf"\btrain \| \{{.*?\"train_num_updates\": \"?(?P<step>{INT})"),
    # and the plain form: "| epoch 002 | loss 9.292 | nll_loss ... | num_updates 308 | lr ..." (the valid line's
    # "| epoch 002 | valid on 'valid' subset |" is not it; the hydra era's "valid | epoch 001 | loss" is an eval)
    _form("fairseq", rf"\bepoch (?P<epoch>\d+) \| loss {NUM} \|.*?\| num_updates (?P<step>{INT}) \|", 1,
          generic=True),
    # fairseq's Lua era: "| epoch 031 | 0248130 updates | words/s 14775| trainloss 2.23 | train ppl 4.68" (its
    # updates are the run's steps; its checkpoint blocks say the same updates)
    _form("fairseq-lua", r"\| epoch (?P<epoch>\d+) \| (?P<step>\d+) updates \|", 1),
    # mmengine / mmcv: "Epoch(train)  [83][ 150/2693]", "Epoch [1][1500/14659]", "Iter [N/40000]", "Iter(train) [..]"
    _form("mmengine", r"\bEpoch(?:\(train\))?\s*\[(?P<epoch>\d+)\](?:/\d+)?\s*"
          r"\[\s*(?P<batch>\d+)/(?P<batches>\d+)\]", 1),
    _form("mmengine", r"\bIter(?:\(train\))?\s*\[\s*(?P<step>\d+)/(?P<total>\d+)\]", run_counter=True),
    # Swin-style "Train: [30/300][210/2859]" (epochs from 0) and the torchvision MetricLogger's
    # "Epoch: [7]  [ 600/2916]"
    _form("swin", r"\bTrain: \[(?P<epoch>\d+)/(?P<epochs>\d+)\]\[(?P<batch>\d+)/(?P<batches>\d+)\]", unit="epoch"),
    # OpenPCDet's timm-style logger: "Train:    2/6 ( 33%) [ 149/412 ( 36%)]  Loss: 9.7 (23.7)" (epochs from 1)
    _form("openpcdet", r"\bTrain:\s+(?P<epoch>\d+)/(?P<epochs>\d+) \(\s*\d+%\) \[\s*(?P<batch>\d+)/(?P<batches>\d+) ",
          unit="epoch"),
    # (and the PyTorch ImageNet example's ProgressMeter, "Epoch: [3][ 120/5005]\tTime ...\tLoss 6.1e+00 (6.3e+00)");
    # DINO's and its forks' header names the run's epochs too, its epochs from 0 ("Epoch: [3/100]  [ 100/1251]")
    _form("metriclogger", r"\bEpoch: \[(?P<epoch>\d+)/(?P<epochs>\d+)\]\s*\[\s*(?P<batch>\d+)/(?P<batches>\d+)\]",
          unit="epoch"),
    _form("metriclogger", r"\bEpoch: \[(?P<epoch>\d+)\]\s*\[\s*(?P<batch>\d+)/(?P<batches>\d+)\]", unit="epoch"),
    # timm's train.py: "Train: 12 [ 400/1251 ( 32%)]  Loss: 3.456 (3.51)  Time: ..." (epochs from 0)
    _form("timm", r"\bTrain: (?P<epoch>\d+) \[\s*(?P<batch>\d+)/(?P<batches>\d+) \(\s*\d+%\)\]", unit="epoch"),
    # torch-rnn: "Epoch 1.06 / 50, i = 6045 / 283700, loss = 1.62"
    _form("torch-rnn", r"\bEpoch [\d.]+ / (?P<epochs>\d+), i = (?P<step>\d+) / (?P<total>\d+), loss ="),
    # BasicSR: "[..][epoch:  3, iter:  20,100, lr:(...)]"; VISSL "[ep: 0] iter: 400;"; scepter "iter: [N/800]"
    _form("basicsr", rf"\[epoch:\s*(?P<epoch>\d+), iter:\s*(?P<step>{INT}),"),
    _form("vissl", r"\[ep: (?P<epoch>\d+)\] iter: (?P<step>\d+);"),
    _form("scepter", r"\biter: \[(?P<step>\d+)/(?P<total>\d+)\]", run_counter=True),
    # detectron2's events: "eta: 8:08:27  iter: 639  total_loss: 1.2", maskrcnn-benchmark's "iter: 220  loss: 1.45"
    _form("detectron2", r"\biter: (?P<step>\d+)\s+(?:total_)?loss:"),
    # the PyTorch examples' "Train Epoch: 3 [2560/60000 (4%)]\tLoss: 0.21" (and OpenCLIP's, counting samples; VITS'
    # "Train Epoch: 5 [40%]"): the run counts epochs
    _form("train-epoch", r"\bTrain Epoch: (?P<epoch>\d+) \[\s*(?:(?P<batch>\d+)/(?P<batches>\d+)\b|\d+%\])",
          unit="epoch"),
    # TF-slim and the TF object detection API: "global step 1234: loss = 0.8 (1.2 sec/step)"
    _form("tf-slim", r"\bglobal step (?P<step>\d+): loss = "),
    # PaddleNLP's example loops: "global step 100/5000, epoch: 0, batch: 100, loss: 0.51, speed: 2.5 step/s" (the
    # run's optimizer steps, of its num_training_steps where printed; the epoch's batch counter is not the step)
    _form("paddle", rf"\bglobal step (?P<step>{INT})(?:/(?P<total>{INT}))?, epoch: \d+, batch: \d+,"),
    # big_vision's BigVisionMetricWriter.measure: one metric a line, "[120] training_loss = 4.21" (its step in
    # brackets), and its Chrono's note "Steps:120/5000 [2.4%]" (the run's total)
    _form("big_vision", rf"^\[(?P<step>\d+)\] (?=[A-Za-z][\w/@.:-]* = {NUM}\s*$)"),
    _form("big_vision", r"\bSteps:(?P<step>\d+)/(?P<total>\d+) \[[\d.]+%\]"),
    # XGBoost's evaluation log (learner.cc's EvalOneIter, python's EvaluationMonitor: f"[{epoch}]" then
    # f"\t{data}-{metric}:{score:.5f}" for each watched set and metric): "[17]\ttrain-rmse:0.12345", its boosting
    # rounds from 0 as printed (a metric on a set is no loss: an evaluation of the model after the round)
    _form("xgboost", rf"^\[(?P<step>\d+)\]\t(?=[A-Za-z][\w.@]*-[\w@.:-]+:{NUM}(?:\+{NUM})?(?:\t|\s*$))"),
    # LightGBM's log_evaluation (callback.py): f"[{env.iteration + 1}]\t{result}", each result "{set}'s {metric}:
    # {score:g}" tab-joined: "[750]\tvalid_0's auc: 0.81", its rounds from 1
    _form("lightgbm", rf"^\[(?P<step>\d+)\]\t(?=[\w.@-]+'s [\w@.:-]+: {NUM})"),
    # Composer's ConsoleLogger where max_duration is in tokens or samples: "[token=1048576/100000000]:", its metrics on
    # the tab-indented lines after it (in batches it is "[batch=N/T]:", read by the generic counter reader)
    _form("composer", r"^\[(?:token|sample)=(?P<step>\d+)/(?P<total>\d+)\]:?\s*$"),
    # CLU's LoggingWriter.write_scalars (the flax examples', scenic's, a JAX loop's metric writer): "[%d]%s %s" of the
    # step, " collection=NAME" where it has one, and the scalars "k=v" sorted, comma-separated
    # (a collection that names an evaluation, t5x's "collection=training_eval/c4", is no training point)
    _form("clu", rf"^\[(?P<step>\d+)\](?: collection=(?P<collection>[\w/.-]+))? "
          rf"(?=[A-Za-z][\w/@.:-]*={NUM}(?:,|\s*$))"),
    # accelerate's examples (nlp_example.py, training_function): accelerator.print(f"epoch {epoch}:", eval_metric),
    # the epoch's evaluation dict and nothing else of its progress (epochs from 0)
    _form("accelerate-example", r"^epoch (?P<epoch>\d+): \{", unit="epoch"),
    # the PEFT example notebooks' own loops (examples/causal_language_modeling/peft_*_clm.ipynb and others): at each
    # epoch's end print(f"{epoch=}: {train_ppl=} {train_epoch_loss=} {eval_ppl=} {eval_epoch_loss=}"), Python's
    # self-documenting f-string: "epoch=3: train_ppl=tensor(1.2, device='cuda:0') train_epoch_loss=tensor(0.18, ...)"
    # (epochs from 0; the epoch's train and eval bars around it count batches, not the run)
    _form("epoch-fstring", r"^epoch=(?P<epoch>\d+): (?=[A-Za-z]\w*=)", unit="epoch"),
    # diffusers' Flax training scripts (train_text_to_image_flax.py, train_dreambooth_flax.py): at each epoch's end
    # the epochs bar's write(f"Epoch... ({epoch + 1}/{num_train_epochs} | Loss: {train_metric['loss']})"), the
    # loss's full repr; the run counts epochs, from 1
    _form("diffusers-flax", r"^Epoch\.\.\. \((?P<epoch>\d+)/(?P<epochs>\d+) \| (?=Loss: )", 1, "epoch"),
    # the legacy (epoch-based) OpenNMT-py's Statistics.output(): "Epoch %2d, %5d/%5d; acc: %6.2f; ppl: %6.2f; %3.0f
    # src tok/s; %3.0f tgt tok/s; %6.0f s elapsed" of the epoch's batches every report_every; the run counts epochs
    # (its -epochs), from 1
    _form("opennmt-legacy", r"^Epoch\s*(?P<epoch>\d+),\s*(?P<batch>\d+)/\s*(?P<batches>\d+); acc:", 1, "epoch"),
    # RETURNN's engine (its _print_process): "ep 55 train, step 1610, ce 0.357, fer 0.103, ..., complete 96.74%", the
    # step the epoch's (from 0), the epoch the run's unit (from 1; an evaluation's "ep 55 dev eval, step 3" is not it),
    # the fields "key value" apart by ", "
    _form("returnn", r"^ep (?P<epoch>\d+) train, step (?P<batch>\d+)(?=,|\s*$)", 1, "epoch"),
    # (its TF engine's Runner: "train epoch 3, step 120, cost:output 1.234, error:output 0.31, 0.412 sec/step, ...",
    # "pretrain epoch 1, ..." in its pretraining; an evaluation's "epoch 3 'dev' eval, step 4" is not it)
    _form("returnn", r"^(?:pre)?train epoch (?P<epoch>\d+), step (?P<batch>\d+)(?=,|\s*$)", 1, "epoch"),
    # CleanRL's single-file agents (ppo.py, dqn.py, ...): print(f"global_step={global_step}, episodic_return=...") as
    # each episode ends, its value a float or an array ("[-200.]"): the run's environment steps
    _form("cleanrl", r"\bglobal_step=(?P<step>\d+), episodic_return="),
    # Stable-Baselines3's HumanOutputFormat.write: a table of "| key | value |" rows between dashes, its keys sorted
    # under their tags ("| time/ |", then "|    total_timesteps | 10240 |"): the run's environment steps
    _form("sb3", r"^\|\s+total_timesteps\s+\|\s+(?P<step>\d+)\s*\|\s*$"),
    # MONAI's tutorials' loops: "epoch 3/600" as an epoch begins (a declaration), then each step's
    # f"{step}/{len(train_ds) // batch_size}, train_loss: {loss:.4f}", the epoch's batches from 1
    _form("monai", r"^(?P<batch>\d+)/(?P<batches>\d+), train_loss: ", 1, "epoch"),
    # AllenNLP 0.x's Trainer with no_tqdm: logger.info("Batch %d/%d: %s", batch_num, num_training_batches,
    # description), its description the metrics "name: %.2f" joined by ", " and " ||" after them, under its epoch's
    # header logger.info("Epoch %d/%d", epoch, num_epochs - 1): the epoch's batches; the run counts epochs
    _form("allennlp", r"^Batch (?P<batch>\d+)/(?P<batches>\d+): (?=.*\|\|\s*$)", unit="epoch"),
    # DeepSpeed's pipeline engine: "steps: 120 loss: 2.1829 iter time (s): 0.212 samples/sec: 302.1"
    _form("deepspeed-pipe", r"^steps: (?P<step>\d+) loss: "),
    # pytorch-tabnet: "epoch 12  | loss: 0.57291 | val_auc: 0.8 |  0:04:59s" (epochs from 0)
    _form("tabnet", r"^epoch:? (?P<epoch>\d+)\s+\|\s+loss ?:", unit="epoch"),
    # litgpt "Ep 1 | iter 40 | step 10: loss train ..." (steps are optimizer steps), nanoGPT "iter 120: loss 3.2,
    # time 41ms", minGPT "iter 100: train loss 2.1"
    # (and lit-gpt 2023's "iter 59 step 30: loss 9.3", "Epoch 12 | iter 960750 step 192150 | loss train"): the
    # optimizer steps, or the iterations where the run's total counts those (max_iters); mlx-lm's "Iter 180: Train
    # loss 0.001, Learning Rate ..."
    # (lit-gpt's XLA scripts, xla/finetune/*.py, print no loss, its .item() a sync they leave out: "iter 210 step 211:
    # iter time: 2142.35ms (optimizer.step)"; TinyLlama's pretrain script brackets the counters: "[iter 40 step 10]:
    # loss 9.3, lr ...")
    _form("litgpt", r"\biter (?P<iters>\d+)\s*\|?\s*step (?P<step>\d+)\]?\s*[:|]\s*(?:loss\b|iter time: [\d.]+ ?ms)"),
    _form("nanogpt", r"\b[Ii]ter (?P<step>\d+): (?:[Tt]rain )?[Ll]oss\b"),
    # char-rnn-tensorflow and its forks: "890/892 (epoch 3), train_loss = 1.440, time/batch = 0.163", the batches of
    # the whole run (epochs x an epoch's batches) counted from 0
    _form("char-rnn", r"^\s*(?P<step>\d+)/(?P<total>\d+) \(epoch (?P<epoch>\d+)\),? (?:train_)?loss\b"),
    # MMF's logistics callback: "progress: 100/12000, train/<task>/cross_entropy: 0.6, ..., num_updates: 100"
    _form("mmf", r"\bprogress: (?P<step>\d+)/(?P<total>\d+), .*\bmax_updates: \d"),
    # Megatron's --log-progress file, tab-separated: "<date>\tJob ID: N\t# GPUs: 32\tSaving async checkpoint\t
    # Iteration: 250\tJob throughput: ..."
    _form("megatron-progress", r"\tIteration: (?P<step>\d+)(?:\t|\s*$)"),
    # the foundation-model-stack's report: "0 405 2024-07-22 06:29:36.465924 {'loss': '4.3750', ...}" (epoch, step,
    # the time, a dict of strings)
    _form("fms", r"^(?P<epoch>\d+) (?P<step>\d+) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \{"),
    # llm.c "step   12/60 | train loss 5.1 |", build-nanoGPT "step 119, loss: 6.2", torchtune "Step 140 | loss:1.1"
    _form("step-loss", r"\b[Ss]tep\s+(?P<step>\d+)\s*(?:/\s*(?P<total>\d+))?\s*[,|:]\s*(?:train )?loss\b"),
    # a step then "|"-separated fields before the loss: NeMo Automodel's "step 63 | epoch 1 | loss 0.55 | grad_norm"
    _form("step-fields", r"\b[Ss]tep\s+(?P<step>\d+)(?:\s*/\s*(?P<total>\d+))?\s*\|"
          r"(?:\s*[A-Za-z_]\w*[ :=]\s*[\d.e+-]+\s*\|){1,3}\s*(?:train(?:ing)?[ _])?[Ll]oss\b", generic=True),
    # hand-written loops: "Epoch [2/10], Step [100/600], Loss: 0.22", "epoch 3/20 iter 40/500 loss 1.2" (an
    # epoch's steps of the run's epochs; epochs from 1 unless one says 0), "Iteration 300/5000, loss = 0.51",
    # "Step: 100, Loss: 0.2"
    # (the batch's count may go unnamed, in brackets or parentheses: "Epoch:[2/12](15200/18742) loss:2.3")
    _form("epoch-step", r"\b[Ee]poch\s*:?\s*\[?\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\s*\]?\s*[,|-]?\s*"
          r"(?:(?:[Ss]tep|[Ii]ter(?:ation)?|[Bb]atch)\s*[:\[]?\s*|[\[(]\s*)(?P<batch>\d+)\s*/\s*(?P<batches>\d+)", 1,
          generic=True),
    # a loop that names its epoch and a batch counter that starts again at each epoch, with no epoch's length:
    # icefall's "Epoch 3, batch 450, batch avg loss ...", "epoch 2 iteration1400, Loss: 2.6": the run counts epochs
    _form("epoch-batch", r"\b[Ee]poch (?P<epoch>\d+),? (?:batch|iter(?:ation)?)[ :]?\s*(?P<batch>\d+)(?![\d/]|\s*/)",
          unit="epoch", generic=True),
    _form("iter-loss", r"\b(?:[Ii]ter(?:ation)?|[Ss]tep)\s*[:\[=]?\s*(?P<step>\d+)(?:\s*/\s*(?P<total>\d+))?\s*\]?"
          r"[,|:]?\s+(?:[\w ]*?[:=] ?[\d.e+-]+[,|]?\s+)??(?:train(?:ing)?[ _])?[Ll]oss\b", generic=True),
    # a loop that names its epoch and its loss: DeepDanbooru's "Epoch[1] Loss=0.0098, P=0.62, ..., 99.88 %",
    # "Epoch [3] loss: 0.21"; the DARTS family's "epoch 3 lr 9.7e-02" before its unnamed "train 050 ..." numbers
    _form("epoch-loss", r"\bEpoch\s?\[(?P<epoch>\d+)\]\s+[Ll]oss\s*[=:]", unit="epoch"),
    _form("epoch-lr", r"\bepoch (?P<epoch>\d+) lr [\d.]+(?:e[-+]?\d+)?\s*$", unit="epoch"),
    # Keras: "Epoch 66/150" on a line of its own (epochs from 1), then its step bar "125/125 [=====] - 4s ..."; the
    # same header as the PyTorch fine-tuning tutorials' train_model() prints it, print(f"Epoch {epoch}/{num_epochs -
    # 1}") before print("-" * 10) (from 0, the last one's index: read as Keras' "Epoch 0/E"), and as loops that train
    # several models print it, the model's name first (print(f"{name} - Epoch {epoch}/{num_epochs - 1}"))
    _form("keras", r"^(?:[\w.-]+ - )?Epoch (?P<epoch>\d+)/(?P<epochs>\d+)\s*$", 1, "epoch"),
    # the same as a banner between rules: "======== Epoch  41 / 250 ========", "--- Epoch 3/20 ---" (epochs from 1)
    _form("epoch-banner", r"^\s*[=*#~-]{3,}\s*Epoch\s+(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\s*[=*#~-]{3,}\s*$", 1,
          "epoch"),
    # (and without the run's epochs, a block of the epoch's results under it: yl4579's AuxiliaryASR, StyleTTS,
    # PL-BERT train.py: logger.info('--- epoch %d ---' % epoch) then '%-15s: %.4f' of each result; epochs from 1)
    _form("epoch-banner", r"^\s*[=*#~-]{3,}\s*[Ee]poch\s+(?P<epoch>\d+)\s*[=*#~-]{3,}\s*$", 1, "epoch"),
    # NeMo-RL's algorithms (grpo.py, sft.py, dpo.py): "=========== Step 5/500 ===========" (25 "=" each side) as
    # each step begins, of its dataloader's length or max_num_steps (an epoch's, where its epoch's banner before it
    # says the run's epochs: read.py gives the step that epoch), its results on bulleted lines after it
    _form("step-banner", r"^\s*[=*#~-]{3,}\s*Step\s+(?P<step>\d+)\s*/\s*(?P<total>\d+)\s*[=*#~-]{3,}\s*$"),
    # cellpose: "[INFO] Epoch 40, Time 44303.8s, Loss 0.4555, LR 0.2000" (every 10 epochs)
    _form("cellpose", r"\bEpoch (?P<epoch>\d+), Time [\d.]+s, Loss ", unit="epoch"),
    # the PyTorch DDP tutorial's trainer: "[RANK 3] Epoch 4 | Batchsize: 32 | Steps: 235 | Loss: 0.1" once an epoch
    _form("ddp-tutorial", r"\bEpoch (?P<epoch>\d+) \| Batchsize: \d+ \| Steps: \d+", unit="epoch"),
    # nnU-Net's trainer, its log file's "<date>: Epoch 5" at each epoch's start (from 0), then "train_loss -0.2722",
    # "val_loss ...", "Epoch time: 120.45 s" on lines of their own; nnU-Net v1's (network_trainer.py's "\nepoch: ",
    # its epoch: "epoch:  5", then "train loss : -0.2722"); and any loop's "Epoch N" alone as its header, also
    # between a banner's rules (a hand-written loop's print('*' * 12 + 'epoch: ' + str(epoch) + ' ' + '*' * 15))
    _form("epoch-header", r"^\s*(?:[=*#~-]{3,} ?)?[Ee]poch:? +(?P<epoch>\d+)\s*(?:[=*#~-]{3,}\s*)?$", unit="epoch"),
    # a hand-written loop's header of each epoch on a line of its own, its epoch of the run's said with a colon or
    # in words: print(f"Epoch: {epoch}/{epochs}"), print(f"Epoch {epoch+1} of {epochs}"), then its bars over the
    # epoch's batches and its summary lines: the run counts epochs, from 1 (as Keras' "Epoch 3/10" header)
    # (not sd-scripts' "epoch 1/40" before its bar over the run's steps: a colon, or the word "of")
    _form("epoch-of-header", r"^\s*[Ee]poch(?::\s*|\s+(?=\d+ +of ))(?P<epoch>\d+)(?:\s*/\s*| +of +)(?P<epochs>\d+)\s*$",
          1, "epoch"),
    # Marian's "Ep. 1 : Up. 1000 : Sen. 123,456 : Cost 5.67812345 : Time 120.50s : 12345.67 words/s": its updates the
    # run's steps, its cost the loss
    _form("marian", r"\bEp\. (?P<epoch>\d+) : Up\. (?P<step>\d+) : Sen\. [\d,]+ : Cost (?P<loss>[\d.]+)", 1),
    # SpeechBrain's epoch counter (its EpochCounter logs "Going into epoch N" as each epoch starts, epochs from 1; its
    # bars count one epoch's batches and its train logger sums the epoch: "epoch: 3, lr: 8.00e-01 - train loss: ...")
    _form("speechbrain", r"\bGoing into epoch (?P<epoch>\d+)\s*$", 1, "epoch"),
    # its train logger's line of each epoch as its train_log.txt holds it, the epoch's meta fields first ("epoch: 40,
    # lr: 8.37e-04, steps: 71880, optimizer: Adam - train loss: 21.23 - valid loss: ..."): the epoch's summary, not
    # the optimizer's steps
    _form("speechbrain", r"^[Ee]poch: (?P<epoch>\d+)(?:, [\w ]+: \S+)* - train [\w ]*?loss: ", 1, "epoch"),
    # ESPnet2's trainer: "3/35epoch started" (and "3/35 epoch started. Estimated time to finish: ..."), its reporter's
    # "3epoch:train:885-952batch: ..., loss=31.2, ..." every N batches (no epoch's length) and its summary
    # "3epoch results: [train] ..., loss=43.5, ..., [valid] loss=...": the run counts epochs, from 1
    _form("espnet", r"(?<![\w/.])(?P<epoch>\d+)/(?P<epochs>\d+) ?epoch started\b", 1, "epoch"),
    _form("espnet", r"(?<![\w/.])(?P<epoch>\d+)epoch:train:\d+-(?P<batch>\d+)batch:", 1, "epoch"),
    _form("espnet", r"(?<![\w/.])(?P<epoch>\d+)epoch results: \[train\]", 1, "epoch"),
    # (and its verbose=2 line at each epoch's end, no bar: "469/469 - 2s - loss: 0.2958 - accuracy: 0.9148 - 2s/epoch",
    # Keras 3's "469/469 - 2s - 4ms/step - accuracy: 0.9148 - loss: 0.2958")
    _form("keras", r"^\s*(?P<batch>\d+)/(?P<batches>\d+) (?:\[[=>.]*\]|[━─]+|- \d+m?s\b)", 1, "epoch"),
    # (and its Progbar of a dataset whose length it does not know yet, its first epoch's: "%7d/Unknown" then the time,
    # Keras 2's "    120/Unknown - 12s 100ms/step - loss: 0.5", Keras 3's "    120/Unknown 12s 100ms/step - loss: 0.5")
    _form("keras", r"^\s*(?P<batch>\d+)/Unknown (?:- )?\d+m?s\b", 1, "epoch"),
    # Demucs' solver's LogProgress (its _log: f"{self.name} | {index}/{total} | {speed} | {infos}", the name
    # f"Train | Epoch {epoch + 1}", each info "Loss 0.2571"; printed num_prints times an epoch, its summary
    # "Train Summary | Epoch N | Loss=..." after): the run counts epochs, from 1; its "Valid | Epoch N" lines are
    # the evaluation's
    _form("demucs", r"^\s*(?:- )?Train \| Epoch (?P<epoch>\d+) \| (?P<batch>\d+)/(?P<batches>\d+) \| ", 1, "epoch"),
    # last, a hand-written loop's summary of each epoch: "Epoch 5, loss: 0.31", "Epoch: 5/100 - train_loss 0.3",
    # "epoch 3 | avg loss 0.2", "epoch 3 avg train loss: 0.2" (two qualifiers), MST's "===> Epoch 132 Complete: Avg.
    # Loss: 0.0148", SpeechBrain's train logger's
    # "epoch: 3, lr: 8.00e-01 - train loss: 7.27e-01 - valid loss: 1.15" (its fields after " - "), the time-series
    # loops' "Epoch: 5/200 | Train loss: 41.10 | Val loss: 21.66 | Time: 31.8s"; one field before the loss, its
    # unit after its number too (luxonis-train's "[Epoch 5/240] Duration: 0.61s | Train Loss: 4.59"); the training
    # phase's name after the epoch's number (a loop with several stages: "Epoch 3 Pretrain | Loss: 0.71 | Best Loss:",
    # "Epoch 3 Finetune | Loss:"), never an evaluation's ("Epoch 3 Val | Loss:" is not the training's); the loss
    # "with" its epoch (DeepSpeed-Chat's reward model's step 2, print_rank_0(f"Epoch {epoch+1}/{num_train_epochs} with
    # loss {mean_loss/(step+1)}"), the epoch's mean: its only training loss
    _form("epoch-summary", r"\b[Ee]poch\s*:?\s*\[?\s*(?P<epoch>\d+)\s*(?:/\s*(?P<epochs>\d+))?\s*\]?\s*"
          r"(?:[Cc]omplete[d]?|[Dd]one|[Ff]inished"
          r"|(?:[Pp]re-?|[Ff]ine-?)?[Tt]rain(?:ing)?|[Ff]ine-?tun(?:e|ing)|[Pp]re-?train(?:ing)?)?\s*[,|:-]?\s+"
          r"(?:[\w ]*?[:=] ?[\d.e+-]+(?:[a-z]{1,3}\b|%)?\s*[,|-]?\s+)??(?:with )?"
          r"(?:[Tt]rain(?:ing)?[ _]|[Aa]vg\.?[ _]?|[Aa]verage |[Mm]ean ){0,2}[Ll]oss\b", unit="epoch", generic=True),
    # a reinforcement-learning loop's line as each episode ends, its episode of the run's episodes then its fields:
    # print(f"Episode {ep + 1}/{episodes} | Reward: {r:.2f} | Loss: {loss:.4f} | Epsilon: {eps:.3f}"), "Episode:
    # 12/500, Reward: 3.0", "[Episode 12/500] reward=3.0 loss=0.1": the run counts episodes as others count epochs
    # (one summary line each, from 1); not an evaluation's episodes ("Eval Episode 3/10" leads with other words)
    _form("episode", r"^\s*\[?(?:Train(?:ing)? )?Episode\s*:?\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\s*\]?\s*[,|:-]?\s+"
          r"(?=[^\W\d][\w ().%/-]*?\s*[:=]\s*[-+]?(?:\d|nan|inf))", 1, "epoch"),
    # a Lightning callback's line at each training epoch's end, its metrics by the names its config gives them, each
    # "name 1.234e+00", three spaces between (TEMOS' ProgressLogger and the projects that copy it: "   Epoch 12:
    # Train_total 3.605e+00   Val_total 3.877e+00   Memory 6.3%"; trainer.current_epoch, from 0)
    _form("epoch-fields", r"^\s*Epoch\s+(?P<epoch>\d+): (?=[A-Za-z]\w* -?\d\.\d+e[+-]\d+(?: {3}|\s*$))",
          unit="epoch", generic=True),
)
#: forms whose line also holds a tqdm bar that counts something else (an epoch's batches): read before the bar.
#: ultralytics' epoch table: "   12/300   6.81G   1.582   1.086 ...  640: 100%|####| 26/26 [00:08<00:00, 2.95it/s]"
BAR_FORMS: tuple[LineForm, ...] = (
    _form("ultralytics", r"^\s*(?P<epoch>\d+)/(?P<epochs>\d+)\s+(?:[\d.]+G|0)\s+[\d.]+\s", 1, "epoch"),
    # the same table with no memory column: YOLOv6's engine (Trainer.print_details) describes its bar as
    # "%10s %10.4g%10.4g..." % (f"{epoch}/{max_epoch - 1}", lr, *mean_loss): numbers only, then the bar
    _form("ultralytics", r"^\s*(?P<epoch>\d+)/(?P<epochs>\d+)(?:\s+-?\d[\d.]*(?:e[+-]?\d+)?){2,}:\s+\d{1,3}%\|",
          1, "epoch"),
)
#: the forms whose batch is a bar's count (Keras' step bar, an epoch's tqdm bar, ultralytics' bar): drawn exactly, its
#: epoch over at its total only (a loop's own lines, printed every N batches, end within one interval of it)
BAR_COUNTED = frozenset({"keras", "epoch-bar", "ultralytics"})
