"""scripts/simulated-nvidia-smi (the SIMULATED tool: no GPU here) loaded as a module, to read its values for a given
sample number without running it in real time."""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "simulated-nvidia-smi"


@functools.cache
def simulator() -> Any:
    """The script as a module (it has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("simulated_nvidia_smi", str(SCRIPT))
    spec = importlib.util.spec_from_loader("simulated_nvidia_smi", loader)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod
