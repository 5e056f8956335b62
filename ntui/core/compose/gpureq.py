"""A preset's GPU request: ``sbatch.gpus-per-node``/``gpus-per-task``/``gpus`` (``[TYPE:]COUNT``) or ``gres``
(``gpu[:TYPE]:COUNT`` in a comma list), read into the option, the count and the type (G1-G5 judge them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DECIMAL", "GpuRequest", "parse_gpu_request"]

#: Plain decimal, as the integer options are written (V4): YAML 1.1 reads 010 as 8.
DECIMAL = re.compile(r"0|[1-9][0-9]*")
_TYPED_COUNT = re.compile(r"(?:([A-Za-z][\w.-]*):)?([0-9]+)")


@dataclass(frozen=True)
class GpuRequest:
    """One way the preset asks for GPUs: the sbatch option, the count it names, and its type."""

    option: str
    count: int
    type: str = ""


def parse_gpu_request(option: str, text: str) -> GpuRequest | None:
    """``4``/``a100:4`` (or gres ``gpu:a100:4,nvme:1``) -> the GPU part; None if not that form.

    A gres without a gpu part is a request for 0 GPUs.
    """
    if option == "gres":
        for part in text.split(","):
            bits = part.split(":")
            if bits[0] != "gpu":
                continue
            if len(bits) in (2, 3) and DECIMAL.fullmatch(bits[-1]):
                return GpuRequest(option, int(bits[-1]), bits[1] if len(bits) == 3 else "")
            return None
        return GpuRequest(option, 0)
    m = _TYPED_COUNT.fullmatch(text)
    if not m or not DECIMAL.fullmatch(m.group(2)):
        return None
    return GpuRequest(option, int(m.group(2)), m.group(1) or "")
