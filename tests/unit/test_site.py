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
