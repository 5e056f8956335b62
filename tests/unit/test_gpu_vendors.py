"""AMD and Intel GPU tools read into ntui's per-GPU samples (ntui/core/gpu/vendors.py), on output written in each
tool's documented form (tests/data/gpus/vendors/README.md: no such GPU here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.gpu.vendors import (
    parse_amd_smi_json,
    parse_amd_smi_text,
    parse_rocm_smi_json,
    parse_xpu_smi_dump,
    visible_devices,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "gpus" / "vendors"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def test_rocm_smi_of_a_recent_rocm_with_a_secondary_die() -> None:
    got = parse_rocm_smi_json(_read("rocm-smi-new.json"), "frontier00001")
    assert [(s.index, s.util_gpu, s.util_mem, s.power_w, s.temp_c) for s in got] == [
        (0, 97.0, 41.0, 388.0, 51.0), (1, 95.0, 39.0, None, 49.0)]  # the secondary die draws no power of its own
    assert got[0].mem_total_mib == 65520.0 and round(got[0].mem_used_mib or 0) == 40623
    assert got[0].node == "frontier00001"


def test_rocm_smi_of_an_older_rocm_matches_its_other_keys() -> None:
    (card,) = parse_rocm_smi_json(_read("rocm-smi-old.json"), "n1")
    assert (card.util_gpu, card.util_mem, card.power_w, card.mem_used_mib, card.mem_total_mib) == (
        12.0, 7.0, 121.0, 1024.0, 32752.0)


@pytest.mark.parametrize("name", ["amd-smi-monitor.json", "amd-smi-monitor.txt"])
def test_amd_smi_monitor_in_json_and_as_its_table_read_the_same(name: str) -> None:
    parse = parse_amd_smi_json if name.endswith(".json") else parse_amd_smi_text
    got = parse(_read(name), "lumi-g1")
    assert [(s.index, s.util_gpu, s.util_mem, s.power_w, s.temp_c, s.mem_used_mib, s.mem_total_mib) for s in got] == [
        (0, 99.0, 33.0, 402.0, 58.0, 101500.0, 196300.0), (1, 0.0, 0.0, None, 41.0, 290.0, 196300.0)]


def test_amd_smi_metric() -> None:
    (gpu,) = parse_amd_smi_json(_read("amd-smi-metric.json"), "n")
    assert (gpu.util_gpu, gpu.util_mem, gpu.power_w, gpu.mem_used_mib, gpu.mem_total_mib) == (
        88.0, 20.0, 355.0, 150000.0, 196288.0)


def test_xpu_smi_dump_keeps_each_devices_last_sample() -> None:
    got = parse_xpu_smi_dump(_read("xpu-smi-dump.csv"), "x1")
    assert [(s.index, s.util_gpu, s.power_w, s.temp_c, s.util_mem, s.mem_used_mib) for s in got] == [
        (0, 91.0, 305.9, 42.0, 23.0, 30211.0), (1, 86.5, 290.1, 40.5, 21.9, 29870.5)]


def test_other_text_is_no_sample() -> None:
    for parse in (parse_rocm_smi_json, parse_amd_smi_json, parse_amd_smi_text, parse_xpu_smi_dump):
        assert parse("No devices were found\n", "n") == []
        assert parse(_read("amd-smi-monitor.txt") if parse is not parse_amd_smi_text else "{}", "n") == []


def test_the_visible_devices_variable_slurm_set_is_read() -> None:
    assert visible_devices({"CUDA_VISIBLE_DEVICES": "0,1,2,3"}) == ("nvidia", (0, 1, 2, 3))
    assert visible_devices({"ROCR_VISIBLE_DEVICES": "4,5"}) == ("amd", (4, 5))
    assert visible_devices({"ZE_AFFINITY_MASK": "0.0,0.1,1"}) == ("intel", (0, 1))
    assert visible_devices({"CUDA_VISIBLE_DEVICES": "GPU-1f2e", "PATH": "/bin"}) is None
    assert visible_devices({}) is None


def test_tick_lines_turn_a_tick_into_data_lines_and_pass_the_rest() -> None:
    from ntui.core.gpu.vendors import TickLines

    rocm = (DATA / "rocm-smi-new.json").read_text()
    ticks = TickLines("nid001")
    assert ticks.feed("# ntui-gpu-samples v1 ... tool=rocm-smi\n") == ["# ntui-gpu-samples v1 ... tool=rocm-smi\n"]
    assert ticks.feed("@ rocm-smi 2026/12/02 10:00:00.000\n") == []
    assert all(ticks.feed(line) == [] for line in rocm.splitlines(keepends=True))  # held until the tick ends
    out = ticks.feed("@.\n")
    assert out == ["2026/12/02 10:00:00.000, 0, nid001:card0, 97, 40623.125, 65520, 388, 51\n",
                   "2026/12/02 10:00:00.000, 1, nid001:card1, 95, 39967.938, 65520, [N/A], 49\n"]
    assert ticks.not_understood is None
    ticks.feed("@ rocm-smi 2026/12/02 10:00:10.000\n")
    ticks.feed("ERROR: GPU[0] : Unable to read sysfs\n")
    assert ticks.feed("@.\n") == [] and ticks.not_understood == ("rocm-smi", "ERROR: GPU[0] : Unable to read sysfs")
