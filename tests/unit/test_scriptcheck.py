"""``ntui check SCRIPT`` on the traps real scripts carry: each finding at the line the trap was written on, and
none where the script is right (the H rules of the rule table)."""

from __future__ import annotations

import pytest

from ntui.core.compose.scriptcheck import check_script
from ntui.core.compose.scriptimport import import_script
from ntui.core.compose.scriptread import ScriptError, read_script

HEAD = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n"


def _found(text: str) -> set[tuple[str, int]]:
    return {(f.rule, f.line) for f in check_script(read_script(text, "job.sh"))}


@pytest.mark.parametrize(("text", "want"), [
    # a port written in a launcher string, found where it was written, not at the srun line
    (HEAD + 'L="accelerate launch --num_machines 2 \\\n  --main_process_port 29500"\nsrun bash -c "$L fit.py"\n',
     ("H6", 6)),
    # a port option's value after =
    (HEAD + "srun torchrun --nnodes 2 \\\n  --master-port=29522 fit.py\n", ("H6", 6)),
    # a port variable set to a number and used
    (HEAD + "RDZV_PORT=29433\nsrun torchrun --nnodes 2 --rdzv-endpoint=$(hostname):$RDZV_PORT fit.py\n",
     ("H6", 5)),
    # a default that is a fixed port
    (HEAD + 'export MASTER_PORT="${MASTER_PORT:-29666}"\nsrun python fit.py\n', ("H6", 5)),
    # rendezvous options written as --rdzv_conf keys
    (HEAD + 'srun torchrun --nnodes 2 \\\n  --rdzv_conf "rdzv_backend=c10d,rdzv_endpoint=h:1" fit.py\n',
     ("H12", 6)),
    # the launch piped into tee without pipefail
    (HEAD + "srun python fit.py 2>&1 | tee -a run.log\n", ("H11", 5)),
    # MASTER_PORT set but not exported, read by the tasks' programs
    (HEAD + "export MASTER_ADDR=$(hostname)\nMASTER_PORT=$((10000 + SLURM_JOB_ID % 5000))\nsrun python fit.py\n",
     ("H10", 6)),
    # one task a node for four GPUs where the program is told it has four
    (HEAD + "srun python fit.py --trainer.devices 4\n", ("H13", 3)),
    # NAME = value runs a command
    (HEAD + "PROCS = $((SLURM_NNODES * 4))\nsrun python fit.py --procs $PROCS\n", ("H7", 5)),
    # NAME=value --flag: the blank ends the assignment
    (HEAD + "ARGS=fit.py --load $CKPT\nsrun python $ARGS\n", ("H7", 5)),
    # a variable used in a multi-line array before anything sets it, at the array's line
    (HEAD + "declare -a A=(\n  --nodes 2\n  --data $DATA_DIR\n)\nsrun python fit.py \"${A[@]}\"\n", ("H7", 7)),
    # a value that names itself before it was ever set
    (HEAD + "export MASTER_ADDR=$MASTER_ADDR\nsrun python fit.py\n", ("H7", 5)),
])
def test_a_trap_is_found_at_its_line(text: str, want: tuple[str, int]) -> None:
    assert want in _found(text), _found(text)


@pytest.mark.parametrize("text", [
    # a port from the job id, exported; pipefail set before tee; the launcher sets the ranks' variables itself
    HEAD + 'export MASTER_PORT=$((15000 + SLURM_JOB_ID % 17000))\nset -o pipefail\n'
           'srun torchrun --nnodes 2 --rdzv-endpoint "$(hostname):$MASTER_PORT" fit.py | tee log\n',
    # one task a node with a program that is not told it has several GPUs
    HEAD + "srun python probe.py\n",
    # a default for a variable the environment may give, and the site's own directories
    HEAD + 'OUT=${OUT_DIR:-$WORK/out}\nsrun python fit.py --out "$OUT" --tmp $SCRATCHDIR\n',
    # MASTER_PORT not exported but given to torchrun on its own line: the launcher passes it on
    HEAD + "MASTER_PORT=$((15000 + SLURM_JOB_ID % 17000))\nsrun torchrun --nnodes 2 "
           "--rdzv-endpoint $(hostname):$MASTER_PORT fit.py\n",
])
def test_a_right_script_raises_no_alarm(text: str) -> None:
    assert _found(text) == set()


def test_a_refused_import_keeps_what_checking_found() -> None:
    text = HEAD + "export MASTER_PORT=29500\nsrun deepspeed --num_gpus 4 fit.py\n"
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(text, "job.sh"))
    assert "deepspeed launcher is not a preset launcher" in str(caught.value)
    assert ("H6", 5) in {(f.rule, f.line) for f in caught.value.findings}


@pytest.mark.parametrize(("text", "said"), [
    (HEAD + "srun python launch_wrap.py train.py cfg.json\n", "given another program (train.py)"),
    ("#!/bin/bash\n#SBATCH --ntasks=1\n#SBATCH --ntasks-per-node=4\nsrun python fit.py\n", "task counts disagree"),
    ("#!/bin/bash\nsrun -p $1 --job-name=x python fit.py\n", "sizes from its arguments or the environment"),
    ("#!/bin/bash\nsrun -p gpu -N 2 -w 'n[1-2]' python fit.py\n", "on the nodes it names (-w n[1-2])"),
    ("export OMP_NUM_THREADS=4\ntorchrun --nnodes=1 --nproc_per_node=4 fit.py\n", "no srun starts its launch"),
    (HEAD + "srun composer --nproc 4 fit.py\n", "composer's launcher is not a preset launcher"),
    (HEAD + 'srun --kill-on-bad-exit=1 "$@"\n', "srun runs the script's own arguments"),
    (HEAD + "N = 4\nsrun accelerate launch --num_machines 2 --num_processes $N fit.py\n", "never sets"),
])
def test_a_refusal_says_why(text: str, said: str) -> None:
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(text, "job.sh"))
    assert said in str(caught.value)


def test_nodes_from_tasks_and_tasks_per_node() -> None:
    text = "#!/bin/bash\n#SBATCH -n 64\n#SBATCH --ntasks-per-node 4\nsrun python fit.py\n"
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["sbatch"]["nodes"] == 16


def test_a_site_docs_placeholder_is_read_not_crashed_on() -> None:
    text = "#!/bin/bash\n#SBATCH --account=<ACCOUNT>\n#SBATCH -N 2\nsrun python fit.py --out <OUT_DIR>\n"
    facts = read_script(text, "job.sh")
    assert facts.directive("account") == "<ACCOUNT>"


@pytest.mark.parametrize(("text", "want"), [
    # the program's own rendezvous port, when srun starts the ranks itself
    ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\nsrun python -m chat.train --port 61444\n",
     ("H6", 4)),
    # srun's program quoted together with its argument
    (HEAD + 'ip=$(hostname -i)\nsrun -l "launch/node.sh $ip"\n', ("H14", 6)),
])
def test_more_traps_at_their_lines(text: str, want: tuple[str, int]) -> None:
    assert want in _found(text), _found(text)


def test_a_program_relative_to_a_cd_is_found_where_the_script_moved() -> None:
    text = HEAD + "cd /store/me/kit\ntorchrun --nproc_per_node=4 --standalone tools/fit.py\n"
    imported = import_script(read_script(text.replace("-N 2", "-N 1"), "/w/job.sh"))
    assert imported.preset["script"] == "/store/me/kit/tools/fit.py"
    moved = text.replace("cd /store/me/kit", "cd $WORK/kit")  # the environment's directory: kept as its variable
    imported = import_script(read_script(moved.replace("-N 2", "-N 1"), "/w/job.sh"))
    assert imported.preset["script"] == "${WORK}/kit/tools/fit.py" and any("$WORK" in n for n in imported.notes)
    made = text.replace("cd /store/me/kit", "cd $(mktemp -d)")  # a command's: unknown
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(made.replace("-N 2", "-N 1"), "/w/job.sh"))
    assert "cd $(mktemp -d)" in str(caught.value)
    submit = text.replace("cd /store/me/kit", 'cd "$SLURM_SUBMIT_DIR"')
    assert import_script(read_script(submit.replace("-N 2", "-N 1"), "/w/job.sh")).preset["script"] == "/w/tools/fit.py"


def test_a_script_each_node_runs_is_refused_and_its_traps_kept() -> None:
    text = ("#!/bin/bash\nHEAD_HOST=$1\nshift\nN=$1\nshift\nEP=$HEAD_HOST:12377\n"
            "torchrun --nproc_per_node=8 --nnodes=$N --rdzv-backend=c10d --rdzv-endpoint=$EP fit.py \"$@\"\n")
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(text, "node.sh"))
    assert "a script each node runs" in str(caught.value)
    assert ("H6", 6) in {(f.rule, f.line) for f in caught.value.findings}


def _preset(text: str) -> dict[str, object]:
    from ntui.core.compose.spec import validate

    imported = import_script(read_script(text, "/w/job.sh"))
    spec, problems = validate(imported.loaded("/w/job.sh (imported)"))
    assert spec is not None and not [p for p in problems if p.is_error], [str(p) for p in problems]
    return imported.preset


def test_an_import_asks_for_gpus_one_way_per_node_and_for_tasks_per_node() -> None:
    text = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks=8\n#SBATCH --gpus-per-task=1\n"
            "#SBATCH --wait-all-nodes=1\nsrun python fit.py\n")
    sbatch = _preset(text)["sbatch"]
    assert sbatch == {"nodes": 2, "ntasks-per-node": 4, "gpus-per-node": 4}


def test_the_old_spelling_tasks_per_node_and_a_run_time_gpu_count() -> None:
    text = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --tasks-per-node=1\n#SBATCH --gpus-per-task=8\n"
            "srun torchrun --standalone --nproc_per_node=gpu fit.py\n")
    preset = _preset(text)
    assert preset["sbatch"] == {"nodes": 1, "ntasks-per-node": 1, "gpus-per-node": 8}
    assert preset["launcher"] == {"type": "torchrun", "nproc-per-node": 8}


def test_a_value_written_over_lines_stays_one_comment_line_of_the_preset() -> None:
    text = ('#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n'
            "srun bash -c 'ARGS=\"\n  --nnodes=$SLURM_NNODES\n  --node-rank=$SLURM_PROCID\"\n"
            "  torchrun --nproc-per-node=4 $ARGS fit.py'\n")
    preset = _preset(text)
    assert preset["launcher"] == {"type": "torchrun", "nproc-per-node": 4}


def test_one_rendezvous_id_is_no_alarm_where_the_endpoint_is_the_jobs_own() -> None:
    text = (HEAD + "export MASTER_PORT=$((15000 + SLURM_JOB_ID % 17000))\n"
            "srun bash -c 'torchrun --nnodes 2 --rdzv_id=\\$SLURM_JOB_ID --rdzv_backend=c10d "
            "--rdzv_endpoint=\"$MASTER_ADDR:$MASTER_PORT\" fit.py'\n")
    assert "H3" not in {rule for rule, _ in _found(text)}
    fixed = text.replace('"$MASTER_ADDR:$MASTER_PORT"', "h:29500")
    assert "H3" in {rule for rule, _ in _found(fixed)}


def test_no_traceback_on_a_cut_or_broken_script() -> None:
    """Every fixture of the corpora, whole, cut short and with a quote or a bracket taken out: a refusal that
    says why, or an import whose preset loads; never another exception."""
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data"
    said = {"refused": 0, "imported": 0}
    for path in sorted((data / "corpus" / "sbatch-scripts").glob("*.sh")) + sorted((data / "scripts").rglob("*.sh")):
        text = path.read_text()
        for variant in (text, text[:len(text) // 3], text[:2 * len(text) // 3], text[len(text) // 2:],
                        text.replace('"', "", 1), text.replace("'", "", 1), text.replace("}", "", 1)):
            try:
                loaded = import_script(read_script(variant, str(path))).loaded(f"{path} (imported)")
            except ScriptError as refusal:
                assert str(refusal).strip(), f"{path}: a refusal that says nothing"
                said["refused"] += 1
            else:
                assert loaded.data.get("launcher"), f"{path}: an imported preset without its launcher"
                said["imported"] += 1
    assert said["refused"] and said["imported"], said  # both ways were taken: the loop read the fixtures


def test_a_line_that_only_builds_the_launch_from_what_ntui_sets_is_not_kept() -> None:
    text = (HEAD + "MASTER_ADDR=$(hostname)\nMASTER_PORT=$((15000 + SLURM_JOB_ID % 17000))\n"
            'LAUNCHER="torchrun --nnodes 2 --nproc_per_node 4 --rdzv_endpoint $MASTER_ADDR:$MASTER_PORT"\n'
            'OUT=/ckpt\nmkdir -p $OUT\nsrun bash -c "$LAUNCHER fit.py --out $OUT"\n')
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["setup"][1:-1] == ["OUT=/ckpt", "mkdir -p $OUT"]
    assert any(line == 7 and "builds the launch line" in why for line, why in imported.not_imported)


def test_the_deepspeed_launcher_is_read_for_its_traps_and_refused_by_name() -> None:
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
            "deepspeed --num_nodes 2 --num_gpus 8 --hostfile hosts \\\n  --master_port 29511 fit.py --ds cfg.json\n")
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(text, "job.sh"))
    assert "deepspeed launcher is not a preset launcher" in str(caught.value)
    found = {(f.rule, f.line) for f in caught.value.findings}
    assert ("H6", 5) in found and "H9" not in {rule for rule, _ in found}  # it starts the other nodes itself


@pytest.mark.parametrize(("text", "alarm"), [
    (HEAD + "srun torchrun --nnodes 2 --rdzv-endpoint=10.1.2.3:$PORT fit.py\n", True),
    ("#!/bin/bash\ndeepspeed --num_nodes 2 --hostfile h \\\n  --master_addr gpu-017 fit.py\n", True),
    (HEAD + 'srun torchrun --nnodes 2 --master_addr "$(hostname)" fit.py\n', False),
    (HEAD.replace("-N 2", "-N 1") + "torchrun --standalone --rdzv-endpoint=localhost:$PORT fit.py\n", False),
])
def test_a_fixed_rendezvous_host_on_several_nodes(text: str, alarm: bool) -> None:
    assert ("H15" in {rule for rule, _ in _found(text)}) == alarm, _found(text)


def test_a_variable_set_for_srun_reaches_the_tasks_environment() -> None:
    text = HEAD + "OMP_NUM_THREADS=8 srun torchrun --nnodes 2 --nproc_per_node 4 fit.py\n"
    assert import_script(read_script(text, "/w/job.sh")).preset["env"] == {"OMP_NUM_THREADS": "8"}


def test_a_variable_never_set_says_which_sourced_file_may_set_it() -> None:
    text = HEAD + "source ./run_env.sh\nsrun python fit.py --port-file $PORT_FILE\n"
    finding = next(f for f in check_script(read_script(text, "job.sh")) if f.rule == "H7")
    assert "./run_env.sh (sourced on line 5)" in finding.message


def test_values_srun_exports_to_the_tasks_reach_the_presets_env() -> None:
    text = HEAD + "srun --export=ALL,NCCL_DEBUG=INFO,MASTER_PORT=1 torchrun --nnodes 2 --nproc_per_node 4 fit.py\n"
    assert import_script(read_script(text, "/w/job.sh")).preset["env"] == {"NCCL_DEBUG": "INFO"}


def test_a_lower_case_port_variable_set_to_a_number_is_a_fixed_port() -> None:
    text = HEAD + "gcs_port=6411\nexport HEAD_ADDR=$(hostname):$gcs_port\nsrun python fit.py\n"
    assert ("H6", 5) in _found(text), _found(text)
    assert not any(rule == "H6" for rule, _ in _found(text.replace("gcs_port=6411", "gcs_count=6411")
                                                       .replace("$gcs_port", "$gcs_count")))


def test_a_variable_read_with_an_assignment_before_read_is_set() -> None:
    text = HEAD + "IFS=' ' read -ra parts <<< \"$(hostname -I)\"\nsrun python fit.py --ip ${parts[0]}\n"
    assert not any(rule == "H7" for rule, _ in _found(text)), _found(text)
    assert ("H7", 6) in _found(text.replace("read -ra parts", "read -ra other"))


def test_one_task_without_nodes_is_one_node() -> None:
    text = "#!/bin/bash\n#SBATCH --ntasks=1\n#SBATCH --gpus-per-node=8\nsrun python fit.py\n"
    assert import_script(read_script(text, "/w/job.sh")).preset["sbatch"]["nodes"] == 1
    filled = "#!/bin/bash\n#SBATCH --ntasks=8\n#SBATCH --ntasks-per-node=8\nsrun python fit.py\n"
    assert import_script(read_script(filled, "/w/job.sh")).preset["sbatch"]["nodes"] == 1


def test_a_driver_run_once_after_steps_on_chosen_nodes_is_refused() -> None:
    text = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\nhead=$(scontrol show hostnames | head -1)\n"
            "ip=$(srun -N1 -n1 -w \"$head\" hostname -i)\n./start_head.sh $ip\npython drive.py\n")
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(text, "/w/job.sh"))
    assert "a driver of a cluster the script builds" in str(caught.value) and ":7:" in str(caught.value)
    one = import_script(read_script(text.replace("-w \"$head\" ", ""), "/w/job.sh"))  # no node chosen: imported
    assert one.preset["launcher"]["type"] == "srun"


def test_srun_of_a_python_file_with_no_interpreter_is_imported_with_python_and_said() -> None:
    text = HEAD + "srun fit.py --lr 3e-5 \\\n  --fsdp 'full_shard auto_wrap'\n"
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["script"] == "/w/fit.py" and imported.preset["launcher"]["type"] == "srun"
    assert imported.preset["args"] == ["--lr", "3e-5", "--fsdp", "full_shard auto_wrap"]
    assert any("with no interpreter, on line 5" in f for f in imported.fixes)
    with_python = import_script(read_script(text.replace("srun fit.py", "srun python fit.py"), "/w/job.sh"))
    assert not any("no interpreter" in f for f in with_python.fixes)


def test_a_login_node_sruns_literal_allocation_is_the_jobs() -> None:
    text = "#!/bin/bash\nsrun -p gpu --job-name=x -n 8 --ntasks-per-node=4 --gres=gpu:4 -c 6 python fit.py\n"
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["sbatch"] == {"partition": "gpu", "ntasks": 8, "ntasks-per-node": 4, "gres": "gpu:4",
                                         "cpus-per-task": 6, "nodes": 2}
    assert any("no #SBATCH line" in n for n in imported.notes)


def test_a_fragment_with_srun_is_imported_with_a_note_and_no_shebang_alarm() -> None:
    text = "part=big\nn=8\nsrun --partition=$part --ntasks=$n --ntasks-per-node=$n python -u fit.py\n"
    assert not any(rule == "H1" for rule, _ in _found(text)), _found(text)
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["sbatch"]["nodes"] == 1 and imported.preset["sbatch"]["partition"] == "big"
    assert any("a shell fragment" in n for n in imported.notes)
    assert ("H1", 1) in _found("# set up\n#!/bin/bash\n" + text)  # a #! line below a comment: sbatch's script


def test_a_fragments_torchrun_under_srun_gives_its_nodes() -> None:
    text = "srun torchrun \\\n--rdzv_backend c10d \\\n--rdzv_endpoint $HOST:$PORT \\\n--nnodes 2 \\\nfit.py $@\n"
    assert {("H7", 3)} <= _found(text), _found(text)
    imported = import_script(read_script(text, "/w/job.sh"))
    assert imported.preset["sbatch"]["nodes"] == 2 and imported.preset["launcher"]["type"] == "torchrun"
    assert any("torchrun's 2 nodes on line 1" in f for f in imported.fixes)


def test_a_quote_left_open_that_swallows_a_loop_is_refused_at_its_line_with_the_traps_kept() -> None:
    text = (HEAD + "PORT=6411\nsrun -N1 bash -c \\\n  && ray start --port=$PORT --block\" &\n"
            "for w in a b; do\n  srun -N1 -w \"$w\" bash -c \\\n  && ray start --block\" &\ndone\nsrun python fit.py\n")
    with pytest.raises(ScriptError) as caught:
        import_script(read_script(text, "/w/job.sh"))
    assert ":7: a quote opened on line 7" in str(caught.value) and "the `for` of line 8" in str(caught.value)
    assert ("H6", 5) in {(f.rule, f.line) for f in caught.value.findings}
    closed = text.replace("--block\" &", "--block &").replace("bash -c \\\n  &&", "bash -c \"true\" \\\n  &&")
    assert read_script(closed, "/w/job.sh").refusal is None
    stray = HEAD + "srun python fit.py\nfi\n"
    assert read_script(stray, "/w/job.sh").refusal == (6, "`fi` on line 6 closes nothing: bash refuses the whole "
                                                          "script (syntax error near unexpected token). Look above "
                                                          "it for a quote left open or a construct never begun")


def test_a_word_and_a_backquoted_substitution_written_together_are_one_word() -> None:
    text = "srun -K --gpus=1 --container-mounts=/d:/d,`pwd`:`pwd` --container-workdir=`pwd` setup.sh python fit.py\n"
    facts = read_script(text, "/w/job.sh")
    words = [w.text for w in facts.commands[0].words]
    assert words[3:5] == ["--container-mounts=/d:/d,`pwd`:`pwd`", "--container-workdir=`pwd`"], words
    assert facts.unknown_launches == [(1, "setup.sh")] and facts.refusal is None
    with pytest.raises(ScriptError) as caught:
        import_script(facts)
    assert "srun starts setup.sh (line 1), which is no launcher a preset has" in str(caught.value)
    assert [w.text for w in read_script("echo a b,$(pwd) c\n", "j.sh").commands[0].words] == [
        "echo", "a", "b,$(pwd)", "c"]
