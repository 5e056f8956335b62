"""AMD and Intel GPU tools read into the same per-GPU sample as nvidia-smi's (:class:`~ntui.core.gpu.smi.GpuSample`).

* **rocm-smi** ``--showuse --showmemuse --showpower --showmeminfo vram --showtemp --json``: ``{"card0": {...}}``, every
  value a string. Its keys changed between releases (``GPU memory use (%)`` once meant the memory's activity, now
  ``GPU Memory Allocated (VRAM%)`` is the allocation; power is an average or a current socket power), so each field
  is found by a pattern, never by one spelling; ``N/A`` in any form (``N/A (Secondary die)``) is no value.
* **amd-smi** ``monitor --json`` (a list, one object per GPU, each value ``{"value": V, "unit": U}`` or ``"N/A"``)
  and ``metric --json`` (``usage.gfx_activity``, ``power.socket_power``, ``mem_usage.{total_vram,used_vram}``), and
  ``monitor``'s text table (a header of names, rows with units after the numbers).
* **xpu-smi** ``dump -m 0,1,3,5,18``: CSV with a header naming each metric and its unit.

The visible-devices variable Slurm sets (``CUDA_VISIBLE_DEVICES``, ``ROCR_VISIBLE_DEVICES``, ``ZE_AFFINITY_MASK``:
gres.conf's ``*_gpu_env`` flags) is read, not assumed (:func:`visible_devices`). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ntui.core.gpu.smi import GpuSample

__all__ = ["VISIBLE_VARIABLES", "parse_amd_smi_json", "parse_amd_smi_text", "parse_rocm_smi_json",
           "parse_xpu_smi_dump", "visible_devices"]

#: Slurm's visible-devices variables, by vendor (gres.conf: nvidia_gpu_env, amd_gpu_env, intel_gpu_env).
VISIBLE_VARIABLES = (("nvidia", "CUDA_VISIBLE_DEVICES"), ("amd", "ROCR_VISIBLE_DEVICES"),
                     ("intel", "ZE_AFFINITY_MASK"))
_MIB = 1024 * 1024


def visible_devices(env: Mapping[str, str]) -> tuple[str, tuple[int, ...]] | None:
    """The vendor and device indices of the first visible-devices variable set (None: none, or not indices)."""
    for vendor, name in VISIBLE_VARIABLES:
        raw = env.get(name, "").strip()
        if raw:
            words = [w.split(".")[0].strip() for w in raw.split(",")]  # ZE's "0.1" is device 0, tile 1
            if all(w.isdigit() for w in words):
                return vendor, tuple(dict.fromkeys(int(w) for w in words))
    return None


def _number(value: Any) -> float | None:
    """A number from a tool's value: ``"93"``, ``93``, ``"171 W"``, ``{"value": 171}``; None for N/A and the like."""
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    m = re.match(r"^\s*(-?[0-9]+(?:\.[0-9]+)?)", str(value))
    return float(m.group(1)) if m else None


def _find(fields: Mapping[str, Any], *patterns: str) -> Any:
    """The value of the first key matching one of ``patterns`` (case-insensitive), in the patterns' order."""
    for pattern in patterns:
        rx = re.compile(pattern, re.IGNORECASE)
        for key, value in fields.items():
            if rx.search(key):
                return value
    return None


def parse_rocm_smi_json(text: str, node: str) -> list[GpuSample]:
    """rocm-smi's JSON (module docstring); [] when it is not that."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    out: list[GpuSample] = []
    for card, fields in (data.items() if isinstance(data, dict) else []):
        m = re.fullmatch(r"card(\d+)", str(card))
        if m is None or not isinstance(fields, dict):
            continue
        total_b = _number(_find(fields, r"VRAM Total Memory \(B\)"))
        used_b = _number(_find(fields, r"VRAM Total Used Memory \(B\)"))
        alloc = _number(_find(fields, r"Memory Allocated \(VRAM%\)"))
        if used_b is None and alloc is not None and total_b:
            used_b = total_b * alloc / 100
        out.append(GpuSample(
            node=node, index=int(m.group(1)),
            uuid=str(_find(fields, r"^Unique ID$", r"^UUID$") or f"{node}:card{m.group(1)}"),
            name=str(_find(fields, r"^Card (series|SKU|model)$", r"^Device Name$") or "AMD GPU"),
            util_gpu=_number(_find(fields, r"^GPU use \(%\)$")),
            util_mem=_number(_find(fields, r"Memory Read/Write Activity \(%\)", r"^GPU memory use \(%\)$")),
            mem_used_mib=used_b / _MIB if used_b is not None else None,
            mem_total_mib=total_b / _MIB if total_b is not None else None,
            temp_c=_number(_find(fields, r"Temperature \(Sensor edge\)", r"Temperature \(Sensor junction\)")),
            power_w=_number(_find(fields, r"Graphics Package Power \(W\)", r"Power \(W\)"))))
    return sorted(out, key=lambda s: s.index)


def _mib(value: Any) -> float | None:
    """amd-smi's memory values, in their unit (MB, GB, B) -> MiB."""
    n = _number(value)
    unit = str(value.get("unit", "MB") if isinstance(value, dict) else (re.findall(r"[A-Za-z]+", str(value)) or
                                                                         ["MB"])[-1])
    if n is None:
        return None
    scale = {"B": 1 / _MIB, "KB": 1 / 1024, "MB": 1.0, "MIB": 1.0, "GB": 1024.0, "GIB": 1024.0}
    return n * scale.get(unit.upper(), 1.0)


def _section(item: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = item.get(key)
    return value if isinstance(value, dict) else {}


def parse_amd_smi_json(text: str, node: str) -> list[GpuSample]:
    """amd-smi ``monitor --json`` or ``metric --json`` (module docstring); [] when it is neither."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    items = data if isinstance(data, list) else [data] if isinstance(data, dict) else []
    out: list[GpuSample] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("gpu"), int):
            continue
        usage, power, mem, temp = (_section(item, k) for k in ("usage", "power", "mem_usage", "temperature"))
        out.append(GpuSample(
            node=node, index=item["gpu"], uuid=f"{node}:gpu{item['gpu']}", name="AMD GPU",
            util_gpu=_number(item.get("gfx", usage.get("gfx_activity"))),
            util_mem=_number(item.get("mem", usage.get("umc_activity"))),
            mem_used_mib=_mib(item.get("vram_used", mem.get("used_vram"))),
            mem_total_mib=_mib(item.get("vram_total", mem.get("total_vram"))),
            temp_c=_number(item.get("hotspot_temperature", temp.get("hotspot"))),
            power_w=_number(item.get("power_usage", power.get("socket_power")))))
    return sorted(out, key=lambda s: s.index)


def parse_amd_smi_text(text: str, node: str) -> list[GpuSample]:
    """amd-smi ``monitor``'s table: ``GPU POWER GPU_TEMP ... VRAM_TOTAL``, then rows like ``0 171 W 32 °C``."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or not lines[0].split() or lines[0].split()[0] != "GPU":
        return []
    names = lines[0].split()
    out: list[GpuSample] = []
    for line in lines[1:]:
        cells = re.findall(r"N/A|-?[0-9]+(?:\.[0-9]+)?(?: ?(?:°C|W|%|MHz|MB|GB|MiB|GiB|KB|B)(?![A-Za-z]))?", line)
        if len(cells) != len(names) or not cells[0].isdigit():
            continue
        row = dict(zip(names, cells, strict=True))
        out.append(GpuSample(
            node=node, index=int(row["GPU"]), uuid=f"{node}:gpu{row['GPU']}", name="AMD GPU",
            util_gpu=_number(row.get("GFX_UTIL")), util_mem=_number(row.get("MEM_UTIL")),
            mem_used_mib=_mib(row.get("VRAM_USED")) if row.get("VRAM_USED") else None,
            mem_total_mib=_mib(row.get("VRAM_TOTAL")) if row.get("VRAM_TOTAL") else None,
            temp_c=_number(row.get("GPU_TEMP")), power_w=_number(row.get("POWER"))))
    return out


def parse_xpu_smi_dump(text: str, node: str) -> list[GpuSample]:
    """xpu-smi ``dump``'s CSV (module docstring): the last row of each device; [] when it is not that."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or "DeviceId" not in lines[0]:
        return []
    header = [h.strip() for h in lines[0].split(",")]
    latest: dict[int, dict[str, str]] = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(header) or not cells[header.index("DeviceId")].isdigit():
            continue
        row = dict(zip(header, cells, strict=True))
        latest[int(row["DeviceId"])] = row
    out = []
    for index, row in sorted(latest.items()):
        out.append(GpuSample(
            node=node, index=index, uuid=f"{node}:xpu{index}", name="Intel GPU",
            util_gpu=_number(_find(row, r"^GPU Utilization")), util_mem=_number(_find(row, r"Memory Utilization")),
            mem_used_mib=_number(_find(row, r"Memory Used")), mem_total_mib=None,
            temp_c=_number(_find(row, r"Core Temperature")), power_w=_number(_find(row, r"GPU Power"))))
    return out
