"""AMD and Intel GPU tools read into the same per-GPU sample as nvidia-smi's (:class:`~ntui.core.gpu.smi.GpuSample`).

* **rocm-smi** ``--showuse --showmemuse --showpower --showmeminfo vram --showtemp --json``: ``{"card0": {...}}``, every
  value a string. Its keys changed between releases (``GPU memory use (%)`` once meant the memory's activity, now
  ``GPU Memory Allocated (VRAM%)`` is the allocation; power is an average or a current socket power), so each field
  is found by a pattern, never by one spelling; ``N/A`` in any form (``N/A (Secondary die)``) is no value.
* **amd-smi** ``monitor --json`` (a list, one object per GPU, each value ``{"value": V, "unit": U}`` or ``"N/A"``)
  and ``metric --json`` (``usage.gfx_activity``, ``power.socket_power``, ``mem_usage.{total_vram,used_vram}``), and
  ``monitor``'s text table (a header of names, rows with units after the numbers).
* **xpu-smi** ``dump -m 0,1,3,5,18``: CSV with a header naming each metric and its unit.

The in-job sampler runs one of these tools once a tick on a node without nvidia-smi and writes its output between
``@ TOOL TIMESTAMP`` and ``@.`` lines; :class:`TickLines` turns each tick into the sample files' data lines, so
every reader of the files (report, GPU pane, quiet evidence) sees one format whatever the vendor.

The visible-devices variable Slurm sets (``CUDA_VISIBLE_DEVICES``, ``ROCR_VISIBLE_DEVICES``, ``ZE_AFFINITY_MASK``:
gres.conf's ``*_gpu_env`` flags) is read, not assumed (:func:`visible_devices`). Pure.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ntui.core.gpu.smi import GpuSample

__all__ = ["TICK_END", "TICK_MARK", "TICK_PARSERS", "VISIBLE_VARIABLES", "TickLines", "parse_amd_smi_json",
           "parse_amd_smi_text", "parse_rocm_smi_json", "parse_xpu_smi_dump", "sample_line", "visible_devices"]

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
    key = _key_for(tuple(fields), patterns)
    return None if key is None else fields[key]


@functools.lru_cache(maxsize=256)
def _key_for(keys: tuple[str, ...], patterns: tuple[str, ...]) -> str | None:
    """The key :func:`_find` picks, once per set of keys (a tool prints the same keys every snapshot)."""
    for pattern in patterns:
        rx = re.compile(pattern, re.IGNORECASE)
        for key in keys:
            if rx.search(key):
                return key
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


# ---------------------------------------------------------------------------------------------- the sampler's ticks

#: The parser of each tool the in-job sampler runs once a tick on a node without nvidia-smi (its commands:
#: ntui.core.jobfiles.samplefiles.OTHER_TOOLS). nvidia-smi itself streams ntui's CSV (``-l``) and needs none.
TICK_PARSERS: dict[str, Callable[[str, str], list[GpuSample]]] = {
    "amd-smi": lambda text, node: parse_amd_smi_json(text, node) or parse_amd_smi_text(text, node),
    "rocm-smi": parse_rocm_smi_json,
    "xpu-smi": parse_xpu_smi_dump,
}
#: A tick in a sample file: ``@ TOOL TIMESTAMP``, the tool's output, then :data:`TICK_END`.
TICK_MARK = "@ "
TICK_END = "@."


def _cell(value: float | None) -> str:
    return "[N/A]" if value is None else f"{value:.3f}".rstrip("0").rstrip(".")


def sample_line(timestamp: str, s: GpuSample) -> str:
    """One GPU of a tick as a data line of the sample files (SAMPLE_FIELDS' order), the line nvidia-smi writes."""
    return ", ".join((timestamp, str(s.index), s.uuid, _cell(s.util_gpu), _cell(s.mem_used_mib),
                      _cell(s.mem_total_mib), _cell(s.power_w), _cell(s.temp_c)))


class TickLines:
    """A sample file's lines in, its data lines out: a tick of another vendor's tool becomes one data line per GPU
    (when its end comes), every other line passes through unchanged. One per node file, fed in order."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.tool = ""
        self.timestamp = ""
        self.inside = False
        self.buffer: list[str] = []
        #: the last tick whose output was not understood: (tool, its first line)
        self.not_understood: tuple[str, str] | None = None

    def feed(self, line: str) -> list[str]:
        if line.startswith(TICK_MARK):
            words = line[len(TICK_MARK):].strip().split(" ", 1)
            self.tool, self.timestamp = (words[0], words[1]) if len(words) == 2 else (words[0], "")
            self.inside, self.buffer = True, []
            return []
        if line.rstrip("\r\n") == TICK_END:
            if not self.inside:
                return []
            self.inside = False
            return self._flush()
        if self.inside:
            self.buffer.append(line)
            return []
        return [line]

    def _flush(self) -> list[str]:
        parse = TICK_PARSERS.get(self.tool)
        text = "".join(self.buffer)
        samples = parse(text, self.node) if parse is not None else []
        if not samples and text.strip():
            self.not_understood = (self.tool, text.strip().splitlines()[0][:120])
        return [sample_line(self.timestamp, s) + "\n" for s in samples]
