#!/usr/bin/env python3
"""A steady training loop that reports its progress the way one framework does, for ntui's progress readers.

    progress_train.py --style STYLE [--steps N] [--step-seconds S]

STYLE is how the progress is printed, by the real library where it runs here on the CPU:

* ``tqdm``: an accelerate script's loop (``Accelerator``, the bar on the main process only), ``loss`` on the bar;
* ``hf``: the Hugging Face ``Trainer`` on a tiny BERT built from a config (no download), its bar and its dicts;
* ``lightning``: a Lightning ``Trainer`` with its default tqdm bar (``--steps`` split into 4 epochs);
* ``plain``: ``step N/TOTAL loss X`` lines of its own (a preset's ``progress:`` pattern reads them), every rank of
  a torch.distributed job (gloo) in step, rank 0 printing;
* ``megatron``, ``torchtitan``: those projects' line forms, printed by this loop (their libraries need GPUs).

Each step takes ``--step-seconds`` (a sleep: steady, so that an ETA made at mid-run can be checked against the
real end); the loss falls as 2 / (1 + step / 20).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime


def loss_at(step: int) -> float:
    return 2.0 / (1 + step / 20)


def run_tqdm(steps: int, pause: float) -> None:
    from accelerate import Accelerator
    from tqdm import tqdm

    accelerator = Accelerator(cpu=True)
    bar = tqdm(range(steps), desc="train", disable=not accelerator.is_local_main_process, mininterval=0)
    for step in bar:
        time.sleep(pause)
        bar.set_postfix(loss=f"{loss_at(step):.3f}")
    accelerator.wait_for_everyone()


def run_hf(steps: int, pause: float) -> None:
    import tempfile

    import torch
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainerCallback, TrainingArguments

    class Steady(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: object, state: object, control: object, **kwargs: object) -> None:
            time.sleep(pause)

    config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, num_labels=2)
    torch.manual_seed(0)
    data = [{"input_ids": torch.randint(0, 64, (16,)), "labels": torch.tensor(i % 2)} for i in range(64)]
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(output_dir=out, max_steps=steps, per_device_train_batch_size=4,
                                 logging_steps=max(1, steps // 10), save_strategy="no", report_to=[],
                                 disable_tqdm=False, use_cpu=True)
        Trainer(model=BertForSequenceClassification(config), args=args, train_dataset=data,
                callbacks=[Steady()]).train()


def run_lightning(steps: int, pause: float) -> None:
    import lightning as L
    import torch

    class Tiny(L.LightningModule):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(8, 1)

        def training_step(self, batch: torch.Tensor, i: int) -> torch.Tensor:
            time.sleep(pause)
            loss = self.layer(batch).pow(2).mean()
            self.log("train_loss", loss, prog_bar=True)
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    torch.manual_seed(0)
    epochs = 4
    data = torch.utils.data.DataLoader(torch.randn(4 * max(1, steps // epochs), 8), batch_size=4)
    L.Trainer(max_epochs=epochs, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
              callbacks=[L.pytorch.callbacks.TQDMProgressBar()]).fit(Tiny(), data)


def run_plain(steps: int, pause: float) -> None:
    import torch.distributed as dist

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("gloo")
    for step in range(steps):
        time.sleep(pause)
        if world > 1:
            dist.barrier()
        if rank == 0:
            print(f"step {step + 1}/{steps} loss {loss_at(step):.4f}", flush=True)
    if world > 1:
        dist.destroy_process_group()


def run_styled(style: str, steps: int, pause: float) -> None:
    begun = time.monotonic()
    last = begun
    for it in range(1, steps + 1):
        time.sleep(pause)
        now = time.monotonic()
        ms = 1000 * (now - last)
        last = now
        loss = loss_at(it)
        if style == "megatron":
            stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S")
            print(f" [{stamp}] iteration {it:8d}/{steps:8d} | consumed samples: {it * 8:12d} | elapsed time per "
                  f"iteration (ms): {ms:.1f} | learning rate: {3e-4 * min(1.0, it / 10):.6E} | global batch size: "
                  f"{8:5d} | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: {1.0 / it:.3f} | number of skipped "
                  f"iterations: {0:3d} | number of nan iterations: {0:3d} |", flush=True)
        else:  # torchtitan colours its fields
            print(f"[rank0]:[titan] {datetime.now().strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} - root - INFO - "
                  f"\x1b[31mstep: {it:2}  \x1b[32mloss: {loss:8.5f}  \x1b[38;2;180;60;0mgrad_norm: {1.0 / it:7.4f}  "
                  f"\x1b[33mmemory:  9.46GiB(64.99%)  \x1b[34mtps: {7282 + it:,}  \x1b[36mtflops: 0.52  "
                  f"\x1b[35mmfu: 0.17%\x1b[39m", flush=True)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--style", required=True, choices=("tqdm", "hf", "lightning", "plain", "megatron", "torchtitan"))
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--step-seconds", type=float, default=0.5)
    args = ap.parse_args(argv)
    runners = {"tqdm": run_tqdm, "hf": run_hf, "lightning": run_lightning, "plain": run_plain}
    if args.style in runners:
        runners[args.style](args.steps, args.step_seconds)
    else:
        run_styled(args.style, args.steps, args.step_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
