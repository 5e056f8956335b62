"""Preset loading and validation: every problem names file:line and field, all at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.spec import validate
from ntui.core.problems import PresetError
from ntui.core.slurm.durations import format_time_limit, parse_time_limit
from tests.conftest import REPO


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def problems_of(path: Path, *overrides: str) -> list[str]:
    try:
        loaded = load_preset(str(path), overrides)
    except PresetError as exc:
        return [str(p) for p in exc.problems]
    _, problems = validate(loaded)
    return [str(p) for p in problems if p.is_error]


BROKEN = """\
name: broken
launcher:
  type: torchrun
  nproc_per_node: 4
sbatch:
  nodes: two
  ntasks-per-node: 4
  gpus-per-node: 4
  tme: "00:10:00"
  time: "1:99:00"
script: train.py
env:
  1BAD: x
"""


def test_all_problems_at_once_with_file_line_and_field(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.yaml", BROKEN)
    msgs = problems_of(path)
    assert f'{path}:6: sbatch.nodes: expected a positive integer, got "two"' in msgs
    assert f"{path}:4: launcher.nproc_per_node: unknown key; did you mean 'nproc-per-node'?" in msgs
    assert f"{path}:9: sbatch.tme: unknown sbatch option; did you mean 'time'?" in msgs
    assert any(m.startswith(f"{path}:10: sbatch.time: minutes and seconds must be below 60") for m in msgs)
    assert any(m.startswith(f"{path}:7: sbatch.ntasks-per-node: torchrun runs one launcher per node") for m in msgs)
    assert f"{path}:13: env.1BAD: not a valid environment variable name" in msgs
    assert len(msgs) == 6


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ":1: empty preset"),
        ("- a\n- b\n", ":1: expected a YAML mapping, got list"),
        ("name: x\nsbatch: {nodes: 2\n", ":2: YAML syntax error"),  # the unclosed brace, not the end (issue 15)
        ("name: [unclosed\n", "YAML syntax error"),
    ],
)
def test_malformed_files(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, "bad.yaml", text)
    msgs = problems_of(path)
    assert len(msgs) == 1 and expected in msgs[0] and str(path) in msgs[0], msgs


def test_binary_and_huge_files(tmp_path: Path) -> None:
    b = tmp_path / "bin.yaml"
    b.write_bytes(b"\x00\x01\x02name: x")
    assert "binary file" in problems_of(b)[0]
    h = tmp_path / "huge.yaml"
    h.write_text("a: " + "x" * 2_000_000)
    assert "larger than" in problems_of(h)[0]


def test_extends_deep_merge_and_lines(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "launcher: {type: srun}\nsbatch:\n  nodes: 2\n  cpus-per-task: 4\nscript: /x.py\n")
    child = write(tmp_path, "child.yaml", "extends: base\nsbatch:\n  nodes: zero\n")
    loaded = load_preset(str(child))
    assert loaded.data["sbatch"] == {"nodes": "zero", "cpus-per-task": 4}
    assert loaded.data["launcher"] == {"type": "srun"}
    msgs = problems_of(child)
    assert msgs == [f'{child}:3: sbatch.nodes: expected a positive integer, got "zero"']


def test_extends_cycle_reported(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "extends: b\nscript: /x.py\n")
    b = write(tmp_path, "b.yaml", "extends: a\n")
    msgs = problems_of(b)
    assert len(msgs) == 1 and "cycle in extends" in msgs[0]


def test_extends_missing_parent(tmp_path: Path) -> None:
    p = write(tmp_path, "c.yaml", "extends: nope-not-here\nscript: /x.py\n")
    msgs = problems_of(p)
    assert msgs[0].startswith(f"{p}:1: extends: no preset named 'nope-not-here'")


def test_overrides_are_yaml_and_named() -> None:
    loaded = load_preset("local-torchrun", ["sbatch.nodes=4", 'args=["--lr", "0.1"]', "env.X=yes"])
    spec, problems = validate(loaded)
    assert spec is not None
    assert spec.nodes == 4 and spec.args == ("--lr", "0.1")
    assert ("X", "yes") in spec.env  # raw text, not YAML's True
    bad = load_preset("local-torchrun", ["sbatch.nodes=two"])
    _, problems = validate(bad)
    assert [str(p) for p in problems if p.is_error] == [
        '--set sbatch.nodes: expected a positive integer, got "two"'  # the field is named once (issue 15)
    ]
    # also when the problem is in one item of the value set: the item's field, once
    item = load_preset("local-torchrun", ['launcher.extra-args=["--rdzv-conf=is_host=1"]'])
    _, problems = validate(item)
    (msg,) = [str(p) for p in problems if p.is_error]
    assert msg.startswith("--set launcher.extra-args.0: --rdzv-conf: is_host") and msg.count("extra-args") == 1


def test_raw_scalars_reach_args_verbatim(tmp_path: Path) -> None:
    p = write(tmp_path, "v.yaml", "launcher: {type: srun}\nscript: /x.py\nargs: [yes, 0.10, 1e3, 'no', 010]\n")
    spec, _ = validate(load_preset(str(p)))
    assert spec is not None and spec.args == ("yes", "0.10", "1e3", "no", "010")


@pytest.mark.parametrize(
    ("rule", "overrides", "fragment"),
    [
        ("G1", ["sbatch.gpus-per-node=4", "sbatch.ntasks-per-node=2"], "must equal GPUs per node"),
        ("G2", ["sbatch.gpus-per-node=4", "launcher.nproc-per-node=2"], "must equal GPUs per node"),
        ("G3", ["sbatch.gpus-per-node=4", "sbatch.gres=gpu:4"], "mutually exclusive"),
        ("G4", ["sbatch.gpus-per-task=1"], "needs an explicit --ntasks"),
        ("P3", ["sbatch.chdir=$SCRATCH/run"], "no shell expansion"),
        ("port", ["launcher.master-port=80"], "expected auto or a port"),
        ("launcher", ["launcher.type=mpirun"], "expected one of srun, torchrun, accelerate"),
        ("reserved", ["sbatch.output=/tmp/x.out"], "set logs.dir instead"),
        ("signal", ["sbatch.signal=B:USR2@99999"], "0..65535"),
    ],
)
def test_rules(rule: str, overrides: list[str], fragment: str) -> None:
    _, problems = validate(load_preset("local-torchrun", overrides))
    assert any(fragment in str(p) and p.is_error for p in problems), (rule, [str(p) for p in problems])


def test_accelerate_cpu_and_multi_gpu_exclusive() -> None:
    _, problems = validate(load_preset("local-accelerate", ["launcher.cpu=true", "launcher.multi-gpu=true"]))
    assert any("exclusive" in str(p) for p in problems)


def test_five_gpus_is_only_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """ntui knows no node: without a site, five GPUs a node is accepted and nothing is said of a machine (the rule G6
    said "Perlmutter nodes have 4" to everyone, issue 44). The NERSC site says G6's words with its own id, and
    refuses, as it knows its nodes (tests/unit/test_site.py: MOVED)."""
    monkeypatch.delenv("NTUI_SITE_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(REPO / "nowhere"))
    five = ["sbatch.gpus-per-node=5", "sbatch.ntasks-per-node=5"]
    spec, problems = validate(load_preset("local-srun", five))
    assert spec is not None and not [str(p) for p in problems if p.is_error or "Perlmutter" in p.message]
    monkeypatch.setenv("NTUI_SITE_DIR", str(REPO / "sites" / "nersc"))
    _, problems = validate(load_preset("local-srun", five))
    assert any(str(p).endswith("5 GPUs per node: Perlmutter nodes have 4; Slurm will refuse (NERSC-GPUS)")
               for p in problems), [str(p) for p in problems]


@pytest.mark.parametrize(
    ("text", "seconds", "canonical"),
    [("30", 1800, "00:30:00"), ("30:00", 1800, "00:30:00"), ("1:30:00", 5400, "01:30:00"),
     ("2-0", 172800, "2-00:00:00"), ("1-2:3", 93780, "1-02:03:00"), ("1-2:3:4", 93784, "1-02:04:00"),
     ("0:30", 30, "00:01:00"), ("48:00:00", 172800, "2-00:00:00")],
)
def test_time_formats(text: str, seconds: int, canonical: str) -> None:
    assert parse_time_limit(text) == seconds
    assert format_time_limit(seconds) == canonical


@pytest.mark.parametrize("text", ["", "abc", "1:2:3:4", "1-", "-5", "1:60", "1-2:60"])
def test_bad_times(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time_limit(text)


def test_cli_check_exit_codes(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.yaml", BROKEN)
    bad = subprocess.run([sys.executable, "-m", "ntui", "check", str(path)], capture_output=True, text=True,
                         cwd=REPO, timeout=60)
    assert bad.returncode == 2
    assert f'{path}:6: sbatch.nodes: expected a positive integer, got "two"' in bad.stderr
    assert "6 error(s)" in bad.stderr
    for name in ("local-srun", "local-torchrun", "local-accelerate",
                 "perlmutter-srun", "perlmutter-torchrun", "perlmutter-accelerate"):
        ok = subprocess.run([sys.executable, "-m", "ntui", "check", name], capture_output=True, text=True,
                            cwd=REPO, timeout=60)
        assert ok.returncode == 0, ok.stderr


def test_user_preset_shadows_shipped(_isolated_user_dirs: Path) -> None:
    d = _isolated_user_dirs / ".config" / "ntui" / "presets"
    d.mkdir(parents=True)
    (d / "local-srun.yaml").write_text("description: mine\nlauncher: {type: srun}\nscript: /x.py\n")
    loaded = load_preset("local-srun")
    assert loaded.path == d / "local-srun.yaml"
