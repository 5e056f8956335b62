"""R14: ntui reads launcher.extra-args as torchrun's and accelerate launch's own parsers do. The option tables
are compared with the installed parsers, and for a few thousand generated word lists every list the real parser
refuses (or reads as the program) is refused by ntui too; ntui refuses more only for an abbreviation, which it
maps to the option the parser picks."""

from __future__ import annotations

import argparse
import contextlib
import io
import random
from collections.abc import Callable, Sequence

import pytest

from ntui.core.compose.launchcli import LAUNCHER_CLIS, LauncherCli, read_extra_args
from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.rules import OWNED_LAUNCHER_ARGS
from ntui.core.compose.spec import validate


def _torchrun() -> argparse.ArgumentParser:
    run = pytest.importorskip("torch.distributed.run")
    return run.get_args_parser()  # type: ignore[no-any-return]


def _accelerate() -> argparse.ArgumentParser:
    launch = pytest.importorskip("accelerate.commands.launch")
    return launch.launch_command_parser()  # type: ignore[no-any-return]


PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {"torchrun": _torchrun, "accelerate": _accelerate}
NO_PYTHON = {"torchrun": "--no-python", "accelerate": "--no_python"}


def _options(parser: argparse.ArgumentParser) -> tuple[set[str], set[str], dict[str, str]]:
    flags: set[str] = set()
    valued: set[str] = set()
    short: dict[str, str] = {}
    for action in parser._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        for o in action.option_strings:
            if not o.startswith("--"):
                short[o] = longs[0].replace("_", "-") if longs else o
        (flags if action.nargs == 0 else valued).update(o.replace("_", "-") for o in longs)
    return flags, valued, short


@pytest.mark.parametrize("launcher", sorted(PARSERS))
def test_the_tables_are_the_installed_parsers(launcher: str) -> None:
    parser = PARSERS[launcher]()
    cli = LAUNCHER_CLIS[launcher]
    flags, valued, short = _options(parser)
    assert {o.replace("_", "-") for o in cli.flags} == flags
    assert {o.replace("_", "-") for o in cli.valued} == valued
    assert {k: v.replace("_", "-") for k, v in cli.short.items()} == short
    assert cli.abbrev == parser.allow_abbrev


def _real(parser: argparse.ArgumentParser, launcher: str, extra: Sequence[str]) -> argparse.Namespace | None:
    """The parser's reading of the launch line ntui writes (None: it stops, or takes a word as the program)."""
    argv = [*extra, NO_PYTHON[launcher], "ntui-worker"]
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            ns = parser.parse_args(argv)
    except SystemExit:
        return None
    return ns if ns.training_script == "ntui-worker" and ns.no_python else None


def _vocabulary(cli: LauncherCli, rng: random.Random) -> list[str]:
    words = ["3", "x", "-1", "-0.5", "-1e3", "-inf", "", "-x y", "--", "-", "--bogus", "-x", "--bogus=1"]
    for o in sorted(cli.flags | cli.valued):
        alt = "--" + o[2:].replace("-", "_") if "-" in o[2:] else "--" + o[2:].replace("_", "-")
        words += [o, alt, f"{o}=1", f"{o}="]
        if o[2:].count("-") + o[2:].count("_") > 1:  # a mixed spelling: neither parser takes it
            words.append(o.replace("_", "-").replace("-", "_", 3))
        words += [o[:n] for n in sorted({3, rng.randrange(3, len(o) + 1), len(o) - 1}) if 2 < n < len(o)]
        words += [f"{o[:n]}=1" for n in (rng.randrange(3, len(o)),) if 2 < n < len(o)]
    for s in cli.short:
        words += [s, f"{s}1"]
    return words


@pytest.mark.parametrize("launcher", sorted(PARSERS))
def test_ntui_refuses_every_word_list_the_launcher_refuses(launcher: str) -> None:
    parser = PARSERS[launcher]()
    cli = LAUNCHER_CLIS[launcher]
    rng = random.Random(20261130)
    vocabulary = _vocabulary(cli, rng)
    cases = [[w] for w in vocabulary] + [rng.choices(vocabulary, k=rng.randint(2, 4)) for _ in range(2500)]
    refused = abbreviations = 0
    for extra in cases:
        words = read_extra_args(launcher, extra)
        problems = [w for w in words if w.problem]  # R14
        owned = [w for w in words if w.option in OWNED_LAUNCHER_ARGS[launcher]]  # R11
        real = _real(parser, launcher, extra)
        if real is None:
            assert problems or owned, f"{cli.title} refuses {extra} but ntui accepts it"
            refused += 1
        elif problems:  # ntui refuses more only for an abbreviation, and maps it as the parser does
            assert all("abbreviates" in (w.problem or "") for w in problems), (extra, problems)
            for w in problems:
                assert w.option is not None
                dest = next(a.dest for a in parser._actions
                            if w.option.replace("_", "-") in {o.replace("_", "-") for o in a.option_strings})
                assert getattr(real, dest) != parser.get_default(dest) or extra[w.index].endswith("="), (extra, w)
            abbreviations += 1
    # the generator exercises every side (accelerate launch takes no abbreviation)
    assert refused > 1000 and (abbreviations > 50 if cli.abbrev else abbreviations == 0), (refused, abbreviations)


@pytest.mark.parametrize(("launcher", "extra", "index", "words"), [
    ("torchrun", ["--rdzv-co=timeout=900"], 0, "abbreviates --rdzv-conf"),
    ("torchrun", ["--nproc=2"], 0, "abbreviates --nproc-per-node"),
    ("torchrun", ["--master", "x"], 0, "ambiguous abbreviation (--master-addr, --master-port)"),
    ("torchrun", ["--max-restarts"], 0, "needs a value"),
    ("torchrun", ["--standalone=1"], 0, "takes no value"),
    ("torchrun", ["--max-restarts", "3", "train.py"], 2, "would take it as the program"),
    ("torchrun", ["--bogus"], 0, "not an option of torchrun (torch 2.13)"),
    ("accelerate", ["--multi"], 0, "it takes no abbreviations: --multi_gpu?"),
    ("torchrun", ["--nproc_per-node=2"], 0, "not an option of torchrun"),
    ("accelerate", ["--num_cpu_threads_per_process", "--debug"], 0, "needs a value"),
])
def test_each_kind_of_word_is_named(launcher: str, extra: list[str], index: int, words: str) -> None:
    problems = [w for w in read_extra_args(launcher, extra) if w.problem]
    assert [w.index for w in problems] == [index] and words in (problems[0].problem or ""), problems


@pytest.mark.parametrize("extra", [["--max-restarts=3"], ["--max_restarts", "3"], ["-t", "3"], ["--tee=3"],
                                   ["--local-ranks-filter", "0"], ["--log-dir", "/tmp/x", "--role", "trainer"]])
def test_plain_options_pass(extra: list[str]) -> None:
    assert [w.problem for w in read_extra_args("torchrun", extra)] == [None] * sum(1 for w in extra
                                                                                  if w.startswith("-"))


def test_an_abbreviated_owned_option_is_refused_in_a_preset_with_its_field() -> None:
    """Before: `--rdzv-co=...` slipped past R11 and R13 (torchrun reads it as --rdzv-conf, and the user's value,
    given last, replaced ntui's is_host: every node or none hosted the store)."""
    extra = 'launcher.extra-args=["--max-restarts=1", "--rdzv-co=is_host=1"]'
    _, problems = validate(load_preset("local-torchrun", [extra]))
    r14 = [str(p) for p in problems if p.rule == "R14"]
    assert len(r14) == 1 and r14[0].startswith("--set launcher.extra-args.1: --rdzv-co abbreviates --rdzv-conf"), r14


@pytest.mark.parametrize(("preset", "option"), [("local-torchrun", "-m"), ("local-torchrun", "--run_path"),
                                                ("local-accelerate", "--module"), ("local-torchrun", "--help")])
def test_options_that_defeat_ntuis_worker_are_refused_with_the_reason(preset: str, option: str) -> None:
    _, problems = validate(load_preset(preset, [f'launcher.extra-args=["{option}"]']))
    r11 = [str(p) for p in problems if p.rule == "R11"]
    assert len(r11) == 1 and ("worker" in r11[0] or "help" in r11[0]), r11


def test_the_srun_launcher_refuses_extra_args_instead_of_dropping_them() -> None:
    """Before: the srun launcher's script had no trace of launcher.extra-args, and check passed."""
    loaded = load_preset("local-srun", ['launcher.extra-args=["--cpu-bind=cores"]'])
    spec, problems = validate(loaded)
    r14 = [str(p) for p in problems if p.rule == "R14"]
    assert spec is None and len(r14) == 1 and r14[0].startswith("--set launcher.extra-args: the srun launcher"), r14
    assert "SLURM_CPU_BIND" in r14[0]
    spec, problems = validate(load_preset("local-srun", ["env.SLURM_CPU_BIND=cores"]))  # the way it names
    assert spec is not None and not [p for p in problems if p.rule == "R14"]
    assert "export SLURM_CPU_BIND=cores" in render(spec)


def test_a_rendezvous_option_without_its_value_is_reported_once() -> None:
    """R13 owns --rdzv-conf in full spelling (its value is merged); R14 used to repeat R13's 'needs a value'."""
    _, problems = validate(load_preset("local-torchrun", ['launcher.extra-args=["--max-restarts=1", "--rdzv_conf"]']))
    said = [(p.rule, p.field) for p in problems if p.field.startswith("launcher.extra-args")]
    assert said == [("R13", "launcher.extra-args.1")], [str(p) for p in problems]


@pytest.mark.parametrize("launcher", sorted(OWNED_LAUNCHER_ARGS.keys() & LAUNCHER_CLIS.keys()))
def test_every_owned_option_is_one_of_the_launchers(launcher: str) -> None:
    """R11 compares documented spellings: an owned entry the table does not know would never match."""
    cli = LAUNCHER_CLIS[launcher]
    assert [o for o in OWNED_LAUNCHER_ARGS[launcher] if cli.full(o) != o] == []
