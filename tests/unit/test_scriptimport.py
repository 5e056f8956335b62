"""``ntui check SCRIPT`` and ``ntui import``: hand-written sbatch scripts read as shell, checked, imported into
presets that render to the same job (tests/data/scripts/: the corpus and what each must give)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.scriptimport import import_script
from ntui.core.compose.scriptread import Launch, ScriptError, ScriptFacts, read_script
from ntui.core.compose.shellwords import ShellSyntax, commands, split_words
from ntui.core.compose.spec import JobSpec, validate
from ntui.core.slurm.durations import parse_time_limit
from tests.support.waits import WAIT_BOUND_S

DATA = Path(__file__).resolve().parents[1] / "data" / "scripts"
EXPECTED: dict[str, dict[str, Any]] = json.loads((DATA / "expected.json").read_text())
IMPORTS = sorted(name for name, want in EXPECTED.items() if "import" in want)
ERRORS = sorted(name for name, want in EXPECTED.items() if "error" in want)


def _facts(name: str) -> ScriptFacts:
    return read_script((DATA / name).read_text(), str(DATA / name))


def _spec(name: str) -> JobSpec:
    imported = import_script(_facts(name))
    spec, problems = validate(imported.loaded(str(DATA / name) + " (imported)"))
    assert spec is not None, [str(p) for p in problems]
    return spec


def _launch(facts: ScriptFacts) -> Launch:
    assert len(facts.launches) == 1, [x.line for _, x in facts.launches]
    return facts.launches[0][1]


# ---------------------------------------------------------------- the corpus


def test_every_script_of_the_corpus_has_its_expectation() -> None:
    assert sorted(p.name for p in DATA.iterdir() if p.suffix in (".sh", ".txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", IMPORTS)
def test_a_script_is_checked_with_the_findings_it_should_have(name: str) -> None:
    got = [[f.line, f.rule] for f in import_script(_facts(name)).findings]
    assert sorted(got) == sorted(EXPECTED[name]["findings"])


@pytest.mark.parametrize("name", IMPORTS)
def test_a_script_imports_into_a_preset_of_the_same_job(name: str) -> None:
    want = EXPECTED[name]["import"]
    imported = import_script(_facts(name))
    spec = _spec(name)
    assert (spec.launcher, spec.nodes, spec.ntasks_per_node, spec.nproc_per_node) == (
        want["launcher"], want["nodes"], want["ntasks_per_node"], want["nproc"])
    assert spec.container == (want["container"] or "none")
    conf = spec.container_conf
    assert (conf.image, list(conf.mounts), list(conf.options)) == (
        want.get("image"), want.get("mounts", []), want.get("options", []))
    assert spec.script == str((DATA / "../../../examples/ddp_check.py").resolve())
    assert list(spec.args) == want["args"]
    assert {k: v for k, v in spec.env} == want["env"]
    assert list(spec.extra_launcher_args) == want["extra"]
    for fix in want.get("fixes", []):
        assert any(fix in f for f in imported.fixes), (fix, imported.fixes)
    for skipped in want.get("not_imported", []):
        assert any(why.startswith(skipped) for _, why in imported.not_imported), (skipped, imported.not_imported)
    text = imported.yaml_text
    assert text.startswith(f"# Imported by ntui from {DATA / name}.")
    assert all(f"#   - {f}" in text for f in imported.fixes)


def _directives(facts: ScriptFacts) -> dict[str, str | None]:
    return {d.option: d.value for d in facts.directives if d.option not in ("output", "error", "open-mode",
                                                                           "signal", "job-name")}


@pytest.mark.parametrize("name", IMPORTS)
def test_the_rendered_preset_reads_back_as_the_same_directives_and_launch_shape(name: str) -> None:
    """The script ntui renders from the import, read by the same reader: the original's directives (with the
    fixes named in the import), the same launcher, program, arguments and processes per node."""
    original = _facts(name)
    imported = import_script(original)
    rendered = read_script(render(_spec(name)), "rendered.sh")
    before, after = _directives(original), _directives(rendered)
    for option, value in before.items():
        fixed = any(f.startswith(f"sbatch.{option}:") for f in imported.fixes)
        want = str(imported.preset["sbatch"][option]) if fixed else value
        if option == "time":  # ntui writes the same limit as HH:MM:SS
            assert parse_time_limit(after[option] or "") == parse_time_limit(want or ""), (after[option], want)
        else:
            assert after.get(option) == want, option
    a, b = _launch(original), _launch(rendered)
    assert b.launcher == a.launcher and b.under_srun
    assert b.program is not None and b.program.text == imported.preset["script"]
    assert [w.text for w in b.args] == imported.preset["args"]
    if a.launcher == "torchrun":
        assert b.opt("--nproc-per-node") == (str(imported.preset["launcher"]["nproc-per-node"]), b.opt(
            "--nproc-per-node")[1])  # type: ignore[index]


# ---------------------------------------------------------------- the seed page's three Perlmutter forms


@pytest.mark.parametrize("launcher", ["srun", "torchrun", "accelerate"])
def test_the_perlmutter_forms_import_into_the_shipped_presets_job(launcher: str) -> None:
    """Differences from the shipped preset, each explained: the script names an account (the shipped preset leaves
    it to the user), a fixed MASTER_PORT (now from the job id, H6), and the srun script's own arguments."""
    spec = _spec(f"perlmutter-{launcher}.sh")
    shipped, problems = validate(load_preset(f"perlmutter-{launcher}"))
    assert shipped is not None, problems
    for attr in ("launcher", "nodes", "ntasks_per_node", "gpus_per_node", "nproc_per_node", "cpus_per_task",
                 "container", "script", "env", "master_port", "world_size"):
        assert getattr(spec, attr) == getattr(shipped, attr), attr
    mine = {d.option: d.value for d in spec.directives if d.option not in ("job-name", "account")}
    theirs = {d.option: d.value for d in shipped.directives if d.option != "job-name"}
    assert mine == theirs
    assert {d.option: d.value for d in spec.directives}["account"] == "m4242_g"
    assert spec.args == (("--epochs", "3") if launcher == "srun" else ())


# ---------------------------------------------------------------- ntui's own scripts, read back


@pytest.mark.parametrize("preset", ["local-srun", "local-torchrun", "local-accelerate", "perlmutter-srun",
                                    "perlmutter-torchrun", "perlmutter-accelerate"])
def test_ntuis_own_scripts_import_into_their_own_preset(preset: str) -> None:
    shipped, _ = validate(load_preset(preset, ["args=[--lr, 3e-4, \"two words\"]"]))
    assert shipped is not None
    imported = import_script(read_script(render(shipped), f"{preset}.sh"))
    assert imported.findings == []
    spec, problems = validate(imported.loaded(f"{preset}.yaml"))
    assert spec is not None, [str(p) for p in problems]
    for attr in ("launcher", "nodes", "ntasks_per_node", "nproc_per_node", "script", "args", "env",
                 "extra_launcher_args", "container"):
        assert getattr(spec, attr) == getattr(shipped, attr), attr


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("name", ERRORS)
def test_bad_input_is_said_with_its_line(name: str) -> None:
    line, words = EXPECTED[name]["error"]
    with pytest.raises(ScriptError) as caught:
        import_script(_facts(name))
    assert caught.value.problem.source.line == line and words in caught.value.problem.message


@pytest.mark.parametrize("command", ["check", "import"])
@pytest.mark.parametrize("name", ERRORS)
def test_the_cli_answers_bad_input_without_a_traceback(command: str, name: str) -> None:
    line, words = EXPECTED[name]["error"]
    res = subprocess.run([sys.executable, "-m", "ntui", command, str(DATA / name)], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    where = f"{DATA / name}:{line}: " if line else f"{DATA / name}: "
    assert res.stderr.startswith(where) and words in res.stderr, res.stderr


def test_check_prints_each_finding_at_its_line_with_its_rule(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "ntui", "check", str(DATA / "torchrun-classic-bugs.sh")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    lines = res.stderr.splitlines()
    assert lines[0].startswith(f"{DATA}/torchrun-classic-bugs.sh:11: sbatch.time: #SBATCH --time comes after")
    assert lines[0].endswith("(H2)")
    assert any(":19: launcher.extra-args: --rdzv-id is the literal text '$SLURM_JOB_ID'" in x for x in lines)
    assert lines[-1] == (f"5 error(s), 2 warning(s); `ntui import {DATA}/torchrun-classic-bugs.sh` writes a preset "
                         "with the fixes")


def test_import_writes_a_new_preset_file_and_never_replaces_one(tmp_path: Path) -> None:
    out = tmp_path / "mine.yaml"
    argv = [sys.executable, "-m", "ntui", "import", str(DATA / "torchrun-classic-bugs.sh"), "-o", str(out)]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert "fixed: rdzv-id: was the literal '$SLURM_JOB_ID', now the job id (R6)" in first.stderr
    spec, problems = validate(load_preset(str(out)))
    assert spec is not None and spec.launcher == "torchrun", problems
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "exists" in again.stderr
    check = subprocess.run([sys.executable, "-m", "ntui", "check", str(out)], capture_output=True, text=True,
                           timeout=60)
    assert check.returncode == 0, check.stderr  # the preset itself: read as a preset, not as a script


def test_import_to_dash_writes_the_preset_to_stdout_not_a_file_named_dash(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "ntui", "import", str(DATA / "torchrun-classic-bugs.sh"), "-o", "-"]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert res.returncode == 0, res.stderr
    assert "launcher:" in res.stdout and not (tmp_path / "-").exists()


# ---------------------------------------------------------------- the shell reader


def test_words_keep_their_quoting() -> None:
    words = [w for w in split_words("""a '$X' "$Y z" \\$W $'q\\'s' x\\ y "a\\$b" """) if not isinstance(w, str)]
    assert [w.text for w in words] == ["a", "$X", "$Y z", "$W", "q\\'s", "x y", "a$b"]
    assert [w.expanded_vars for w in words] == [(), (), ("Y",), (), (), (), ()]
    assert words[1].literal_vars == ("X",) and words[3].literal_vars == ()  # \$W: no variable at all


def test_commands_have_their_lines_depth_and_heredocs() -> None:
    text = "#!/bin/bash\nx=( a b )\nif true; then\n  srun a \\\n    b\nfi\ncat <<EOF >f\n$y\nEOF\necho done\n"
    got = [(c.line, c.end_line, c.depth, c.argv, c.construct) for c in commands(text)]
    assert got == [(2, 2, 0, ["x=( a b )"], None), (3, 3, 0, ["if", "true"], (3, 6)),
                   (4, 5, 1, ["srun", "a", "b"], (3, 6)), (6, 6, 0, ["fi"], (3, 6)),
                   (7, 7, 0, ["cat", "<<EOF", ">f"], None), (10, 10, 0, ["echo", "done"], None)]
    assert commands(text)[4].heredoc == ["$y"]


def test_an_unterminated_quote_names_its_line_and_column() -> None:
    with pytest.raises(ShellSyntax) as caught:
        list(split_words("ok\nexport A='open\nB=1\n"))
    assert (caught.value.line, caught.value.column) == (2, 10)


@pytest.mark.parametrize(("text", "first"), [("--partition=<PARTITION>", "--partition="), ("echo >", "echo"),
                                             ("cmd <", "cmd"), ("a $", "a")])
def test_a_redirect_or_a_dollar_at_the_end_of_the_text_is_read_not_a_crash(text: str, first: str) -> None:
    # site docs' placeholders end a directive in ">" (the reader ran past the text: IndexError)
    words = [w for w in split_words(text) if not isinstance(w, str)]
    assert words[0].raw == first and words[-1].raw.endswith(text[-1]), [w.raw for w in words]  # to its last char


def test_a_site_docs_placeholder_directive_gets_an_answer_without_a_traceback(tmp_path: Path) -> None:
    script = tmp_path / "placeholder.sh"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --partition=<PARTITION>\n"
                      "#SBATCH --account=<ACCOUNT>\nsrun python train.py\n")
    res = subprocess.run([sys.executable, "-m", "ntui", "import", str(script)], capture_output=True, text=True,
                         timeout=120)
    assert "Traceback" not in res.stderr and res.returncode in (0, 2), res.stderr


# ---------------------------------------------------------------- whatever a script holds: an answer, never a crash


_PIECES = ["#!/bin/bash\n", "#SBATCH -N 2\n", "#SBATCH --ntasks-per-node=4\n", "srun ", "torchrun ", "bash -c '",
           "'", '"', "$SLURM_PROCID ", "--nnodes 2 ", "python ", "t.py ", "accelerate launch ", "shifter ",
           "podman-hpc run img ", "apptainer exec x.sif ", "\\\n", "\n", "; ", "&& ", "| ", "if true; then ", "fi\n",
           "<<EOF\nbody\nEOF\n", "x=( a b )\n", "$(hostname) ", "`date` ", "${A:-b} ", "exec \"$0\" \"$@\" ",
           "-m torch.distributed.run ", "--rdzv_id '$SLURM_JOB_ID' ", "export A=1\n", "f() { echo; }\n", "(", ")",
           "srun python t.py\n", "srun torchrun --nproc_per_node=2 t.py --x 1\n", "export MASTER_PORT=29500\n"]


def test_any_text_gets_an_import_or_a_script_error() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ntui.core.compose.rules import BY_ID

    imported_some: list[int] = []

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.booleans(), st.lists(st.sampled_from(_PIECES), max_size=30))
    def run(header: bool, pieces: list[str]) -> None:
        try:
            imported = import_script(read_script(("#!/bin/bash\n#SBATCH -N 2\n" if header else "") + "".join(pieces),
                                                 "fuzz.sh"))
        except ScriptError:
            return
        imported_some.append(1)
        assert all(f.rule in BY_ID for f in imported.findings)
        imported.loaded("fuzz.yaml")

    run()
    assert len(imported_some) > 20  # the pieces make imports too, not only errors


def test_a_launch_inside_a_construct_is_not_imported_twice() -> None:
    text = "#!/bin/bash\n#SBATCH -N 1\nif [ -n \"$GO\" ]; then\n  srun python t.py\nfi\n"
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(text, "c.sh"))
    assert caught.value.problem.source.line == 4
    assert "inside a shell construct (lines 3-5" in caught.value.problem.message


def test_check_says_a_refused_scripts_traps_after_the_refusal(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH -N 2\nexport MASTER_PORT=29500\nsrun deepspeed --num_gpus 4 fit.py\n")
    res = subprocess.run([sys.executable, "-m", "ntui", "check", str(script)], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    lines = res.stderr.splitlines()
    assert lines[0].startswith(f"{script}:4: ") and "deepspeed launcher" in lines[0]
    assert any(x.startswith(f"{script}:3: ") and "(H6)" in x for x in lines[1:]), lines


def test_setup_keeps_a_here_document_whole_and_never_the_launch_that_shares_a_line() -> None:
    """A here-document ends at its delimiter (without it the rendered script would read itself into the file); a
    command on the launch's own line (``clear; srun ...``) is kept by its words, never with the launch beside it."""
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\ncfg=./ds.json\ncat <<EOT > $cfg\n"
            '{"stage": 0}\nEOT\nexport OMP_NUM_THREADS=4\n'
            "clear; srun torchrun --nnodes 2 --nproc_per_node 4 fit.py --cfg $cfg 2>&1 | tee -a run.log\n")
    setup = import_script(read_script(text, "/w/job.sh")).preset["setup"]
    assert 'cat <<EOT > $cfg\n{"stage": 0}\nEOT' in setup
    assert "clear" in setup and not any("srun" in line for line in setup), setup


@pytest.mark.parametrize("wrapper", ["${REPORTER} -o report --", "nsys profile -o prof --trace=cuda,nvtx",
                                     "numactl --interleave=all", "timeout 3h"])
def test_a_wrapper_with_options_before_the_launcher_is_seen_through_and_said(wrapper: str) -> None:
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n"
            f'srun bash -c "{wrapper} accelerate launch --num_machines 2 --num_processes 8 '
            '--machine_rank \\$SLURM_PROCID fit.py --bs $((16 * 4))"\n')
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["launcher"]["type"] == "accelerate" and imported.preset["script"] == "/w/fit.py"
    assert imported.preset["args"] == ["--bs", "64"]  # the batch shell's arithmetic on what the script decides
    assert any(f"`{wrapper}` wraps the launcher" in n for n in imported.notes), imported.notes


def test_echo_of_a_launcher_is_no_wrapper() -> None:
    text = "#!/bin/bash\n#SBATCH -N 2\necho torchrun --nnodes 2 fit.py\n"
    with pytest.raises(ScriptError, match="no launch line"):
        import_script(read_script(text, "/w/job.sh"))


def test_a_template_with_placeholders_in_its_directives_is_refused_as_one() -> None:
    text = ("#!/bin/bash\n#SBATCH --job-name=%RUN_NAME%\n#SBATCH --output=%RUN_DIR%/out.log\n#SBATCH -N 1\n"
            "srun python fit.py\n")
    with pytest.raises(ScriptError, match=r"a template.*%RUN_NAME%, %RUN_DIR%") as caught:
        import_script(read_script(text, "/w/job.sh"))
    assert caught.value.problem.source.line == 2
    sbatch_patterns = text.replace("%RUN_NAME%", "fit").replace("%RUN_DIR%/out.log", "logs/%x-%j_%A_%a.out")
    assert import_script(read_script(sbatch_patterns, "/w/job.sh")).preset["script"] == "/w/fit.py"


def test_the_container_engines_environment_is_said_to_check() -> None:
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-node=4\n"
            "srun --environment=ngc-torch python fit.py\n")
    imported = import_script(read_script(text, "/w/job.sh"))
    assert any(n.startswith("container: srun --environment=ngc-torch") for n in imported.notes)


def test_check_of_a_script_says_the_sites_rules_only_where_a_site_is_in_effect(tmp_path: Path) -> None:
    """A node's GPUs and the QOS are the site's facts: ``ntui check SCRIPT`` judges them under the NERSC site layer
    at the script's own line, and says nothing of them without a site."""
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n"
                      "#SBATCH -C gpu\n#SBATCH -q regular\nsrun torchrun --nnodes 2 --nproc_per_node 8 --rdzv_backend "
                      "c10d --rdzv_endpoint $(hostname):$((15000 + SLURM_JOB_ID % 17000)) fit.py\n")
    (tmp_path / "fit.py").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "NTUI_SITE_DIR"}
    plain = subprocess.run([sys.executable, "-m", "ntui", "check", str(script)], capture_output=True, text=True,
                           timeout=60, env={**env, "XDG_CONFIG_DIRS": str(tmp_path / "nowhere")})
    assert plain.returncode == 0 and "NERSC" not in plain.stdout + plain.stderr, plain.stderr
    site = subprocess.run([sys.executable, "-m", "ntui", "check", str(script)], capture_output=True, text=True,
                          timeout=60, env={**env, "NTUI_SITE_DIR": str(Path(__file__).resolve().parents[2] / "sites"
                                                                        / "nersc")})
    assert site.returncode == 2 and "Traceback" not in site.stderr
    assert any(x.startswith(f"{script}:4: ") and "(NERSC-GPUS)" in x for x in site.stderr.splitlines()), site.stderr
    assert "NERSC-QOS" not in site.stderr  # the script names its QOS; the site's locks and defaults are not its


def test_setup_lines_run_in_the_shell_the_script_ran_them_in(tmp_path: Path) -> None:
    """ntui's script runs ``set -euo pipefail`` before the setup; a script's ``[ "$RESUME" = true ]`` with RESUME
    unset, or a failing ``clear``, ended the imported job there. Its lines run under bash's defaults, then ntui's
    options come back for the launch."""
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\nOUT=$SCRATCH_X/run\n"
            'if [ "$RESUME" = true ]; then\n  echo resuming\nfi\nfalse | cat\n'
            "srun torchrun --nnodes 2 --nproc_per_node 4 fit.py --out $OUT\n")
    setup = import_script(read_script(text, "/w/job.sh")).preset["setup"]
    body = "set -euo pipefail\n" + "\n".join(setup) + "\necho launched; case $- in *e*u*|*u*e*) echo strict;; esac\n"
    env = {k: v for k, v in os.environ.items() if k not in ("RESUME", "SCRATCH_X")}
    res = subprocess.run(["bash", "-c", body], capture_output=True, text=True, timeout=WAIT_BOUND_S, env=env)
    assert res.returncode == 0 and res.stdout.split() == ["launched", "strict"], (res.stdout, res.stderr)
    unbracketed = subprocess.run(["bash", "-c", "set -euo pipefail\n" + "\n".join(setup[1:-1]) + "\necho launched\n"],
                                 capture_output=True, text=True, timeout=WAIT_BOUND_S, env=env)
    assert unbracketed.returncode != 0  # the same lines under ntui's options: the job would have ended


def test_srun_flags_given_together_are_each_a_flag() -> None:
    text = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\nsrun -ul python fit.py --lr 1\n"
    launch = _launch(read_script(text, "/w/job.sh"))
    assert launch.srun == {"unbuffered": None, "label": None}
    assert launch.program is not None and launch.program.text == "fit.py"


def test_a_fixed_port_exported_inside_the_tasks_shell_is_found_at_its_line() -> None:
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\nsrun bash -c \"\n"
            "    export MASTER_ADDR=\\$(scontrol show hostnames \\$SLURM_JOB_NODELIST | head -n 1)\n"
            "    export MASTER_PORT=29511\n    python fit.py\n\"\n")
    found = {(f.rule, f.line) for f in import_script(read_script(text, "/w/job.sh")).findings}
    assert ("H6", 6) in found, found


def test_one_task_a_node_for_a_program_that_asks_for_every_gpu_gets_one_task_a_gpu() -> None:
    """Lightning's --trainer.devices 4 on one task a node (H13): the preset runs one process a GPU, as G1 wants; a
    program that says nothing of devices (a JAX pmap driving every GPU) keeps its one task."""
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:4\n"
            "srun python fit_cli.py --trainer.num_nodes 2 --trainer.devices 4\n")
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["sbatch"]["ntasks-per-node"] == 4 and any("(H13, G1)" in f for f in imported.fixes)
    jax = import_script(read_script(text.replace(" --trainer.num_nodes 2 --trainer.devices 4", ""), "/w/job.sh"))
    assert jax.preset["sbatch"]["ntasks-per-node"] == 1 and not any("H13" in f for f in jax.fixes)


@pytest.mark.parametrize(("launch", "runner"), [
    ("srun python -m chat.train --lr 1", "srun's python"),
    ("srun torchrun --nnodes 2 --nproc_per_node 4 -m chat.train", "torchrun"),
    ("srun accelerate launch --num_machines 2 --num_processes 8 -m chat.train", "accelerate launch"),
])
def test_a_module_program_is_refused_naming_its_launcher_and_a_way_out(launch: str, runner: str) -> None:
    text = f"#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n{launch}\n"
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(text, "/w/job.sh"))
    said = str(caught.value)
    assert f"{runner} runs a Python module (-m chat.train)" in said and "runpy.run_module('chat.train'" in said


def test_a_launcher_option_the_shell_computes_at_run_time_is_said_to_check() -> None:
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\nACCUM=$(grep accum cfg.yaml | cut -d' ' -f2)\n"
            "STEPS=8\nsrun accelerate launch --num_machines 2 --num_processes 8 --gradient_accumulation_steps $ACCUM "
            "--max_restarts $STEPS fit.py\n")
    imported = import_script(read_script(text, "/w/job.sh"))
    said = [n for n in imported.notes if n.startswith("launcher.extra-args:")]
    assert len(said) == 1 and "--gradient_accumulation_steps" in said[0], imported.notes


@pytest.mark.parametrize("site", [None, "nersc"])
def test_every_corpus_script_goes_through_check_without_a_traceback(site: str | None, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``ntui check SCRIPT`` on every script of the corpus (tests/data/corpus/sbatch-scripts, index.yaml's), with and
    without a site: the findings, or the refusal, always said at a line; never an exception."""
    from ntui.cli.importscript import check_script_file

    repo = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "nowhere"))
    if site is None:
        monkeypatch.delenv("NTUI_SITE_DIR", raising=False)
    else:
        monkeypatch.setenv("NTUI_SITE_DIR", str(repo / "sites" / site))
    scripts = sorted((repo / "tests" / "data" / "corpus" / "sbatch-scripts").glob("s-0*.sh"))
    codes = {check_script_file(str(path)) for path in scripts}
    assert len(scripts) >= 80 and codes <= {0, 2} and codes == {0, 2}, codes


def test_a_run_time_gpu_count_is_the_clusters_nodes_where_the_job_asks_for_none() -> None:
    """``--nproc_per_node gpu`` on an --exclusive node: the GPUs a node of the script's partition has, asked of the
    cluster only then (never a site's or a guessed count); without an answer, 1, said."""
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH --exclusive\n#SBATCH -p big\n"
            "srun torchrun --nnodes 2 --nproc_per_node gpu fit.py\n")
    asked: list[str | None] = []

    def node_gpus(partition: str | None) -> int | None:
        asked.append(partition)
        return 8

    imported = import_script(read_script(text, "/w/job.sh"), node_gpus)
    assert imported.preset["launcher"]["nproc-per-node"] == 8 and asked == ["big"]
    assert any("partition big has 8 GPUs, the cluster says" in f for f in imported.fixes)
    asked.clear()
    given = import_script(read_script(text.replace("--exclusive", "--gpus-per-node=4"), "/w/job.sh"), node_gpus)
    assert given.preset["launcher"]["nproc-per-node"] == 4 and asked == []  # the job's own count: no question
    alone = import_script(read_script(text, "/w/job.sh"), lambda partition: None)
    assert alone.preset["launcher"]["nproc-per-node"] == 1 and any("no cluster says" in f for f in alone.fixes)
