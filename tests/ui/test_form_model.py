"""The Textual-free form model: field text, override encoding, problem placement, presets from the form."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from ntui.core.compose.presets import load_preset, parse_override
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.problems import Problem, Severity, Source
from ntui.ui.widgets.form_model import (
    STANDARD_FIELDS,
    FieldSpec,
    field_state,
    field_text,
    fields_for,
    parse_env_lines,
    preset_yaml,
    problem_field_key,
)
from tests.conftest import REPO

TEXT = FieldSpec("sbatch.job-name", "Job name", "text", "Slurm")
WORDS = FieldSpec("args", "Arguments", "words", "Program")
ENV = FieldSpec("env", "Env", "env", "Environment")


def spec_of(key: str) -> FieldSpec:
    return next(f for f in STANDARD_FIELDS if f.key == key)


def test_form_model_imports_no_textual() -> None:
    code = "import ntui.ui.widgets.form_model, ntui.core.compose.presetfiles, sys; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


def test_fields_include_every_sbatch_key_of_the_preset() -> None:
    loaded = load_preset("demo-torchrun")
    keys = [f.key for f in fields_for(loaded.data)]
    for key in loaded.data["sbatch"]:
        assert f"sbatch.{key}" in keys
    assert keys.count("sbatch.image") == 1


def test_field_text_keeps_yaml_text() -> None:
    loaded = load_preset("demo-torchrun")
    assert field_text(spec_of("sbatch.time"), loaded) == "00:30:00"
    assert field_text(spec_of("sbatch.nodes"), loaded) == "2"
    assert field_text(spec_of("args"), loaded) == "--epochs 3"
    assert field_text(spec_of("env"), loaded) == "OMP_NUM_THREADS=8"
    assert field_text(spec_of("launcher.kill-on-bad-exit"), loaded) == "true"  # the default, absent key
    assert field_text(spec_of("sbatch.partition"), loaded) == ""


def test_unchanged_field_gives_no_override() -> None:
    assert field_state(spec_of("sbatch.nodes"), "2", "2").override is None
    assert field_state(WORDS, "--epochs 3", "--epochs  3").override is None  # same words
    assert field_state(spec_of("sbatch.nodes"), "2", "1").override == "sbatch.nodes=1"


def test_cleared_optional_sbatch_option_is_left_out() -> None:
    assert field_state(spec_of("sbatch.qos"), "regular", "").override == "sbatch.qos=false"
    loaded = load_preset("demo-torchrun", ["sbatch.qos=false"])
    spec, _ = validate(loaded)
    assert spec is not None and "--qos" not in render(spec)


def test_text_that_yaml_would_retype_is_quoted() -> None:
    for text in ("yes", "123", "null", "~", "true", '"quoted"', "[a, b]", "{x: 1}", "a: b", "#1"):
        override = field_state(TEXT, "", text).override
        assert override is not None
        _, value, raw = parse_override(override)
        assert value == text, (text, override)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\n\r"), min_size=1))
def test_text_override_round_trips(text: str) -> None:
    override = field_state(TEXT, "", text).override
    assert override is not None
    _, value, raw = parse_override(override)
    assert value == text or raw.get(()) == text


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))))
def test_words_override_round_trips(words: list[str]) -> None:
    import shlex

    override = field_state(WORDS, "", shlex.join(words)).override
    if not words:
        assert override is None
        return
    assert override is not None
    _, value, _ = parse_override(override)
    assert value == words


def test_env_lines() -> None:
    env, error = parse_env_lines("A=1\n\nB = x=y\n")
    assert error is None and env == {"A": "1", "B": " x=y"}
    _, error = parse_env_lines("JUSTANAME")
    assert error is not None and "line 1" in error
    assert field_state(ENV, "A=1", "A=1\nNOPE").error is not None


def test_problem_field_key() -> None:
    keys = ["env", "sbatch.nodes", "args", "sbatch.time"]

    def p(field: str) -> Problem:
        return Problem(Source("x.yaml", 3), field, "m", Severity.ERROR)

    assert problem_field_key(p("sbatch.nodes"), keys) == "sbatch.nodes"
    assert problem_field_key(p("env.1BAD"), keys) == "env"
    assert problem_field_key(p("args.2"), keys) == "args"
    assert problem_field_key(p("sbatch.nodesx"), keys) is None
    assert problem_field_key(p("launcher.type"), keys) is None


def test_preset_from_form_renders_like_the_overrides() -> None:
    overrides = ["sbatch.nodes=1", "sbatch.time=00:20:00", 'sbatch.job-name="yes"', 'args=["--lr", "0.10"]']
    loaded = load_preset("demo-local", overrides)
    spec, problems = validate(loaded)
    assert spec is not None, problems
    draft = preset_yaml(loaded, "copy", spec.script, "demo-local")
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "copy.yaml"
        path.write_text(draft.text)
        spec2, problems2 = validate(load_preset(str(path)))
        assert spec2 is not None, problems2
        expected, _ = validate(load_preset("demo-local", [*overrides, "name=copy"]))
        assert expected is not None
        assert render(spec2) == render(expected)


def test_monitor_fields_follow_the_preset_and_switch_the_sampler() -> None:
    gpu, interval = spec_of("monitor.gpu"), spec_of("monitor.interval")
    assert (gpu.kind, gpu.section, interval.kind, interval.default) == ("tristate", "Monitoring", "int", "10")
    keys = [f.key for f in fields_for(load_preset("demo-torchrun").data)]
    assert keys[-7:-5] == ["monitor.gpu", "monitor.interval"]
    assert keys[-5:] == ["run.continue", "run.checkpoint-signal", "run.warning", "run.grace", "run.max-restarts"]
    loaded = load_preset("demo-torchrun", ["monitor.interval=30"])
    assert (field_text(gpu, loaded), field_text(interval, loaded)) == ("", "30")  # "" = auto
    off = field_state(gpu, "", "false").override
    assert off == "monitor.gpu=false"
    every = field_state(interval, "30", "5").override
    assert every == "monitor.interval=5"
    spec, _ = validate(load_preset("demo-torchrun", [every]))
    assert spec is not None and "nvidia-smi -l 5 per node" in render(spec)
    spec, _ = validate(load_preset("demo-torchrun", [every, off]))
    assert spec is not None and "nvidia-smi" not in render(spec)
