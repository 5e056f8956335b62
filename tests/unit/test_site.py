"""The site layer (ntui.core.compose.site): a site directory with defaults, a locked key, a site rule and a site
preset, through the CLI (a real ``python -m ntui``) and the loader; a damaged site.yaml gets a preset's errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ntui.core.compose.presets import list_presets, load_preset
from ntui.core.compose.render import render
from ntui.core.compose.site import SITE_ENV, site_dir
from ntui.core.compose.spec import validate
from ntui.core.problems import PresetError
from tests.conftest import REPO

SITE_YAML = """\
name: Example Centre
defaults:
  sbatch:
    account: m1234
    constraint: cpu
  env:
    HF_HOME: /site/cache
locked:
  - sbatch.constraint
rules:
  - id: EX-DEBUG
    key: sbatch.nodes
    max: 1
    when: {sbatch.qos: debug}
    message: the debug QOS runs one node
  - id: EX-NO-ACCEL
    key: launcher.type
    forbid: [accelerate]
    severity: warning
    message: this centre supports torchrun and srun
"""
SITE_PRESET = f"""\
description: the centre's torchrun job
extends: local-torchrun
script: {REPO / "examples" / "ddp_check.py"}
sbatch: {{time: "00:20:00"}}
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "site" / "ntui"
    (d / "presets").mkdir(parents=True)
    (d / "site.yaml").write_text(SITE_YAML)
    (d / "presets" / "centre-train.yaml").write_text(SITE_PRESET)
    monkeypatch.setenv(SITE_ENV, str(d))
    return d


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ntui", *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ), cwd=REPO)


def test_the_site_directory_comes_from_the_environment(tmp_path: Path) -> None:
    assert site_dir({SITE_ENV: "/opt/site"}) == Path("/opt/site")
    (tmp_path / "b" / "ntui").mkdir(parents=True)
    assert site_dir({"XDG_CONFIG_DIRS": f"{tmp_path / 'a'}:{tmp_path / 'b'}:relative"}) == tmp_path / "b" / "ntui"
    assert site_dir({"XDG_CONFIG_DIRS": str(tmp_path / "a")}) is None


def test_site_defaults_go_under_every_preset_and_say_where_they_come_from(site: Path) -> None:
    loaded = load_preset("local-srun")
    spec, problems = validate(loaded)
    assert spec is not None and not [p for p in problems if p.is_error]
    script = render(spec)
    assert "#SBATCH --account=m1234" in script and "export HF_HOME=/site/cache" in script
    assert loaded.source_of(("sbatch", "account")).file == str(site / "site.yaml")
    # the preset's own value wins over a site default that is not locked
    mine = load_preset("local-srun", ["sbatch.account=mine"])
    spec, _ = validate(mine)
    assert spec is not None and "#SBATCH --account=mine" in render(spec)


def test_a_locked_key_and_a_site_rule_are_refused_with_their_place(site: Path) -> None:
    _, problems = validate(load_preset("local-srun", ["sbatch.constraint=gpu"]))
    text = [str(p) for p in problems]
    assert f"--set sbatch.constraint: locked by the site at {site / 'site.yaml'}:9: must be 'cpu' (site)" in text
    _, problems = validate(load_preset("local-srun", ["sbatch.qos=debug"]))  # local-srun: 2 nodes
    hits = [p for p in problems if p.rule == "EX-DEBUG"]
    assert hits and hits[0].is_error and str(hits[0]).endswith("the debug QOS runs one node (EX-DEBUG)")
    spec, problems = validate(load_preset("local-srun", ["sbatch.qos=debug", "sbatch.nodes=1"]))
    assert spec is not None and not any(p.rule == "EX-DEBUG" for p in problems)
    spec, problems = validate(load_preset("local-accelerate"))
    assert spec is not None and [p.rule for p in problems if p.rule.startswith("EX")] == ["EX-NO-ACCEL"]


def test_site_presets_are_listed_with_their_origin_and_extend_shipped_ones(site: Path) -> None:
    by_name = {p.name: p for p in list_presets()}
    assert by_name["centre-train"].origin == "site" and by_name["local-srun"].origin == "shipped"
    spec, problems = validate(load_preset("centre-train"))
    assert spec is not None, [str(p) for p in problems]
    assert spec.launcher == "torchrun" and "#SBATCH --account=m1234" in render(spec)


def test_the_cli_shows_the_site(site: Path) -> None:
    listing = _cli("presets")
    assert listing.returncode == 0, listing.stderr
    line = next(ln for ln in listing.stdout.splitlines() if ln.startswith("centre-train"))
    assert " site " in line
    refused = _cli("check", "local-srun", "--set", "sbatch.constraint=gpu")
    assert refused.returncode == 2 and "locked by the site" in refused.stdout + refused.stderr
    rendered = _cli("render", "centre-train")
    assert rendered.returncode == 0 and "#SBATCH --account=m1234" in rendered.stdout


@pytest.mark.parametrize(("text", "where"), [
    ("defaults: [1, 2]\n", "site.yaml:1: defaults: expected a mapping"),
    ("colour: red\n", "site.yaml:1: colour: unknown key"),
    ("locked: sbatch.qos\n", "site.yaml:1: locked: expected a list"),
    ("rules:\n  - id: X\n    key: sbatch.nodes\n    max: many\n    message: m\n",
     "site.yaml:4: rules.0.max: expected a number"),
    ("rules:\n  - id: X\n    key: sbatch.nodes\n    message: m\n", "site.yaml:2: rules.0: no check"),
    ("defaults: {sbatch: {nodes: [\n", "site.yaml:"),
])
def test_a_damaged_site_file_is_named_like_a_damaged_preset(site: Path, text: str, where: str) -> None:
    (site / "site.yaml").write_text(text)
    with pytest.raises(PresetError) as err:
        load_preset("local-srun")
    assert any(where in str(p) for p in err.value.problems), [str(p) for p in err.value.problems]
    bad = _cli("check", "local-srun")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "site.yaml" in bad.stdout + bad.stderr


def test_a_site_default_with_a_bad_value_is_named_at_its_line(site: Path) -> None:
    (site / "site.yaml").write_text("defaults:\n  monitor:\n    interval: seven\n")
    _, problems = validate(load_preset("local-torchrun"))
    assert f"{site / 'site.yaml'}:3: monitor.interval: expected whole seconds" in "\n".join(map(str, problems))


def test_the_nersc_site_layer_loads_and_the_perlmutter_presets_pass_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SITE_ENV, str(REPO / "sites" / "nersc"))
    for name in ("perlmutter-srun", "perlmutter-torchrun", "perlmutter-accelerate"):
        loaded = load_preset(name)
        assert loaded.site is not None and loaded.site.name == "NERSC Perlmutter"
        spec, problems = validate(loaded)
        assert spec is not None and not [p for p in problems if p.rule.startswith("NERSC")], [str(p) for p in problems]
    _, problems = validate(load_preset("perlmutter-srun", ["sbatch.gpus-per-node=8"]))
    assert any(p.rule == "NERSC-GPUS" and p.is_error for p in problems)
    spec, _ = validate(load_preset("local-srun", ["script=/bin/true"]))
    assert spec is not None and "#SBATCH --constraint=gpu" in render(spec) and "shifter" in render(spec)


# ------------------------------------------------------------------ Perlmutter's facts are the NERSC site's (issue 44)

NERSC = REPO / "sites" / "nersc"
#: The findings that were ntui's own rules S1, G6 and T6, now the NERSC site's: (preset, --set overrides), the site's
#: rule id, its severity, and the words the built-in rule said (kept word for word).
MOVED: dict[str, tuple[str, tuple[str, ...], str, bool, str]] = {
    "S1": ("perlmutter-srun", ("sbatch.qos=false",), "NERSC-QOS", False,
           "sbatch.qos: warning: Perlmutter's default QOS is debug, which forbids production runs; set qos"),
    "G6 (GPUs)": ("local-srun", ("sbatch.gpus-per-node=5", "sbatch.ntasks-per-node=5"), "NERSC-GPUS", True,
                  "sbatch.gpus-per-node: 5 GPUs per node: Perlmutter nodes have 4; Slurm will refuse"),
    "G6 (gres)": ("local-srun", ("sbatch.gres=gpu:a100:8", "sbatch.ntasks-per-node=8"), "NERSC-GPUS", True,
                  "sbatch.gres: 8 GPUs per node: Perlmutter nodes have 4; Slurm will refuse"),
    "G6 (CPUs)": ("perlmutter-srun", ("sbatch.cpus-per-task=64",), "NERSC-CPUS", False,
                  "sbatch.cpus-per-task: warning: 4 tasks x 64 CPUs exceeds a Perlmutter GPU node's 128"),
    "T6": ("local-longrun", ("run.continue=chain", "sbatch.qos=debug"), "NERSC-CHAIN", True,
           "run.continue: qos debug forbids chaining (a batch script submitting another, NERSC's policy); use "
           "run.continue: requeue, or a QOS that allows it (e.g. regular)"),
    "T6 (default QOS)": ("local-longrun", ("run.continue=chain", "sbatch.qos=false", "sbatch.constraint=cpu"),
                         "NERSC-CHAIN", True,
                         "run.continue: the default QOS (debug) forbids chaining (a batch script submitting another, "
                         "NERSC's policy); use run.continue: requeue, or a QOS that allows it (e.g. regular)"),
}


@pytest.mark.parametrize("moved", sorted(MOVED))
def test_perlmutters_limits_are_said_with_the_nersc_site_only(moved: str, monkeypatch: pytest.MonkeyPatch) -> None:
    preset, overrides, rule_id, error, words = MOVED[moved]
    monkeypatch.delenv(SITE_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(REPO / "nowhere"))
    _, problems = validate(load_preset(preset, overrides))
    said = [str(p) for p in problems if "Perlmutter" in p.message or "NERSC" in p.message or p.rule == rule_id]
    assert not said, said  # no site: no word of Perlmutter
    monkeypatch.setenv(SITE_ENV, str(NERSC))
    spec, problems = validate(load_preset(preset, overrides))
    hits = [p for p in problems if p.rule == rule_id]
    assert [f"--set {p.field.split('.')[0]}" in str(p) or ":" in str(p) for p in hits] == [True]
    assert str(hits[0]).endswith(f"{words} ({rule_id})"), str(hits[0])
    assert hits[0].is_error is error and (spec is None) is error


def test_the_site_rule_language_judges_what_ntui_works_out(site: Path) -> None:
    """job.* keys (GPUs per node however asked), {value}/{job.NAME} in messages, when with a list and with null."""
    (site / "site.yaml").write_text(
        "rules:\n"
        "  - id: EX-GPUS\n    key: job.gpus-per-node\n    max: 2\n"
        "    message: '{value} GPUs a node ({job.tasks-per-node} tasks, {{braces}}): ours have 2'\n"
        "  - id: EX-QOS\n    key: sbatch.time\n    required: true\n"
        "    when: {sbatch.qos: [debug, short], sbatch.account: null}\n    severity: warning\n"
        "    message: a short QOS needs a time\n")
    for style in ("gpus-per-node=4", "gres=gpu:4", "gpus-per-task=2"):
        _, problems = validate(load_preset("local-srun", [f"sbatch.{style}", "sbatch.ntasks-per-node=2",
                                                          "sbatch.ntasks=4"] if "task" in style else
                                                         [f"sbatch.{style}", "sbatch.ntasks-per-node=4"]))
        hits = [str(p) for p in problems if p.rule == "EX-GPUS"]
        option = style.split("=")[0]
        tasks = 2 if "task" in style else 4
        assert hits == [f"--set sbatch.{option}: 4 GPUs a node ({tasks} tasks, {{braces}}): ours have 2 (EX-GPUS)"]
    spec, problems = validate(load_preset("local-srun"))  # no GPUs asked for: 0, within the limit
    assert spec is not None and not [p for p in problems if p.rule.startswith("EX")]
    for qos, account, fires in (("short", None, True), ("debug", None, True), ("regular", None, False),
                                ("short", "m1", False)):
        overrides = ["sbatch.time=false", f"sbatch.qos={qos}"] + ([f"sbatch.account={account}"] if account else [])
        _, problems = validate(load_preset("local-srun", overrides))
        assert any(p.rule == "EX-QOS" for p in problems) is fires, (qos, account)


@pytest.mark.parametrize(("text", "where"), [
    ("rules:\n  - id: X\n    key: job.gpus\n    max: 1\n    message: m\n",
     "site.yaml:3: rules.0.key: job.gpus is not a value ntui works out"),
    ("rules:\n  - id: X\n    key: job.nodes\n    required: true\n    message: m\n",
     "site.yaml:4: rules.0.required: job.nodes is judged only where ntui knows it"),
    ("rules:\n  - id: X\n    key: sbatch.nodes\n    max: 1\n    message: '{nodes} nodes'\n",
     "site.yaml:5: rules.0.message: {nodes} is not a placeholder"),
    ("rules:\n  - id: X\n    key: sbatch.nodes\n    max: 1\n    message: 'a { here'\n",
     "site.yaml:5: rules.0.message: a lone { or }"),
    ("rules:\n  - id: X\n    key: sbatch.nodes\n    max: 1\n    when: {sbatch.qos: {a: 1}}\n    message: m\n",
     "site.yaml:5: rules.0.when.sbatch.qos: expected a value, a list of values"),
])
def test_a_site_rule_the_language_cannot_say_is_named_at_its_line(site: Path, text: str, where: str) -> None:
    (site / "site.yaml").write_text(text)
    with pytest.raises(PresetError) as err:
        load_preset("local-srun")
    assert any(where in str(p) for p in err.value.problems), [str(p) for p in err.value.problems]
