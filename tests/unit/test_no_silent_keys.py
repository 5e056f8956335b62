"""No preset key is silently ignored: on every shipped preset, in its own shape and on one node, changing any
key that a user may write either changes the generated script or adds a problem (an error or a warning that
names why the key does nothing). This found `launcher.extra-args` dropped by the srun launcher (now R14) and a
`monitor.interval` on a job without the GPU sampler (now M3)."""

from __future__ import annotations

from typing import Any

import pytest

from ntui.core.compose.longrun import RUN_KEYS
from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import (
    CONTAINER_KEYS,
    LAUNCHER_KEYS,
    LOGS_KEYS,
    MONITOR_KEYS,
    NCCL_KEYS,
    TOP_KEYS,
    validate,
)
from ntui.core.progress.preset import PROGRESS_KEYS
from tests.conftest import REPO

PRESETS = sorted(p.stem for p in (REPO / "presets").glob("*.yaml"))
SHAPES = ((), ("sbatch.nodes=1",))
#: Each key and the values to try (those that differ from the preset's own; a key is silent when none of them
#: is noticed, so a value that only restates the default, like gpu: false on a job without GPUs, is no finding).
VALUES: dict[str, tuple[str, ...]] = {
    "name": ("other-name",),
    "launcher.type": ("torchrun", "srun"),
    "launcher.nproc-per-node": ("3", "1"),
    "launcher.master-port": ("20001", "20002"),
    "launcher.python": ("python3 -u", "python"),
    "launcher.kill-on-bad-exit": ("false", "true"),
    "launcher.extra-args": ('["--max-restarts=1"]', '["--max_restarts=1"]'),
    "launcher.mixed-precision": ("bf16", "fp16"),
    "launcher.multi-gpu": ("false", "true"),
    "launcher.cpu": ("true", "false"),
    "launcher.dynamo-backend": ("inductor", "eager"),
    "container.runtime": ("shifter", "none"),
    "container.image": ("nersc/pytorch:24.06.01", "/images/train.sif"),
    "container.mounts": ('["/scratch/data:/data"]',),
    "container.workdir": ("/w", "/v"),
    "container.options": ('["--entrypoint"]',),
    "env.NTUI_TEST_VAR": ("1",),
    "setup": ('["echo setup"]',),
    "script": (str(REPO / "bench" / "startup.py"), str(REPO / "examples" / "ddp_check.py")),
    "args": ('["--steps", "3"]',),
    "logs.dir": ("/tmp/ntui-other-logs",),
    "nccl.debug": ("true", "false"),
    "nccl.slingshot": ("true", "false"),
    "monitor.gpu": ("false", "true"),
    "monitor.interval": ("7", "11"),
    "monitor.allow-attach": ("false", "true"),
    "sbatch.gpus-per-node": ("2", "1"),
    "sbatch.time": ("00:07:00", "00:09:00"),
    "sbatch.qos": ("regular", "debug"),
    "sbatch.image": ("nersc/pytorch:25.02.01", "nersc/pytorch:24.06.01"),
    "sweep": ('{grid: {x: ["1", "2"]}}',),
    "sweep.grid": ('{lr: ["1"], seed: ["2"]}',),
    "sweep.parallel": ("3", "1"),
    "sweep.metric": ("acc=([0-9.]+)", "loss=([0-9.]+)"),
    "run": ("{continue: requeue}",),
    "run.checkpoint-signal": ("URG", "USR2"),
    "run.warning": ("120", "90"),
    "run.grace": ("50", "40"),
    "run.continue": ("chain", "none"),
    "run.max-restarts": ("2", "3"),
    "progress.pattern": ("'^it (?P<step>\\d+)'", "'^step (?P<step>\\d+)'"),
}


def _current(data: dict[str, Any], key: str) -> str | None:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return str(node).lower() if isinstance(node, bool) else str(node)


@pytest.mark.parametrize("shape", SHAPES, ids=["own-shape", "one-node"])
@pytest.mark.parametrize("preset", PRESETS)
def test_every_key_changes_the_script_or_says_why_not(preset: str, shape: tuple[str, ...]) -> None:
    loaded = load_preset(preset, shape)
    spec, before = validate(loaded)
    assert spec is not None, [str(p) for p in before]
    script = render(spec)
    data = loaded.data
    silent = []
    for key, values in VALUES.items():
        tried = [v for v in values if v != _current(data, key)]
        if tried and not any(_noticed(preset, shape, f"{key}={v}", script, before) for v in tried):
            silent.append(f"{key}={'|'.join(tried)}")
    assert not silent, f"{preset} {shape}: these change neither the script nor the problems: {silent}"


def _noticed(preset: str, shape: tuple[str, ...], override: str, script: str, before: list[Any]) -> bool:
    changed, problems = validate(load_preset(preset, [*shape, override]))
    if {str(p) for p in problems} - {str(p) for p in before}:
        return True  # refused or warned: the user is told
    assert changed is not None
    return render(changed) != script


def test_every_key_a_preset_can_hold_is_tried() -> None:
    """A new preset key must be added to VALUES (sbatch options and env names are open-ended: a few stand in)."""
    sections = {"launcher": LAUNCHER_KEYS, "container": CONTAINER_KEYS, "logs": LOGS_KEYS, "nccl": NCCL_KEYS,
                "monitor": MONITOR_KEYS, "sweep": ("grid", "parallel", "metric"), "run": RUN_KEYS,
                "progress": PROGRESS_KEYS}
    keys = {f"{section}.{k}" for section, names in sections.items() for k in names}
    keys |= {k for k in TOP_KEYS if k not in sections and k not in ("sbatch", "env", "description", "extends")}
    assert keys <= set(VALUES), sorted(keys - set(VALUES))  # description: the picker's line; extends: V6
