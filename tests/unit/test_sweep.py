"""Sweeps: the section's rules (W1-W9) with file:line messages, the manifest format (writer and reader, and the
script's bash reader), and every value reaching the program verbatim under the stub launchers, per array task."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.compose.sweep import parse_template
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.jobfiles.lognames import LogPaths, split_task_id, task_job_id
from ntui.core.jobfiles.manifest import (
    Manifest,
    ManifestError,
    SweepJob,
    TaskRecord,
    encode_manifest,
    format_indices,
    header_records,
    listing,
    manifest_of_script,
    parse_indices,
    parse_manifest,
    read_job_file,
    write_job_file,
)
from tests.conftest import REPO
from tests.support.waits import WAIT_BOUND_S
from tests.unit.test_launch_matrix import STUBS

HOSTILE = ["a b", "it's", 'say "hi"', "$(id)", "`id`", "${HOME}", "line1\nline2", "*", "-x", "", "tab\there",
           "{not a placeholder}", "100%", "ünïcødé", "back\\slash", "semi;colon && echo pwned"]


def _loaded(data: dict[str, Any], raw: dict[tuple[str, ...], str] | None = None) -> LoadedPreset:
    base: dict[str, Any] = {"name": "sw", "launcher": {"type": "srun"}, "script": "/opt/train.py",
                            "logs": {"dir": "/logs"}}
    return LoadedPreset("sw", None, base | data, raw=raw or {})


def _errors(data: dict[str, Any]) -> list[tuple[str | None, str, str]]:
    spec, problems = validate(_loaded(data))
    return [(p.rule, p.field, p.message) for p in problems if p.is_error]


# ---------------------------------------------------------------- rules


def test_grid_expands_first_parameter_slowest() -> None:
    spec, problems = validate(_loaded({"args": ["--lr", "{lr}", "--seed={seed}"],
                                       "sweep": {"grid": {"lr": ["3e-4", "1e-4"], "seed": ["1", "2", "3"]},
                                                 "parallel": 2}}))
    assert spec is not None and spec.sweep is not None, problems
    assert spec.sweep.names == ("lr", "seed")
    assert spec.sweep.tasks == (("3e-4", "1"), ("3e-4", "2"), ("3e-4", "3"), ("1e-4", "1"), ("1e-4", "2"),
                                ("1e-4", "3"))
    assert spec.sweep.array == "0-5%2"
    assert spec.sweep.substitute("--seed={seed}", 4) == "--seed=2"
    script = render(spec)
    assert "#SBATCH --array=0-5%2" in script
    assert "#SBATCH --output=/logs/sw-%A_%a.out" in script
    assert "--output=/logs/sw-%A_%a-rank-%t.out" in script


def test_zip_and_list() -> None:
    spec, _ = validate(_loaded({"args": ["{a}", "{b}"], "sweep": {"zip": {"a": ["1", "2"], "b": ["x", "y"]}}}))
    assert spec is not None and spec.sweep is not None and spec.sweep.tasks == (("1", "x"), ("2", "y"))
    assert spec.sweep.array == "0-1"
    spec, _ = validate(_loaded({"args": ["{a}", "{b}"],
                                "sweep": {"list": [{"a": "1", "b": "x"}, {"b": "z", "a": "9"}]}}))
    assert spec is not None and spec.sweep is not None and spec.sweep.tasks == (("1", "x"), ("9", "z"))


def test_values_stay_as_written() -> None:
    """YAML would read yes, 010, 1.50 and 1e3 as True, 8, 1.5 and (1.1) a string: the task gets the text."""
    text = "name: sw\nlauncher: {type: srun}\nscript: /opt/t.py\nargs: ['{v}']\n" \
           "sweep:\n  grid:\n    v: [yes, 010, 1.50, 1e3, 0x1F, ~x]\n"
    spec = validate(_from_text(text))[0]
    assert spec is not None and spec.sweep is not None
    assert [t[0] for t in spec.sweep.tasks] == ["yes", "010", "1.50", "1e3", "0x1F", "~x"]


def _from_text(text: str) -> LoadedPreset:
    with tempfile.TemporaryDirectory(prefix="ntui-test-sweep-") as tmp:  # (a file left in /tmp per run, before)
        path = Path(tmp) / "preset.yaml"
        path.write_text(text)
        return load_preset(str(path))


BAD: dict[str, dict[str, Any]] = {
    "W1": {"args": ["{a}"], "sweep": {"grid": {"a": ["1"]}, "zip": {"a": ["1"]}}},
    "W2": {"args": ["{a}"], "sweep": {"grid": {"a": []}}},
    "W3": {"args": ["{a}", "{b}"], "sweep": {"zip": {"a": ["1", "2"], "b": ["x"]}}},
    "W4": {"args": ["{a}", "{lrr}"], "sweep": {"grid": {"a": ["1"]}}},
    "W5": {"args": ["{a}"], "sweep": {"grid": {"a": ["1"], "b": ["2"]}}},
    "W6": {"args": ["{a}"], "sbatch": {"nodes": 1, "comment": "run-{a}"}, "sweep": {"grid": {"a": ["1"]}}},
    "W8": {"args": ["{a}"], "sweep": {"grid": {"a": ["1"]}, "parallel": 0}},
    "W9": {"args": ["{a}"], "sweep": {"grid": {"a": ["1"]}, "metric": "loss=([0-9"}},
}


@pytest.mark.parametrize("rule", sorted(BAD))
def test_each_rule_refuses_with_its_id(rule: str) -> None:
    found = _errors(BAD[rule])
    assert any(r == rule for r, _, _ in found), found


@pytest.mark.parametrize(("data", "field", "says"), [
    ({"args": ["{a}"], "sweep": {"grid": {"a": ["1"]}, "list": [{"a": "2"}]}}, "sweep", "exactly one"),
    ({"args": ["{a}"], "sweep": {}}, "sweep", "it has none"),
    ({"args": ["{a}"], "sweep": {"grid": {"a": [["1"]]}}}, "sweep.grid.a.0", "got a list"),
    ({"args": ["{a}"], "sweep": {"grid": {"a": "1"}}}, "sweep.grid.a", "expected a list"),
    ({"args": ["{a b}"], "sweep": {"grid": {"a b": ["1"]}}}, "sweep.grid.a b", "parameter name"),
    ({"args": ["{a}"], "sweep": {"list": [{"a": "1"}, {"b": "2"}]}}, "sweep.list.1", "same parameters"),
    ({"args": ["{a}"], "sweep": {"grid": {"a": ["1"]}, "step": 1}}, "sweep.step", "unknown key"),
    ({"args": ["{a}", "{"], "sweep": {"grid": {"a": ["1"]}}}, "args.1", "write {{ and }}"),
    ({"args": ["{a}}"], "sweep": {"grid": {"a": ["1"]}}}, "args.0", "lone '}'"),
    ({"args": ["{ab}"], "sweep": {"grid": {"a": ["1"], "abc": ["2"]}}}, "args.0", "did you mean {abc}"),
    ({"args": ["{a}"], "env": {"X": "{b}"}, "sweep": {"grid": {"a": ["1"]}}}, "env.X", "names no parameter"),
    ({"args": ["{a}"], "setup": ["mkdir {a}"], "sweep": {"grid": {"a": ["1"]}}}, "setup.0", "export it first"),
    ({"args": ["{a}"], "sweep": {"grid": {"a": ["1"], "sbatch.nodes": ["1", "2"]}}}, "sweep.grid.sbatch.nodes",
     "cannot be swept"),
    ({"args": ["{a}"], "sbatch": {"array": "0-3"}, "sweep": {"grid": {"a": ["1"]}}}, "sbatch.array",
     "writes --array itself"),
    ({"args": ["{a}"], "script": "/opt/{a}.py", "sweep": {"grid": {"a": ["1"]}}}, "script",
     "cannot differ between array tasks"),
    ({"args": ["{a}"], "sweep": {"grid": {"a": ["1"]}, "metric": "(a)(b)"}}, "sweep.metric", "2 groups"),
    ({"args": ["{a}"], "sweep": {"grid": {"a": ["1"]}, "parallel": "two"}}, "sweep.parallel", "positive whole"),
])
def test_messages_name_the_field_and_the_fix(data: dict[str, Any], field: str, says: str) -> None:
    found = _errors(data)
    assert any(f == field and says in m for _, f, m in found), found


def test_shell_braces_in_setup_and_braces_without_a_sweep_are_fine() -> None:
    spec, problems = validate(_loaded({"args": ["{a}"], "setup": ['echo "${a}" {x}'],
                                       "sweep": {"grid": {"a": ["1"]}}}))
    assert spec is not None, [str(p) for p in problems]
    spec, problems = validate(_loaded({"args": ['{"json": 1}', "{lr}"]}))
    assert spec is not None and spec.sweep is None and spec.args == ('{"json": 1}', "{lr}")


def test_escaped_braces() -> None:
    spec, _ = validate(_loaded({"args": ['{{"lr": {lr}}}'], "sweep": {"grid": {"lr": ["0.1"]}}}))
    assert spec is not None and spec.sweep is not None
    assert spec.sweep.substitute(spec.args[0], 0) == '{"lr": 0.1}'
    assert parse_template("{{x}}") == (("{x}",), ())


def test_too_many_tasks_is_counted_not_expanded() -> None:
    values = [str(i) for i in range(2001)]
    found = _errors({"args": ["{a}", "{b}"], "sweep": {"grid": {"a": values, "b": values}}})
    assert any(r == "W7" for r, _, _ in found), found


def test_problems_carry_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nlauncher: {type: srun}\nscript: /opt/t.py\nargs: ['{lr}']\nsweep:\n  zip:\n"
                    "    lr: ['1', '2']\n    seed: ['1']\n")
    problems = [str(p) for p in validate(load_preset(str(path)))[1]]
    assert any(p.startswith(f"{path}:7: sweep.zip.lr:") and p.endswith("(W3)") for p in problems), problems
    assert any(p.startswith(f"{path}:8: sweep.zip.seed:") and p.endswith("(W5)") for p in problems), problems


def test_shipped_sweep_preset() -> None:
    spec, problems = validate(load_preset("local-sweep"))
    assert spec is not None and spec.sweep is not None, [str(p) for p in problems]
    assert spec.sweep.size == 6 and spec.sweep.parallel == 2 and spec.sweep.metric


# ---------------------------------------------------------------- the manifest


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))),
                min_size=1, max_size=4),
       st.integers(min_value=0, max_value=5))
def test_manifest_round_trip(values: list[str], n: int) -> None:
    names = tuple(f"p{i}" for i in range(len(values)))
    manifest = Manifest(names, tuple(tuple(values) for _ in range(n)), "loss=(.*)")
    data = encode_manifest(manifest)
    assert parse_manifest(data) == manifest
    records = data.split(b"\x00")
    assert records[header_records(names) + (n - 1) * len(names)] == values[0].encode() if n else True


def test_manifest_refuses_what_is_not_one() -> None:
    good = encode_manifest(Manifest(("a",), (("1",), ("2",))))
    for bad in (b"", b"hello\x00", good[:-3], good + b"x\x00", good.replace(b"v1", b"v9")):
        with pytest.raises(ManifestError):
            parse_manifest(bad)
    with pytest.raises(ValueError):
        encode_manifest(Manifest(("a",), (("nul\x00",),)))


def test_job_file_round_trip(tmp_path: Path) -> None:
    job = SweepJob("x-sweep-0123.manifest", 6, (1, 4), 2, "123",
                   {1: TaskRecord("COMPLETED", "0:0", 5, source="sacct"), 4: TaskRecord("FAILED", "3:0")})
    path = tmp_path / "x-124.sweep"
    write_job_file(str(path), job)
    assert read_job_file(str(path)) == job
    assert read_job_file(str(tmp_path / "none.sweep")) is None
    path.write_text("{}")
    with pytest.raises(ManifestError):
        read_job_file(str(path))


def test_indices() -> None:
    assert format_indices([5, 0, 1, 2, 9, 8]) == "0-2,5,8-9"
    assert parse_indices("0-2,5,8-9%2") == (0, 1, 2, 5, 8, 9)
    assert parse_indices("0-8:4") == (0, 4, 8)
    assert split_task_id("123_4") == ("123", 4) and split_task_id("123") == ("123", None)
    assert LogPaths("/l", "s").batch(task_job_id("123", 4)) == "/l/s-123_4.out"


def test_listing_shows_hostile_values_as_literals() -> None:
    lines = listing(Manifest(("a",), (("plain",), ("a b",), ("x\ny",))))
    assert lines == ["0  a=plain", "1  a='a b'", "2  a='x\\ny'"]


# ---------------------------------------------------------------- values reach the program (stub launchers)

DUMPER = """import json, os, sys
task, rank = os.environ["SLURM_ARRAY_TASK_ID"], os.environ.get("RANK", "0")
out = os.path.join(os.environ["NTUI_DUMP_DIR"], f"task-{task}-rank-{rank}.json")
with open(out, "w") as fh:
    json.dump({"argv": sys.argv[1:], "env": {k: v for k, v in os.environ.items() if k.startswith("RUN_")}}, fh)
"""


@pytest.fixture(scope="module")
def sweep_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("sweepbin")
    for name in ("srun", "torchrun", "accelerate", "shifter", "scontrol"):
        p = d / name
        p.write_text(f'#!/bin/sh\nexec {sys.executable} {STUBS / (name + ".py")} "$@"\n')
        p.chmod(0o755)
    (d / "dump.py").write_text(DUMPER)
    return d


@pytest.mark.parametrize("launcher", ["srun", "torchrun", "accelerate"])
def test_each_task_gets_exactly_its_values(launcher: str, sweep_bin: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    data: dict[str, Any] = {
        "name": "hostile sweep", "launcher": {"type": launcher, "python": sys.executable},
        "sbatch": {"nodes": 1, "ntasks-per-node": 1, "cpus-per-task": 1}, "script": str(sweep_bin / "dump.py"),
        "logs": {"dir": str(logs)},
        "args": ["--v", "{v}", "--w={w}", "lit{{eral}}", "{v}{w}"],
        "env": {"RUN_V": "{v}", "RUN_BOTH": "<{v}|{w}>"},
        "sweep": {"grid": {"v": HOSTILE, "w": ["1", "$(touch /tmp/pwned-ntui)"]}},
    }
    if launcher != "srun":
        data["launcher"]["nproc-per-node"] = 1
    spec, problems = validate(LoadedPreset("hostile sweep", None, data))
    assert spec is not None and spec.sweep is not None, [str(p) for p in problems]
    script = render(spec)
    for value in HOSTILE:  # no value is in the script's text: they are read from the manifest
        if len(value) > 3:
            assert value not in script
    manifest = manifest_of_script(script)
    assert manifest is not None and manifest.startswith(str(logs))
    logs.mkdir()
    Path(manifest).write_bytes(spec.sweep.manifest_bytes())
    path = tmp_path / "job.sbatch"
    path.write_text(script)
    dump = tmp_path / "dump"
    dump.mkdir()
    for task in range(spec.sweep.size):
        env = {"PATH": f"{sweep_bin}:/usr/bin:/bin", "HOME": str(tmp_path), "SLURM_JOB_ID": str(5000 + task),
               "SLURM_ARRAY_JOB_ID": "5000", "SLURM_ARRAY_TASK_ID": str(task), "SLURM_JOB_NODELIST": "nid001",
               "SLURM_JOB_NUM_NODES": "1", "SLURM_CPUS_PER_TASK": "1", "NTUI_DUMP_DIR": str(dump),
               "NTUI_STUB_OUT": str(tmp_path / "stub.txt")}
        res = subprocess.run(["bash", str(path)], env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0, res.stderr
        got = json.loads((dump / f"task-{task}-rank-0.json").read_text())
        v, w = spec.sweep.tasks[task]
        assert got["argv"] == ["--v", v, f"--w={w}", "lit{eral}", v + w], task
        assert got["env"] == {"RUN_V": v, "RUN_BOTH": f"<{v}|{w}>"}, task
        if launcher != "srun":  # the workers' per-task logs carry the task (W11)
            assert (logs / f"hostile_sweep-5000_{task}-rank-0.out").exists()
    assert not Path("/tmp/pwned-ntui").exists()


def test_a_task_outside_the_manifest_or_without_one_stops(sweep_bin: Path, tmp_path: Path) -> None:
    data: dict[str, Any] = {"name": "s", "launcher": {"type": "srun", "python": sys.executable},
                            "script": str(sweep_bin / "dump.py"), "logs": {"dir": str(tmp_path)},
                            "args": ["{v}"], "sweep": {"list": [{"v": "1"}, {"v": "2"}]}}
    spec, _ = validate(LoadedPreset("s", None, data))
    assert spec is not None and spec.sweep is not None
    path = tmp_path / "job.sbatch"
    path.write_text(render(spec))
    base = {"PATH": f"{sweep_bin}:/usr/bin:/bin", "SLURM_JOB_ID": "1", "SLURM_JOB_NUM_NODES": "1",
            "SLURM_JOB_NODELIST": "nid001", "SLURM_CPUS_PER_TASK": "1", "NTUI_DUMP_DIR": str(tmp_path)}
    res = subprocess.run(["bash", str(path)], env=base | {"SLURM_ARRAY_TASK_ID": "0"}, capture_output=True,
                         text=True, timeout=WAIT_BOUND_S)
    assert res.returncode == 1 and "manifest" in res.stderr and "missing" in res.stderr
    Path(spec.sweep.manifest_path(str(tmp_path), "s")).write_bytes(spec.sweep.manifest_bytes())
    res = subprocess.run(["bash", str(path)], env=base | {"SLURM_ARRAY_TASK_ID": "2"}, capture_output=True,
                         text=True, timeout=WAIT_BOUND_S)
    assert res.returncode == 1 and "task 2 has no values" in res.stderr
    res = subprocess.run(["bash", str(path)], env=base, capture_output=True, text=True, timeout=WAIT_BOUND_S)
    assert res.returncode == 1 and "array task" in res.stderr


def test_same_sweep_same_script_and_manifest_name() -> None:
    a = validate(load_preset("local-sweep", ("logs.dir=/l",)))[0]
    b = validate(load_preset("local-sweep", ("logs.dir=/l", "sbatch.time=00:06:00")))[0]
    c = validate(load_preset("local-sweep", ("logs.dir=/l", 'sweep.grid.seed=["1", "2"]')))[0]
    assert a is not None and b is not None and c is not None
    assert manifest_of_script(render(a)) == manifest_of_script(render(b)) != manifest_of_script(render(c))
    assert render(a) == render(validate(load_preset("local-sweep", ("logs.dir=/l",)))[0])  # type: ignore[arg-type]


def test_repo_preset_renders_with_bash_syntax() -> None:
    spec = validate(load_preset(str(REPO / "presets" / "local-sweep.yaml")))[0]
    assert spec is not None
    subprocess.run(["bash", "-n"], input=render(spec), text=True, check=True, timeout=WAIT_BOUND_S)


def test_max_array_size_from_one_cached_scontrol_show_config() -> None:
    from ntui.core.compose.sitecheck import check_array_size
    from tests.support.fakes import FakeRunner, result

    runner = FakeRunner({("scontrol", "show", "config"): result(
        stdout="Configuration data as of 2026-12-01T10:00:00\nMaxArraySize            = 5\nMaxJobCount = 10000\n")})
    loaded = load_preset("local-sweep")
    spec = validate(loaded)[0]
    assert spec is not None and spec.sweep is not None and spec.sweep.size == 6
    (p,) = check_array_size(spec, runner, loaded=loaded)
    assert p.rule == "W7" and p.is_error and "MaxArraySize is 5" in p.message and str(p).endswith("(W7)")
    assert str(p).startswith(str(REPO / "presets" / "local-sweep.yaml") + ":")
    assert check_array_size(spec, runner, loaded=loaded) and runner.calls == 1  # cached per runner
    plain = validate(load_preset("local-srun"))[0]
    assert plain is not None and check_array_size(plain, FakeRunner({})) == []  # no call for a plain job
