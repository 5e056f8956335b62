"""Regenerate the progress captures beside this file: real training loops of the libraries whose progress ntui reads,
run here on the CPU (tiny models built from a config, random data, no download), their stdout and stderr together in
``<library>-<version>/<case>.out`` as a batch log holds them (bars to a file: ``\\r`` redraws, no newline until the
end).

    PYTHONPATH=DIR .venv/bin/python tests/data/progress/capture.py [CASE ...]

where DIR holds transformers and lightning (``pip install --target DIR --no-deps transformers lightning
lightning-utilities torchmetrics tokenizers safetensors huggingface_hub regex``: they are not ntui's dependencies).
torch and tqdm are the venv's. Each case runs at a steady pace (a sleep per step), so that a test can check an ETA
made at mid-run against the run's real end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

TQDM = '''
import time
from tqdm import tqdm
bar = tqdm(range(80), desc="train", mininterval=0)
for step in bar:
    time.sleep(0.25)
    bar.set_postfix(loss=f"{2.0 - step / 40:.3f}")
'''

# a long run's log so far: stopped after STOP_AFTER_S seconds, at about step 75 of 10,000 (its rate: a run that a
# one-hour allocation cannot finish)
TQDM_LONG = '''
import time
from tqdm import tqdm
bar = tqdm(range(10_000), desc="train", mininterval=0)
for step in bar:
    time.sleep(0.4)
    bar.set_postfix(loss=f"{2.0 / (1 + step / 50):.3f}")
'''
STOP_AFTER_S = 30.0

HF = '''
import time
import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments, TrainerCallback

class Steady(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        time.sleep(0.25)

config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                    max_position_embeddings=32, num_labels=2)
model = BertForSequenceClassification(config)
torch.manual_seed(0)
data = [{"input_ids": torch.randint(0, 64, (16,)), "labels": torch.tensor(i % 2)} for i in range(64)]
args = TrainingArguments(output_dir=OUT, max_steps=80, per_device_train_batch_size=4, logging_steps=10,
                         save_strategy="no", report_to=[], disable_tqdm=False, use_cpu=True)
Trainer(model=model, args=args, train_dataset=data, callbacks=[Steady()]).train()
'''

LIGHTNING = '''
import time
import torch
import lightning as L

class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)
    def training_step(self, batch, i):
        time.sleep(0.1)
        loss = self.layer(batch).pow(2).mean()
        self.log("train_loss", loss, prog_bar=True)
        return loss
    def validation_step(self, batch, i):
        self.log("val_loss", self.layer(batch).pow(2).mean(), prog_bar=True)
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

torch.manual_seed(0)
data = torch.utils.data.DataLoader(torch.randn(80, 8), batch_size=4)
BARS = {"rich": [], "tqdm": [L.pytorch.callbacks.TQDMProgressBar()]}[BAR]
L.Trainer(max_epochs=3, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
          default_root_dir=OUT, limit_val_batches=5, callbacks=BARS).fit(Tiny(), data, data)
'''

# Megatron's and torchtitan's line forms, printed by examples/progress_train.py (their libraries need GPUs to
# train): the forms are theirs (Megatron-LM's training_log, torchtitan's metrics logger), the numbers that loop's
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "progress_train.py"
STYLES = "import runpy, sys\nsys.argv = [EXAMPLE, '--style', sys.argv[1], '--steps', '40', '--step-seconds', '0.1']\n" \
         "runpy.run_path(EXAMPLE, run_name='__main__')\n"

# name -> (library, program)
CASES: dict[str, tuple[str, str]] = {
    "tqdm-loop": ("tqdm", TQDM),
    "tqdm-long-partial": ("tqdm", TQDM_LONG),  # stopped after STOP_AFTER_S: a running job's log so far
    "hf-trainer": ("transformers", HF),
    # Lightning's default bar is Rich's when rich is installed (it is, for ntui): on a file it prints its final state
    "lightning-rich": ("lightning", 'BAR = "rich"\n' + LIGHTNING),
    "lightning-tqdm": ("lightning", 'BAR = "tqdm"\n' + LIGHTNING),
    "megatron-style": ("styles", STYLES),
    "torchtitan-style": ("styles", STYLES),
}


def capture(case: str) -> None:
    library, program = CASES[case]
    version = getattr(__import__(library), "__version__", "unknown") if library != "styles" else "ntui"
    into = HERE / f"{library}-{version}"
    into.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ntui-progress-") as tmp:
        script = Path(tmp) / "train.py"
        script.write_text(f"OUT = {tmp!r}\nEXAMPLE = {str(EXAMPLE)!r}\n" + program)
        env = dict(os.environ, TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
        argv = [case.split("-")[0]] if library == "styles" else []
        with subprocess.Popen([sys.executable, str(script), *argv], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=env, cwd=tmp) as proc:
            try:
                out, _ = proc.communicate(timeout=STOP_AFTER_S if case.endswith("-partial") else 600)
            except subprocess.TimeoutExpired:
                if not case.endswith("-partial"):
                    raise
                proc.terminate()  # the run goes on in its allocation: its log so far
                out, _ = proc.communicate()
        text = out.decode("utf-8", "replace").replace(tmp, "/tmp/ntui-progress")
    (into / f"{case}.out").write_text(text)
    print(f"{case}: {library} {version}, exit {proc.returncode}, {len(text)} bytes")


def main(argv: list[str]) -> int:
    for case in argv or list(CASES):
        capture(case)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
