"""The batch script read with tree-sitter's bash grammar and its batch shell evaluated symbolically
(:mod:`ntui.core.compose.bashread`): the launch found wherever the script builds it, each value at its own line."""

from __future__ import annotations

import pytest

from ntui.core.compose.bashread import BATCH, commands
from ntui.core.compose.scriptread import Launch, read_script


def _launch(text: str) -> Launch:
    facts = read_script(text, "job.sh")
    assert len(facts.launches) == 1, [x.line for _, x in facts.launches]
    return facts.launches[0][1]


def _expanded(text: str, index: int = -1) -> list[tuple[str, int]]:
    return [(w.text, w.line) for w in commands(text)[index].expanded or []]


def test_an_unquoted_variable_is_split_into_its_words_each_at_the_line_it_was_written_on() -> None:
    text = ('#!/bin/bash\nexport LAUNCHER="torchrun \\\n  --nproc_per_node 4 \\\n  --master_port 29500"\n'
            'CMD="$LAUNCHER train.py --lr 0.1"\nsrun $CMD\n')
    assert _expanded(text) == [("srun", 6), ("torchrun", 2), ("--nproc_per_node", 3), ("4", 3),
                               ("--master_port", 4), ("29500", 4), ("train.py", 5), ("--lr", 5), ("0.1", 5)]


def test_an_array_a_default_and_an_empty_expansion() -> None:
    text = ('#!/bin/bash\nARGS=(--epochs "2 3")\nARGS+=(--fast)\nRESUME=""\nsrun ${RESUME} python ${PROG:-fit.py} '
            '"${ARGS[@]}"\n')
    assert [w for w, _ in _expanded(text)] == ["srun", "python", "fit.py", "--epochs", "2 3", "--fast"]


def test_what_the_script_does_not_decide_is_the_batch_shells_unknown_at_its_line() -> None:
    text = '#!/bin/bash\nHEAD=$(hostname)\nA="x $HEAD $SLURM_PROCID"\necho $A\n'
    words = commands(text)[-1].expanded or []
    assert [(w.text, w.parts[0].quote, w.line) for w in words[1:]] == [
        ("x", "'", 3), ("$(hostname)", BATCH, 2), ("$SLURM_PROCID", BATCH, 3)]


def test_a_launch_in_a_function_is_found_at_its_call_with_the_calls_arguments() -> None:
    text = ('#!/bin/bash\n#SBATCH -N 2\nrun() {\n  srun torchrun --nnodes 2 "$1" --steps "$2"\n}\n'
            'module load x\nrun fit.py 10\n')
    launch = _launch(text)
    assert (launch.launcher, launch.program and launch.program.text) == ("torchrun", "fit.py")
    assert [w.text for w in launch.args] == ["--steps", "10"]


def test_a_bash_c_body_built_from_variables_is_read_as_each_tasks_shell_reads_it() -> None:
    text = ('#!/bin/bash\n#SBATCH -N 2\nexport LAUNCHER="python -u -m torch.distributed.run --nnodes 2 '
            '--nproc_per_node 8"\nexport CMD="pretrain.py --tp 4"\n'
            'srun bash -c "$LAUNCHER --node_rank \\$SLURM_PROCID $CMD" 2>&1 | tee -a log.txt\n')
    launch = _launch(text)
    assert (launch.launcher, launch.under_srun) == ("torchrun", True)
    assert launch.program is not None and launch.program.text == "pretrain.py"
    assert launch.opt("--node-rank") == ("$SLURM_PROCID", launch.opt("--node-rank")[1])  # type: ignore[index]


def test_a_rank_the_batch_shell_expands_inside_a_double_quoted_launcher_is_found_at_its_line() -> None:
    from ntui.core.compose.scriptcheck import check_script

    text = ('#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\nexport LAUNCHER="accelerate launch '
            '--num_machines 2 \\\n  --machine_rank $SLURM_PROCID"\nsrun bash -c "$LAUNCHER fit.py"\n')
    assert ("H4", 5) in {(f.rule, f.line) for f in check_script(read_script(text, "job.sh"))}


def test_a_here_document_and_a_pipeline_are_read_with_their_lines() -> None:
    text = "#!/bin/bash\ncat > ds.json <<EOF\n{\"a\": $X}\nEOF\nsrun python t.py | tee out.log\n"
    cmds = commands(text)
    assert cmds[0].heredoc == ['{"a": $X}'] and cmds[0].argv == ["cat", ">ds.json"]
    assert [(c.argv[0], c.line, c.separator) for c in cmds[1:]] == [("srun", 5, "|"), ("tee", 5, "")]


def test_defaults_assigned_with_colon_equals_and_a_declared_array_of_srun_options() -> None:
    text = ('#!/bin/bash\n#SBATCH -N 2\n: "${IMAGE:=/img/fit.sqsh}"\ndeclare -a ARGS=(\n  --container-image $IMAGE\n'
            '  --container-mount-home\n  --container-mounts /data:/data\n)\n/usr/bin/time srun -l "${ARGS[@]}" '
            'python3 /w/fit.py\n')
    launch = _launch(text)
    assert launch.srun.get("container-image") == "/img/fit.sqsh"
    assert launch.srun.get("container-mounts") == "/data:/data" and "container-mount-home" in launch.srun
    assert launch.program is not None and launch.program.text == "/w/fit.py"


def test_an_unknown_srun_argument_variable_and_an_unknown_prefix_are_passed_over() -> None:
    text = ('#!/bin/bash\n#SBATCH -N 1\nif [ -n "$PROFILE" ]; then\n  export PROF="nsys profile"\nfi\n'
            'srun $SRUN_ARGS -u bash -c "${PROF} env -u PYTHONPATH python fit.py"\n')
    launch = _launch(text)
    assert (launch.under_srun, launch.program and launch.program.text) == (True, "fit.py")


def test_a_value_assigned_on_one_path_only_is_not_taken_as_known() -> None:
    text = '#!/bin/bash\nA=fit.py\nif [ -n "$X" ]; then\n  A=other.py\nfi\nsrun python $A\n'
    program = _launch(text).program
    assert program is not None and program.parts[0].quote == BATCH


def test_a_program_in_the_submit_directory_is_imported_next_to_the_script() -> None:
    from ntui.core.compose.scriptimport import import_script
    from ntui.core.compose.scriptread import ScriptError

    text = '#!/bin/bash\n#SBATCH -N 2\nsrun python $SLURM_SUBMIT_DIR/fit.py --lr 1\n'
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["script"] == "/w/fit.py" and any("SLURM_SUBMIT_DIR" in n for n in imported.notes)
    moved = '#!/bin/bash\n#SBATCH -N 2\ncd $CODE\nsrun python $PWD/fit.py\n'  # not the submit directory: $CODE
    imported = import_script(read_script(moved, "/w/job.sh"))
    assert imported.preset["script"] == "${CODE}/fit.py" and any("$CODE" in n for n in imported.notes)
    made = '#!/bin/bash\n#SBATCH -N 2\ncd $(mktemp -d)\nsrun python $PWD/fit.py\n'  # a command decides it
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(made, "/w/job.sh"))
    assert "depends on the environment" in str(caught.value)


def test_a_value_extended_on_one_path_keeps_the_value_every_path_has() -> None:
    from ntui.core.compose.scriptimport import import_script

    text = ('#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\nexport CMD=" \\\n    $(pwd)/fit.py \\\n'
            '    --lr 1 \\\n    "\nif [ "$RESUME" = true ]; then\n  export CMD="$CMD --load ck"\nfi\n'
            "srun bash -c 'torchrun --nnodes 2 --nproc_per_node 4 $CMD'\n")
    launch = _launch(text)
    assert launch.program is not None and launch.program.text == "$(pwd)/fit.py"  # the continuation is no word
    assert [w.text for w in launch.args] == ["--lr", "1"]
    assert launch.scope["CMD"].extended == ((9, " --load ck"),)
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["script"] == "/w/fit.py" and imported.preset["args"] == ["--lr", "1"]
    assert any("line 9 adds '--load ck' to $CMD on one path only" in n for n in imported.notes)
    other = text.replace('"$CMD --load ck"', '"other.py"')  # replaced, not extended: unknown after the if
    replaced = _launch(other)
    assert replaced.scope["CMD"].value is None and not replaced.scope["CMD"].extended
    assert replaced.program is not None and replaced.program.text == "$CMD"  # left to the task: not known


def test_eval_reads_its_words_as_commands_of_the_batch_shell() -> None:
    text = ('#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\nA=(--nproc_per_node 4 --nnodes 2)\n'
            'cmd="torchrun ${A[@]} bench.py --x 1"\neval srun $cmd\n')
    launch = _launch(text)
    assert (launch.launcher, launch.under_srun, launch.line) == ("torchrun", True, 6)
    assert launch.program is not None and (launch.program.text, launch.program.line) == ("bench.py", 5)


def test_a_script_that_evals_or_calls_itself_forever_is_read_in_bounded_time() -> None:
    text = '#!/bin/bash\nX="eval \\$X"\neval $X\nf() { f; }\nf\nsrun python t.py\n'
    assert _launch(text).program is not None


def test_shift_let_and_arithmetic_set_what_they_set() -> None:
    text = ("#!/bin/bash\n#SBATCH -N 1\n(( STEPS = 100 * 2 ))\nlet WARM=STEPS/10\n"
            "run() {\n  local prog=$1; shift\n  srun python $prog \"$@\" --steps $STEPS --warm $WARM\n}\n"
            "run fit.py --lr 1\n")
    facts = read_script(text, "job.sh")
    launch = facts.launches[0][1]
    assert launch.program is not None and launch.program.text == "fit.py"
    assert [w.text for w in launch.args][:2] == ["--lr", "1"]
    from ntui.core.compose.scriptcheck import check_script

    assert "H7" not in {f.rule for f in check_script(facts)}  # STEPS and WARM are set, by (( )) and let
    from ntui.core.compose.scriptimport import import_script

    setup = import_script(read_script(text, "/w/job.sh")).preset["setup"]
    assert setup[1:3] == ["(( STEPS = 100 * 2 ))", "let WARM=STEPS/10"]


def test_a_function_that_runs_the_launch_is_not_setup_and_one_that_does_not_is() -> None:
    from ntui.core.compose.scriptimport import import_script

    text = ("#!/bin/bash\n#SBATCH -N 1\nprep() {\n  mkdir -p out\n}\ngo() {\n  local p=$1\n  srun python $p\n}\n"
            "prep\n[[ -d data ]] || ln -s /data data\ngo fit.py\n")
    setup = import_script(read_script(text, "/w/job.sh")).preset["setup"]
    assert setup[1:-1] == ["prep() {", "  mkdir -p out", "}", "prep", "[[ -d data ]] || ln -s /data data"]


@pytest.mark.parametrize("text", [
    "A=1 B=2\necho hi\n",  # two assignments: the grammar takes the next line's command as theirs
    "A=1 B=2  # set both\necho hi\n",
    "A=1 B=2  # a comment's backslash continues nothing \\\necho hi\n",
    "a | grep x | head -3\necho hi\n",  # three stages: the same
])
def test_a_command_ends_at_its_line_end_as_bash_ends_it(text: str) -> None:
    found = [(c.line, [w.text for w in c.words]) for c in commands(text)]
    assert found[-1] == (2, ["echo", "hi"]), found
    assert all("echo" not in words for _, words in found[:-1]), found


def test_a_loop_after_a_line_of_assignments_is_a_loop_not_a_stray_do() -> None:
    """The form ntui's own rendezvous lines have (R4): refused as "`do` closes nothing" before."""
    script = ("#!/bin/bash\n#SBATCH -N 2\nif [ -n \"$X\" ]; then\n    A=$MASTER_PORT N=0\n"
              "    while [ \"$N\" -lt 3 ] && f \"$A\"; do\n        N=$(( N + 1 )) A=$(( A + 1 ))\n    done\nfi\n"
              "srun python t.py\n")
    read = read_script(script, "t.sh")
    assert read.stray_closer is None
    assert [(c.line, c.words[0].text) for c in commands(script)][-1] == (9, "srun")



def test_every_run_on_line_of_a_long_script_is_cut() -> None:
    text = "".join(f"A{i}=1 B{i}=2\n" for i in range(300)) + "echo end\n"
    found = commands(text)
    assert len(found) == 301 and [w.text for w in found[-1].words] == ["echo", "end"] and found[-1].line == 301
