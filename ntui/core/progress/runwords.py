"""What a training program says of its whole run on lines that are not progress points: the run's length as its
configuration or banner states it (:func:`declared_total`: ``max_update=300000``, the Trainer's ``Total optimization
steps``; :func:`declared_epochs`, :func:`declared_per_epoch`, :func:`declared_steps_flag`), that its training starts
(again) (:func:`run_start`, :func:`run_banner`), that an evaluation starts (:func:`eval_start`: the Trainer's
``***** Running Evaluation *****``: the bars after it are not the run's), that its training is over
(:func:`run_end`: Lightning's ``max_epochs`` reached, ``Training completed``; :func:`run_soft_end`), and that it was
stopped rather than finished (:func:`run_stop`). Each reads one line's message (a launcher's prefix and a logger's
header taken off). Pure.
"""

from __future__ import annotations

import re

from ntui.core.slurm.srunlines import EXIT_CODE, TASK_END, parse_cancel

__all__ = ["declared_epochs", "declared_examples", "declared_per_epoch", "declared_steps_flag", "declared_total",
           "declared_train_batch", "eval_start", "header_epoch", "model_checkpoint", "run_banner",
           "run_end", "run_ended", "run_soft_end", "run_start", "run_stop", "stage_start", "total_counts_iters",
           "widget_counts"]


#: what a program says of the whole run's length, on a line of its own (its configuration or its banner)
_TOTAL_RE = re.compile(
    # (Megatron's and its forks' argument dump pads each name with dots: "  train_iters ........ 5000")
    r"\b(?:max_update|max_steps|max_iters|train_iters|total_steps|MAX_ITER|max_iter)\b['\"]?\s*(?:[=:]|\s\.{3,}\s)\s*"
    r"(?P<n>\d+)\b"
    # the same in other words: max_train_steps, num_training_steps, total_iters, train_steps, max_updates (not a
    # counter's name: fairseq's num_updates, a loop's num_steps); in a configuration, a Namespace, a dict, a table
    # (fairseq2's regime: "max_num_steps: 5000")
    r"|\b(?:(?:max|total)_(?:num_|train(?:ing)?_|optim(?:izer)?_)?(?:steps|iters|iterations|updates)"
    r"|(?:num|n)_(?:train(?:ing)?_|optim(?:izer)?_)(?:steps|iters|iterations)"
    r"|train(?:ing)?_(?:steps|iters|iterations)"
    r"|(?:[Mm]ax(?:imum)?|[Nn]um(?:ber)?(?: of)?) (?:train(?:ing)? )?(?:steps|iters|iterations|updates)(?=\s*[=:]))"
    r"\b['\"]?\s*(?:(?:[=:|]|\.{3,})\s*)?['\"]?"
    r"(?P<other>\d+)(?![\d.])"
    # (torchtitan's "total steps 1000"; verl's SFT trainer's banner, fsdp_sft_trainer.py: "Number of steps/epoch 29,
    # number of epochs 4, total number of steps 116")
    r"|Total optimization steps = (?P<hf>[\d,]+)|\btotal (?:number of )?steps (?P<titan>\d+)\b"
    # a banner in words: "Total training steps: 348", "total train iterations = 5000", "Total updates: 900"
    # (kohya's sd-scripts say each banner line in English, then " / " and its Japanese: "total optimization steps /
    # 学習ステップ数: 8000")
    r"|\b[Tt]otal (?:training |train |optimi[sz]ation |optimizer )?(?:steps|iterations|iters|updates)"
    r"(?: / [^:=/\d]{1,30})?\s*[:=]\s*"
    r"(?P<words>\d[\d,]*)\b"
    # a launcher's command line: "--max-update 50", "--train-iters=3000", "--max_steps 1000"
    r"|--(?:max[-_]update|max[-_]steps|train[-_]iters|max[-_]iters|total[-_]steps)[= ](?P<flag>\d+)\b"
    # mlx-lm's "Starting training..., iters: 300", "Training for 12000 steps"
    r"|\bStarting training\.*,? iters: (?P<mlx>\d+)|\b[Tt]raining for (?P<tf>\d+) (?:steps|iterations|iters)\b"
    # big_vision's train.py: "Running for 45000 steps, that means 71.942446 epochs"
    r"|\bRunning for (?P<bv>\d+) steps, that means\b"
    # TransUNet's trainer and its many forks: "{} iterations per epoch. {} max iterations "
    r"|\biterations per epoch\. (?P<tu>\d+) max iterations\b"
    # Composer's time string in batches: "max_duration: 1200ba"
    r"|\bmax_duration['\"]?\s*[=:]\s*['\"]?(?P<ba>\d+)ba\b"
    # R3Net's train.py and the saliency trainers built on it (BMPM, GateNet, ...): the args dict they print or write
    # first, "{'iter_num': 30000, 'train_batch_size': 10, 'last_iter': 0, ...}", the run's iterations beside the one
    # it resumes from (its loop: "if curr_iter == args['iter_num']: ... return"); a loop's own 'iter_num' of now is
    # no such dict's
    r"|'iter_num': (?P<r3>\d+),(?=.*'last_iter': \d+)")
#: a command line's bare "--steps 200" (the DeepSpeed pipeline example's): the run's total only where the loop's own
#: lines count steps (a sampler's or a scheduler's steps are others); and a parameter "steps" as a line's whole
#: message, as a logger prints the run's parameters ("steps: 4446", DLLogger's "<date> - PARAMETER steps : 4446")
_STEPS_FLAG_RE = re.compile(r"(?:^|\s)--steps[= ](?P<n>\d+)\b"
                            # (MaxText's configuration, one "Config param steps: 1000" line per key)
                            r"|(?:^|\s-\s+|\bPARAMETER\s+|\bConfig param\s+)steps\s*[:=]\s*(?P<p>\d+)\s*$")
#: what says the total above counts iterations (micro-batches), not optimizer steps: lit-gpt's "max_iters"
_ITERS_TOTAL_RE = re.compile(r"\bmax_iters\b")
#: what a configuration says of an epoch's steps (torchtune's "max_steps_per_epoch: 60"): with its epochs, the run's
_PER_EPOCH_RE = re.compile(r"^\s*(?:max_)?steps_per_epoch\s*[:=]\s*(?P<n>\d+)\s*$"
                           # in a dict, a Namespace, a line of several: steps_per_epoch=, iters_per_epoch, batches,
                           # num_update_steps_per_epoch
                           r"|(?<![\w-])['\"]?(?:max_|num_|num_update_|n_)?(?:steps|iters|iterations|batches|updates)"
                           r"_per_epoch['\"]?\s*[:=]\s*(?P<other>\d+)(?![\d.])"
                           # a command line's flag (its dashes read as underscores): "--steps-per-epoch 500"
                           r"|--(?:max_|num_|n_)?(?:steps|iters|iterations|batches|updates)_per_epoch"
                           r"[= ](?P<flag>\d+)\b"
                           # as the message that sizes the training's loader: PaddleOCR's "train dataloader has 43
                           # iters"
                           r"|^train(?:ing)? (?:data ?)?loader has (?P<loader>\d+) "
                           r"(?:iters|iterations|batches|steps)\b")
#: what a program says when its training is over: Lightning's "`Trainer.fit` stopped: `max_epochs=3` reached.",
#: torchtitan's and the Trainer's "Training completed", fairseq's "done training in 812.3 seconds" (not detectron2's
#: "Total training time": its hooks print it after a crash too)
_END_RE = re.compile(r"`Trainer\.fit` stopped: `max_(?P<what>epochs|steps)=(?P<n>\d+)` reached|\bTraining completed\b"
                     r"|\bFinished training\b|\bdone training in\b|^Epoch \d+: early stopping"
                     # LightGBM's early_stopping callback after its last round, before it raises EarlyStopException
                     # to end train() normally: "Did not meet early stopping. Best iteration is:" at the round budget,
                     # "Early stopping, best iteration is:" when the score stopped improving (the best round's line
                     # follows it)
                     r"|^Did not meet early stopping\. Best iteration is:\s*$|^Early stopping, best iteration is:\s*$"
                     r"|^(?P<done>\d+) epochs completed in [\d.]+ hours"
                     r"|\[after training is done\]|^Training time: [\d.]+ ?s\b"
                     # an early stop said as the message: "Early stopping", "Early stopping at epoch 45", "early
                     # stopping triggered" (not a configuration's "early stopping patience: 10", nor a helper's
                     # "EarlyStopping counter: 3 out of 10"); Lightning's EarlyStopping and Timer callbacks' "...
                     # Signaling Trainer to stop."; torch_xla's example trainers' last line, "Max Accuracy: 98.91%"
                     r"|^\W{0,3}(?i:early[ -]stop(?:ping|ped)"
                     r"(?: (?:triggered|activated|at (?:epoch|step|iter(?:ation)?) \d+))?)\W{0,3}$"
                     r"|\bSignaling Trainer to stop\.|^Max Accuracy: \d+\.\d\d%$"
                     # the loop's own word that it stopped before its total, at the step it names (a time budget's
                     # cap: the nanoGPT speedrun loops' "stopping_early: wallclock_cap train_time:600031ms
                     # step:8635/20000"; "Stopped early at step 480")
                     r"|^\W{0,3}(?i:stopp(?:ing|ed)[_ ]early)\b.{0,80}?\b(?i:at )?step[:= ]\s*(?P<at>\d+)(?:/\d+)?\b"
                     # SpeechBrain's evaluation after its fit, the test set's line: "Epoch loaded: 40 - test loss: ..."
                     r"|^Epoch loaded: \d+ - test\b"
                     # the vision references' last print, after their loop only (torchvision's, DeiT's, MAE's: "Training
                     # time 1 day, 2:03:04", a timedelta; not timm's best metric, printed after an interrupt too)
                     r"|^Training time (?:\d+ days?, )?\d+:\d\d:\d\d$"
                     # the TensorFlow Estimator's last word of its train(): "Loss for final step: 0.31."
                     r"|^Loss for final step: "
                     # MONAI's tutorials' loops, after their last epoch: "train completed, best_metric: 0.9 at epoch: 3"
                     r"|^train completed, best_metric: "
                     # spaCy's train (spacy/training/loop.py): "✔ Saved pipeline to output directory", written after its
                     # loop only where no error came (its "Aborting and saving the final best model" otherwise)
                     r"|\bSaved pipeline to output directory\b"
                     # the YOLO family's EarlyStopping (its __call__ when patience is exceeded; the loop breaks
                     # after it): YOLOv5's "Stopping training early as no improvement observed in last 20 epochs.",
                     # ultralytics' "EarlyStopping: Training stopped early as no improvement observed in ..."
                     r"|\b(?:Stopping training early|Training stopped early) as no improvement\b"
                     # DeepSpeed's launcher (deepspeed/launcher/launch.py, main) as a worker it spawned exits with 0:
                     # "Process 40311 exits successfully." (a non-zero exit kills the others instead, no such line)
                     r"|\bProcess \d+ exits successfully\."
                     # skorch's EarlyStopping (skorch/callbacks/training.py, on_epoch_end): "Stopping since valid_loss
                     # has not improved in the last 5 epochs.", then a KeyboardInterrupt that the net's partial_fit
                     # catches: the fit's end
                     r"|^Stopping since \w+ has not improved in the last \d+ epochs\.$"
                     # verl's trainers (fsdp_sft_trainer.py, ppo/ray_trainer.py): "Final validation metrics: {...}",
                     # printed at the last step only, just before fit() returns
                     r"|^Final validation metrics: [{N]"
                     # ms-swift's main (swift/utils/run_utils.py's x_main, SwiftPipeline.main):
                     # logger.info(f'End time of running main: {datetime.now()...}') once its run returned, under its
                     # logger's "[INFO:swift] " prefix (a crash raises before it). Not its "last_model_checkpoint: "
                     # and "best_model_checkpoint: ": 3.x's SwiftSft.train logs them in a finally: after a crash too
                     r"|^(?:\[INFO:swift\] )?End time of running main: \d")
#: the same in other words, as the message itself: "Training finished.", "training is complete", "Done training!",
#: "TRAINING COMPLETE" (not where the line names an epoch: "Training done for epoch 3" is an epoch's end)
_END_WORDS_RE = re.compile(r"^\W{0,3}(?i:training (?:is |has )?(?:finished|complete[d]?|done|over|ended)"
                           r"|(?:finished|done|completed?|ended) (?:the )?training)\b")


#: what a program prints when its training loop is over, also after an error (detectron2's hooks run in a
#: ``finally``; so does YOLOX's Trainer.train(), whose after_train() logs "Training of experiment is done and the
#: best AP is {:.2f}" after a crash too): the end of the run only where no error was read after it
_SOFT_END_RE = re.compile(r"\bOverall training speed: \d+ iterations in\b|\bTotal training time: \d"
                          r"|\bTraining of experiment is done\b")


#: mmengine's CheckpointHook: "Saving checkpoint at 3 epochs" (by epoch) or "Saving checkpoint at 8000 iterations"
#: (by iteration), the epoch or the iteration done
_CHECKPOINT_AT_RE = re.compile(r"\bSaving checkpoint at (?P<n>\d+) (?P<what>epochs|iterations)\b")


#: Lightning's ModelCheckpoint(verbose=True) after its check: f"Epoch {epoch:d}, global step {step:d}: {monitor!r}
#: reached {current:0.5f} (best {best:0.5f}), saving model to {filepath!r} as top {k}", or "... {monitor!r} was not in
#: top {save_top_k}"
_MODEL_CHECKPOINT_RE = re.compile(r"\bEpoch (?P<e>\d+), global step (?P<s>\d+): '[^']*' (?:reached |was not in top )")


def model_checkpoint(text: str) -> tuple[int, int] | None:
    """The epoch and global step ModelCheckpoint's line names (:data:`_MODEL_CHECKPOINT_RE`), or None."""
    m = _MODEL_CHECKPOINT_RE.search(text) if "global step" in text else None
    return (int(m["e"]), int(m["s"])) if m is not None else None


def checkpoint_at(text: str) -> tuple[str, int] | None:
    """Where a checkpoint is saved, as the line says it: ``("epochs", 3)``, ``("iterations", 8000)``, or None."""
    if "Saving checkpoint at" not in text:
        return None
    m = _CHECKPOINT_AT_RE.search(text)
    return (m["what"], int(m["n"])) if m is not None else None


def run_soft_end(text: str) -> bool:
    """Whether the line says the training loop is over, as a program says it also after an error
    (:data:`_SOFT_END_RE`)."""
    return ("training speed" in text or "training time" in text or "experiment is done" in text) \
        and _SOFT_END_RE.search(text) is not None


#: what a program says when it starts its training again from a checkpoint, or starts it at all (a new process
#: appending to the same log): the Trainer's banner and "Continuing training from global step 200000", OpenCLIP's
#: "=> resuming checkpoint 'epoch_2.pt'", torch-rnn's "Initializing from cv/checkpoint_6000.t7", "Resuming training
#: from ...", "Resumed from checkpoint"; the step it names is where the run goes on from
_START_RE = re.compile(
    # (the diffusers and accelerate example scripts: accelerator.print(f"Resuming from checkpoint {path}"), the step
    # it goes on from in the checkpoint's name, "checkpoint-500"; detectron2's TrainerBase.train: "Starting training
    # from iteration 5000", 0 where it starts afresh)
    r"\bResuming from checkpoint (?:\S*/)?checkpoint-(?P<ckpt>\d+)\b|\bStarting training from iteration (?P<d2>\d+)\b"
    r"|\*{5} Running training \*{5}|\bContinuing training from (?:global step (?P<step>\d+)|checkpoint)"
    r"|(?i:\bresum(?:e|ing|ed)(?: training)? from\b|=> resuming checkpoint\b|\bresumed? from checkpoint\b"
    r"|\bresuming (?:training|from)\b)|\bInitializing from\s+\S*(?:checkpoint|\.t7|\.pt|\.ckpt)"
    # Megatron's --log-progress: "<date>\tJob ID: 412390\t# GPUs: 32\tStarting job" (a job of the run starts)
    r"|\tStarting job\s*$"
    # torchtitan's train(), once a process: "Training starts at step 501, with local batch size 8, ..." (it goes on
    # after step 500)
    r"|\bTraining starts at step (?P<next>\d+)\b"
    # the engines' own word that they loaded the run's state to go on: Megatron's checkpointing.load_checkpoint
    # ("  successfully loaded checkpoint from /ckpt [ t 1/2, p 1/1 ] at iteration 2000", " loading checkpoint from
    # /ckpt at iteration 2000"), fairseq's Trainer.load_checkpoint ("Loaded checkpoint /ckpt/checkpoint_last.pt (epoch
    # 3 @ 4000 updates)"), mmengine's Runner.resume ("resumed epoch: 3, iter: 1500"), Lightning's checkpoint
    # connector as fit resumes ("Restored all states from the checkpoint at /ckpt/last.ckpt"; not its tuner's own
    # restore, below)
    r"|\b(?:(?:successfully )?loaded|loading) checkpoint from \S+(?: \[[^\]]*\])? at iteration (?P<meg>\d+)"
    r"|\b[Ll]oaded checkpoint \S+ \(epoch \d+ @ (?P<updates>\d+) updates\)"
    r"|\bresumed epoch: \d+, iter: (?P<iter>\d+)"
    r"|\bRestored all states from the checkpoint (?:file )?at\b"
    # Lightning 1.x's checkpoint connector: "Restored states from the checkpoint file at /ckpt/last.ckpt" (its
    # resume_from_checkpoint) and, where a SLURM requeue saved the run's state, "restored hpc model from:
    # /runs/hpc_ckpt_1.ckpt" (the requeued job's new process goes on from it)
    r"|\bRestored states from the checkpoint file at\b|\brestored hpc model from:")
#: Lightning's tuner restores the state it saved before its trials (".lr_find_<uuid>.ckpt",
#: ".scale_batch_size_<uuid>.ckpt"; 1.x's "lr_find_temp_model.ckpt", "scale_batch_size_temp_model.ckpt"): the run's
#: fit has not started yet, it is no start again
_TUNER_CKPT_RE = re.compile(r"[./\\](?:lr_find|scale_batch_size)_")


#: the banner a program prints when it starts its training, that each node of a multi-node run prints too
_BANNER_RE = re.compile(r"\*{5} Running training \*{5}")


def run_banner(text: str) -> bool:
    """Whether the line is a start's banner (:data:`_BANNER_RE`), which says no more than that a process of the run
    starts its training: not that the run started again."""
    return "Running training" in text and _BANNER_RE.search(text) is not None


def run_start(text: str) -> int | None:
    """Whether the line says the program starts its training (again): None, else the step it goes on from (0 where
    it names none)."""
    if "raining" not in text and "esum" not in text and "nitializing from" not in text \
            and "Starting job" not in text and "checkpoint" not in text and "hpc model" not in text:
        return None
    m = _START_RE.search(text)
    if m is None or (m.group(0).startswith("Restored") and _TUNER_CKPT_RE.search(text) is not None):
        return None
    if m["next"]:
        return max(0, int(m["next"]) - 1)
    said = m["step"] or m["meg"] or m["updates"] or m["iter"] or m["ckpt"] or m["d2"]
    return int(said) if said else 0


#: what a program says on a line of its own when an evaluation or a prediction starts: the Trainer's "***** Running
#: Evaluation *****" and "***** Running Prediction *****", its example scripts' "*** Evaluate ***" and "*** Predict ***"
_EVAL_START_RE = re.compile(r"\*{3,} (?:Running (?:Evaluation|Prediction)|Evaluate|Predict) \*{3,}")
#: the same said in words, as the message of its line (a logger's header taken off): "Running evaluation step...",
#: "Starting validation", "Start evaluation.", or the word alone: "Validating...", "Cross validation..." (the
#: Speech-Transformer solver's, before the epoch's validation lines in its training lines' form) (not its end nor its
#: results: "Evaluation finished", "Running evaluation done", "evaluation results:")
_EVAL_WORDS_START_RE = re.compile(r"^\W{0,3}(?i:(?:(?:running|starting|start|begin(?:ning)?|launching) (?:the )?"
                                  r"|cross[- ])?(?:evaluation|validation|eval|evaluating|validating)\b"
                                  r"(?: (?:step|loop|phase|run|on \w+))?)"
                                  r"\W{0,4}\s*$")


def eval_start(text: str) -> bool:
    """Whether the line says an evaluation or a prediction starts (:data:`_EVAL_START_RE`, or in words:
    :data:`_EVAL_WORDS_START_RE`): the bars after it are not the run's."""
    if "** " in text and _EVAL_START_RE.search(text) is not None:
        return True
    return ("valuat" in text or "alidat" in text or "eval" in text) and _EVAL_WORDS_START_RE.match(text) is not None


#: a batch script's or a wrapper's sentence of how the program ended: its subject, a verb of ending, its exit code
#: ("=== job 7720194 finished with exit code 0 at ... ===", "the training process exited with exit status 0")
_EXITED = (r"(?i)\b(?:job|script|program|process|command|training|run|task)\b[^\n]{0,60}?"
           r"\b(?:finished|exited|ended|completed|terminated|done)\b[^\n]{0,20}?\bexit (?:code|status)[:=]?\s*")
_EXITED_OK_RE = re.compile(_EXITED + r"0\b")


def run_ended(text: str) -> bool:
    """Whether the line says the program's training is over (:data:`_END_RE`; Keras' "Epoch 40: early stopping")."""
    return run_end(text) is not None


def run_end(text: str) -> tuple[str, int] | None:
    """Whether the line says the program's training is over: None, else what it stopped at (``("steps", 1000)``,
    ``("epochs", 10)``: Lightning's ``max_steps``/``max_epochs`` reached; ``("completed", 10)``: the epochs the process
    ran, ultralytics' count; ``("at", 8635)``: the step a loop stopped early at, short of its total) or ``("", 0)``
    when it says no more."""
    if "xit " in text and _EXITED_OK_RE.search(text) is not None:
        return ("", 0)  # the program ended with exit code 0, as its batch script or wrapper says
    if "raining" not in text and "Trainer.fit" not in text and "arly stop" not in text \
            and "completed in" not in text and "RAINING" not in text and "Trainer to stop" not in text \
            and "Max Accuracy" not in text and "ARLY STOP" not in text and "Epoch loaded" not in text \
            and "final step" not in text and "opping_early" not in text and "opped early" not in text \
            and "opping early" not in text and "train completed" not in text and "Saved pipeline" not in text \
            and "exits successfully" not in text and "has not improved in" not in text \
            and "Final validation metrics" not in text and "End time of running main" not in text:
        return None
    m = _END_RE.search(text)
    if m is None:
        return ("", 0) if _END_WORDS_RE.match(text) is not None and "poch" not in text.lower() else None
    if m["done"]:  # ultralytics' "300 epochs completed in 4.912 hours.": the epochs this process ran
        return ("completed", int(m["done"]))
    if m["at"]:  # stopped early at this step: the run's last, short of its total
        return ("at", int(m["at"]))
    return (str(m["what"]), int(m["n"])) if m["what"] else ("", 0)


#: what says that the run was stopped, not finished: Slurm's cancel (at the time limit or not), the kernel's kill, a
#: Python traceback, the GPU's memory exhausted, NCCL's watchdog, torch elastic's failed children
_STOPS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("out of memory", re.compile(r"CUDA out of memory|OutOfMemoryError"), "out of GPU memory"),
    ("OutOfMemory", re.compile(r"OutOfMemoryError"), "out of GPU memory"),
    ("Watchdog", re.compile(r"Watchdog caught collective operation timeout"), "a collective timed out"),
    ("Traceback", re.compile(r"^Traceback \(most recent call last\):"), "an error: a traceback"),
    # swanlab's excepthook (its run's _except_handler) on an uncaught exception, before the traceback is printed:
    # swanlog's "swanlab: Error happened while training"
    ("Error happened", re.compile(r"\bswanlab: Error happened while training\b"), "an error: swanlab saw an exception"),
    ("Exception during training", re.compile(r"\bException during training\b"), "an error: an exception"),
    ("ChildFailedError", re.compile(r"\bChildFailedError\b"), "an error: a worker failed"),
    ("Killed", re.compile(r"^Killed$"), "killed"),
    # torch elastic's agent: "Received 15 death signal, shutting down workers", "Signal 15 (SIGTERM) received by PID"
    ("death signal", re.compile(r"\bReceived \d+ death signal\b"), "killed by a signal"),
    ("received by PID", re.compile(r"\bSignal \d+ \(SIG[A-Z]+\) received by PID\b"), "killed by a signal"),
    # the process's own end by a fault, the kernel's memory killer (Slurm's cgroup: "Detected 1 oom-kill event(s)"),
    # a CUDA or NCCL error, a failed worker of torch elastic ("failed (exitcode: 1)")
    ("fault", re.compile(r"\b(?:Segmentation fault|Bus error|Floating point exception)\b"), "an error: a crash"),
    # (slurmstepd's "oom-kill event(s)" of 22.05, "oom_kill event" of later releases; systemd's result 'oom-kill')
    ("oom", re.compile(r"\boom[-_]kill\b|\bOut of memory: Killed process\b"), "out of memory (killed)"),
    ("CUDA error", re.compile(r"\bCUDA error: "), "an error: a CUDA error"),
    ("NCCL error", re.compile(r"\bNCCL error\b"), "an error: an NCCL error"),
    ("exitcode", re.compile(r"\bfailed \(exitcode: -?[1-9]\d*\)"), "an error: a worker failed"),
    # Megatron's training loop leaving before its train_iters, its checkpoint saved: its exit_interval ("[exiting
    # program at iteration 6000] datetime: ..."), its exit_duration_in_mins ("exiting program after 230.0 minutes"),
    # its exit_signal_handler ("exiting program after receiving SIGTERM.")
    ("exiting program", re.compile(r"\bexiting program (?:at iteration \d+|after [\d.]+ minutes|after receiving SIG)"),
     "the program exited early: its exit interval, duration or a signal"),
    # Lightning's trainer on a Ctrl-C (its call._call_and_handle_interrupt): "Detected KeyboardInterrupt, attempting
    # graceful shutdown ..."
    ("KeyboardInterrupt", re.compile(r"\bDetected KeyboardInterrupt, attempting graceful shutdown"), "interrupted"),
    # systemd's end of a unit's main process (service.c's "Main process exited, code=%s, status=%i/%s", seen in the
    # journal of a run under systemd-run or a user unit): killed by a signal, dumped core, or exited with a failure
    ("Main process exited", re.compile(r"\bMain process exited, code=(?:killed|dumped), status="),
     "killed by a signal"),
    ("Main process exited", re.compile(r"\bMain process exited, code=exited, status=[1-9]"), "an error: it exited"),
    # a batch script's or a wrapper's own word of the program's end, with its exit code ("=== job 42 finished with
    # exit code 1 ===", "training script exited with exit status 2"): not zero, a failure (zero: run_end's)
    ("xit ", re.compile(_EXITED + r"[1-9]"), "an error: it exited with a failure"),
)


#: slurmstepd's reasons of a cancel (req.c: TIME LIMIT, PREEMPTION, NODE FAILURE; a signal's otherwise) as words
_CANCEL_WORDS = {"TIME LIMIT": "cancelled at its time limit", "PREEMPTION": "cancelled: preempted",
                 "NODE FAILURE": "cancelled: a node failed"}


def run_stop(text: str) -> str | None:
    """What stopped the run, when the line says it was stopped rather than finished: slurmstepd's cancel and srun's
    report of a killed task (their forms are :mod:`ntui.core.slurm.srunlines`'), or :data:`_STOPS`; else None."""
    if "CANCELLED" in text and (cancel := parse_cancel(text)) is not None:
        reason = (cancel.reason or "").upper()
        return _CANCEL_WORDS.get(reason.split(",")[0], "cancelled")
    if "srun: error:" in text and (end := TASK_END.search(text)) is not None:
        if end["what"] == "Killed":
            return "killed"
        if (code := EXIT_CODE.match(end["what"])) is not None and code["code"] != "0":
            return "an error: a task exited with code " + code["code"]  # (srun reports a non-zero exit only)
    for hint, regex, why in _STOPS:
        if hint in text and regex.search(text) is not None:
            return why
    return None


#: what a program says of the run's epochs, on a line of its own: mmcv's runner "workflow: [('train', 1)], max: 12
#: epochs", the MetricLogger scripts' "Start training for 100 epochs", timm's "Scheduled epochs: 300", the Trainer's
#: "Num Epochs = 3", a configuration's "max_epochs: 40" / "epochs: 5" / "--epochs 90" / PaddleOCR's "epoch_num : 500",
#: argparse's flags in dashes ("--max-epochs 120", Lightning's own Trainer flag as a script's argument)
_EPOCHS_RE = re.compile(r"\bmax: (?P<a>\d+) epochs\b"
                        r"|\b(?:[Ss]tart(?:ing)? training for|Scheduled epochs:) (?P<b>\d+)(?: epochs)?\b"
                        r"|\bNum Epochs = (?P<c>\d+)"
                        r"|(?:\bmax[_-]epochs|\bnum[_-]train[_-]epochs|(?:^|\||--|['\"])\s*epochs"
                        # a command line's flag, in dashes or underscores: "--max-epochs 120", "--num-epochs 30"
                        r"|--(?:num|n|total|train(?:ing)?)[_-](?:train(?:ing)?[_-])?epochs)"
                        r"['\"]?\s*[=: ]\s*(?P<d>\d+)\b"
                        # in other words, in a dict, a Namespace or a configuration: 'num_epochs': 20, n_epochs=30,
                        # total_epochs: 12, train_epochs, Namespace(epochs=90, ...)
                        r"|(?:\b(?:max|num|n|total)_(?:train(?:ing)?_)?epochs?|\btrain(?:ing)?_epochs|\bnepochs|\bepoch_num"
                        r"|[(,{]\s*epochs|\sepochs(?==)|(?i:\b(?:num(?:ber)?|total|max(?:imum)?)(?: of)? epochs))"
                        r"['\"]?\s*[=:]\s*['\"]?(?P<e>\d+)(?![\d.])"
                        r"|\b[Tt]rain(?:ing)? for (?P<f>\d+) epochs\b"
                        # Composer's time string: "max_duration: 2ep" (its batches, "1000ba", are steps: below)
                        r"|\bmax_duration['\"]?\s*[=:]\s*['\"]?(?P<g>\d+)ep\b"
                        # DeepSpeed-Chat's training scripts, as each epoch begins: "Beginning of Epoch 1/3, Total Micro
                        # Batches 1200"
                        r"|\bBeginning of Epoch \d+/(?P<h>\d+)\b"
                        # an epoch's header (_EPOCH_HEADER_RE): the run's epochs
                        r"|^(?:(?:Train(?:ing)?|Start(?:ing)?) )?[Ee]poch:? \[?\d+ ?/ ?(?P<i>\d+)\]?\.{0,3}\s*$")
#: an epoch's header as the whole message, its number of the run's epochs, spaced or not (H2O LLM Studio's train.py:
#: logger.info(f"Training Epoch: {epoch + 1} / {epochs}"); "Train epoch 3 / 20", "Starting epoch 2/5"; Keras' bare
#: "Epoch 2/5" is a form's line, read before this): the run's epochs, and that an epoch begins
_EPOCH_HEADER_RE = re.compile(r"^(?:(?:Train(?:ing)?|Start(?:ing)?) )?[Ee]poch:? \[?(?P<e>\d+) ?/ ?\d+\]?\.{0,3}\s*$")


def header_epoch(text: str) -> int | None:
    """Where the line is an epoch's header of the run's epochs (:data:`_EPOCH_HEADER_RE`: "epoch 3/600", an epoch
    begins): the epoch it names; None for any other line."""
    m = _EPOCH_HEADER_RE.match(text) if "poch" in text else None
    return int(m["e"]) if m is not None else None


#: t5x's train loop (t5x/train.py, train): "Epoch %d of %d" as each of its periods of eval_period steps begins (its
#: "epochs", from 0), then "Training for %d steps." of that period (the last one's maybe fewer): the run's steps are
#: its periods times a period's steps, not the steps said
_PERIOD_RE = re.compile(r"(?:^|\] )Epoch \d+ of (?P<n>\d+)\s*$")
_PERIOD_STEPS_RE = re.compile(r"(?:^|\] )Training for (?P<n>\d+) steps\.\s*$")


def declared_periods(text: str) -> int | None:
    """The periods of a loop that trains in periods of steps between evaluations (t5x's "Epoch 3 of 20"), or None."""
    m = _PERIOD_RE.search(text) if "poch" in text else None
    return int(m["n"]) if m is not None and int(m["n"]) > 0 else None


def period_steps(text: str) -> int | None:
    """The steps of one such period ("Training for 2000 steps."), or None."""
    m = _PERIOD_STEPS_RE.search(text) if "raining for" in text else None
    return int(m["n"]) if m is not None else None


def declared_epochs(text: str) -> int | None:
    """The run's epochs a configuration or banner line states (mmcv's ``max: 12 epochs``, ``max_epochs=40``), or
    None."""
    if "poch" not in text and "max_duration" not in text:
        return None
    m = _EPOCHS_RE.search(text)
    if m is None:
        return None
    value = int(m["a"] or m["b"] or m["c"] or m["d"] or m["e"] or m["f"] or m["g"] or m["h"]
                or m["i"])
    return value if value > 0 else None


#: the Trainer's banner of its training (its _inner_training_loop): "  Num examples = 12,800" (also its evaluation's
#: banner's, before "  Batch size = 8"), then "  Total train batch size (w. parallel, distributed & accumulation) =
#: 64": an epoch is about the examples over that batch in optimizer steps
_EXAMPLES_RE = re.compile(r"^\s*Num examples = (?P<n>\d[\d,]*)\s*$")
_TRAIN_BATCH_RE = re.compile(r"^\s*Total train batch size \(w\. parallel, distributed & accumulation\) = "
                             r"(?P<n>\d[\d,]*)\s*$")


def declared_examples(text: str) -> int | None:
    """The examples the Trainer's banner says (:data:`_EXAMPLES_RE`), or None."""
    m = _EXAMPLES_RE.match(text) if "Num examples" in text else None
    return int(m["n"].replace(",", "")) or None if m is not None else None


def declared_train_batch(text: str) -> int | None:
    """The examples of one optimizer step the Trainer's banner says (:data:`_TRAIN_BATCH_RE`), or None."""
    m = _TRAIN_BATCH_RE.match(text) if "Total train batch" in text else None
    return int(m["n"].replace(",", "")) or None if m is not None else None


#: a command line's flag name (argparse's, in dashes or underscores)
_FLAG_NAME_RE = re.compile(r"(?<!\S)--([A-Za-z][\w-]*)")


def _flags_underscored(text: str) -> str:
    """``text`` with its flags' names in underscores ("--num-train-steps 300" as "--num_train_steps 300"): argparse
    takes either for the same option, the configuration's names are underscored."""
    return _FLAG_NAME_RE.sub(lambda m: "--" + m.group(1).replace("-", "_"), text) if "--" in text else text


def declared_total(text: str) -> int | None:
    """The run's total steps a configuration or banner line states (``max_update=300000``, the Trainer's ``Total
    optimization steps = 1,200``, a launcher's ``--train-iters 3000``, ``--num-train-steps 300``), or None."""
    if "max" not in text and "MAX" not in text and "total" not in text and "Total" not in text and "Max" not in text \
            and "iter" not in text and "steps" not in text and "raining for" not in text and "updates" not in text:
        return None
    m = _TOTAL_RE.search(_flags_underscored(text))
    if m is None:
        return None
    value = int((m["n"] or m["hf"] or m["titan"] or m["flag"] or m["mlx"] or m["tf"] or m["other"]
                 or m["words"] or m["ba"] or m["bv"] or m["tu"] or m["r3"]).replace(",", ""))
    return value if value > 0 else None


def declared_steps_flag(text: str) -> int | None:
    """A command line's bare ``--steps N``, or a parameter ``steps: N`` as a line's message (:data:`_STEPS_FLAG_RE`),
    or None."""
    if "steps" not in text:
        return None
    m = _STEPS_FLAG_RE.search(text)
    return int(m["n"] or m["p"]) if m is not None and int(m["n"] or m["p"]) > 0 else None


def total_counts_iters(text: str) -> bool:
    """Whether the total a line states (:func:`declared_total`) counts iterations where the loop's lines say both
    an iteration and an optimizer step (lit-gpt's ``max_iters``)."""
    return _ITERS_TOTAL_RE.search(text) is not None


#: a tqdm.notebook bar pasted as text where no widget frontend drew it: the ipywidgets repr of its container,
#: "HBox(children=(FloatProgress(value=0.0, description='Epoch', max=2.0, style=...), HTML(value='')))" (tqdm's
#: status_printer sets the FloatProgress's max to the bar's total and its description to the bar's desc), often cut
#: at the display's width; the Trainer of transformers 3.x draws two: trange(..., desc="Epoch") over the run's epochs
#: and tqdm(train_dataloader, desc="Iteration") over an epoch's steps
_WIDGET_RE = re.compile(r"FloatProgress\(value=[\d.]+, (?:bar_style='\w*', )?description='(?P<desc>[^']*)', "
                        r"max=(?P<max>\d+)(?:\.0)?\b")
_WIDGET_EPOCHS = frozenset({"Epoch", "Epochs", "epoch", "epochs"})
_WIDGET_EPOCH_STEPS = frozenset({"Iteration", "Iterations", "iteration", "iterations"})


def widget_counts(text: str) -> tuple[int | None, int | None]:
    """The run's epochs and an epoch's steps a notebook bar's widget repr says (:data:`_WIDGET_RE`): its total where
    it counts the epochs ("Epoch") or an epoch's steps ("Iteration"), else (None, None)."""
    m = _WIDGET_RE.search(text) if "FloatProgress(" in text else None
    if m is None or not int(m["max"]):
        return None, None
    if m["desc"] in _WIDGET_EPOCHS:
        return int(m["max"]), None
    return (None, int(m["max"])) if m["desc"] in _WIDGET_EPOCH_STEPS else (None, None)


#: IRN's run_sample.py and the weakly supervised segmentation pipelines built on it (PSA, ReCAM, AMN, ...): each
#: stage a pyutils.Timer('step.train_cam:') whose start prints its message and time.ctime(), "step.make_cam: Tue Mar
#: 9 13:15:58 2021"; the stages run one after another in one process
_STAGE_START_RE = re.compile(r"step\.\w+: [A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\s*")


def stage_start(text: str) -> bool:
    """Whether a line is a staged pipeline's start of a stage (:data:`_STAGE_START_RE`)."""
    return text[:5] == "step." and _STAGE_START_RE.fullmatch(text) is not None


def declared_per_epoch(text: str) -> int | None:
    """An epoch's steps as a configuration states them (``max_steps_per_epoch: 60``), or None."""
    if "per_epoch" not in text and "loader has" not in text and "per-epoch" not in text:
        return None
    m = _PER_EPOCH_RE.search(_flags_underscored(text))
    if m is None:
        return None
    value = int(m["n"] or m["other"] or m["loader"] or m["flag"])
    return value if value > 0 else None
