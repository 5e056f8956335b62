"""The rule table: every rule is needed (a known-bad preset is refused with its id, and accepted once
that one rule is left out), every guarantee shows in the rendered script, and the docs are generated."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.rdzvconf import RdzvConf, merge_rdzv_conf, split_rdzv_conf
from ntui.core.compose.render import render
from ntui.core.compose.rules import BY_ID, RULES, blocks_submit
from ntui.core.compose.rulesdoc import markdown, readme_section
from ntui.core.compose.spec import validate
from ntui.core.jobfiles.journal import launch_begin_line
from ntui.core.problems import PresetError, Severity
from tests.conftest import REPO

# A known-bad example for every rule with a check: (preset, --set overrides).
BAD: dict[str, tuple[str, tuple[str, ...]]] = {
    "P3": ("local-torchrun", ("sbatch.chdir=$SCRATCH/run",)),
    "P4": ("local-torchrun", ("sbatch.comment=",)),
    "P5": ("local-torchrun", ("sbatch.comment=':x'",)),
    "V3": ("local-torchrun", ("sbatch.qos=true",)),
    "V4": ("local-torchrun", ("sbatch.nodes=010",)),
    "J1": ("local-torchrun", ("sbatch.signal=B:USR2@99999",)),
    "G1": ("local-srun", ("sbatch.gres=gpu:a100:4",)),
    "G2": ("local-torchrun", ("sbatch.gpus-per-node=a100:4",)),
    "G3": ("local-srun", ("sbatch.gpus-per-node=2", "sbatch.gres=gpu:2")),
    "G4": ("local-srun", ("sbatch.gpus-per-task=1",)),
    "G9": ("local-torchrun", ("sbatch.ntasks=4",)),
    "G10": ("local-srun", ("sbatch.gpus=4",)),
    "G11": ("local-srun", ("launcher.nproc-per-node=2",)),
    "C4": ("local-srun", ("sbatch.cpus-per-gpu=2",)),
    "R4": ("local-torchrun", ("launcher.master-port=29555",)),
    "R12": ("local-torchrun", ("launcher.master-port=40000",)),
    "R11": ("local-torchrun", ('launcher.extra-args=["--rdzv-endpoint=nid002:29500"]',)),
    "R13": ("local-torchrun", ('launcher.extra-args=["--rdzv-conf=timeout=900,is_host=1"]',)),
    "R14": ("local-torchrun", ('launcher.extra-args=["--rdzv-co=timeout=900,is_host=1"]',)),
    "Q7": ("local-srun", ('launcher.python=python "-u',)),
    "A2": ("local-accelerate", ("launcher.multi-gpu=false",)),
    "A3": ("local-accelerate", ("launcher.cpu=true", "launcher.multi-gpu=true")),
    "A4": ("local-accelerate", ("sbatch.nodes=1", "launcher.nproc-per-node=1", "launcher.multi-gpu=true")),
    "A6": ("local-torchrun", ("launcher.mixed-precision=bf16",)),
    "K1": ("local-srun", ("container.runtime=shifter",)),
    "K2": ("local-srun", ("sbatch.image=nersc/pytorch:25.02.01",)),
    "K3": ("local-srun", ("container.runtime=podman", "container.image=localhost/t:1",
                          'container.options=["--net=none"]')),
    "K4": ("local-torchrun", ("container.runtime=apptainer", "container.image=/i.sif",
                              'container.options=["--cleanenv"]')),
    "K5": ("local-srun", ("sbatch.container-image=nvcr.io#nvidia/pytorch:25.02-py3",)),
    "K6": ("local-srun", ("container.runtime=podman", "container.image=localhost/t:1", "sbatch.gpus-per-node=2")),
    "F1": ("local-srun", ("script=/nonexistent/ntui/train.py",)),
    "M1": ("local-srun", ("sbatch.gpus-per-node=2", "monitor.interval=0")),
    "M2": ("local-srun", ("monitor.gpu=true",)),
    "M3": ("local-srun", ("monitor.interval=7",)),
    "W1": ("local-sweep", ('sweep.zip={lr: ["1"]}',)),
    "W2": ("local-sweep", ("sweep.grid.seed=[]",)),
    "W3": ("local-sweep", ("sweep.grid=false", 'sweep.zip={lr: ["1", "2"], seed: ["1"]}')),
    "W4": ("local-sweep", ('args=["--lr", "{lr}", "--seed", "{sed}", "{seed}"]',)),
    "W5": ("local-sweep", ('sweep.grid.wd=["0.1"]',)),
    "W6": ("local-sweep", ("sbatch.comment=lr-{lr}",)),
    "W7": ("local-sweep", (f"sweep.grid.lr=[{', '.join(map(str, range(2001)))}]",
                           f"sweep.grid.seed=[{', '.join(map(str, range(2001)))}]")),
    "W8": ("local-sweep", ("sweep.parallel=02",)),
    "W9": ("local-sweep", ("sweep.metric=loss=([0-9.]+",)),
    "T1": ("local-longrun", ("run.warning=120", "run.grace=30")),
    "T2": ("local-longrun", ("run.grace=40",)),
    "T3": ("local-longrun", ("run.checkpoint-signal=TERM",)),
    "T4": ("local-longrun", ("run.checkpoint-signal=USR1",)),
    "T5": ("local-longrun", ("sbatch.signal=B:USR2@60",)),
    "T8": ("local-longrun", (f"script={REPO / 'tests' / 'data' / 'programs' / 'lightning_train.py'}",)),
    "T9": ("local-longrun", ("sweep={grid: {x: [\"1\", \"2\"]}}", 'args=["--steps", "{x}"]')),
}


def test_every_checking_rule_has_an_example() -> None:
    assert set(BAD) == {r.id for r in RULES if r.check is not None}


def test_no_rule_of_the_table_knows_a_machine() -> None:
    """Perlmutter's limits (S1, G6, T6 once) are the NERSC site's rules (tests/unit/test_site.py: MOVED); the table
    names no machine, and none of its findings does for a preset that says nothing of one."""
    assert not {"S1", "G6", "T6"} & set(BY_ID)
    assert not [r.id for r in RULES if "Perlmutter" in r.summary or "NERSC" in r.summary]
    for preset, overrides in BAD.values():
        _, problems = validate(load_preset(preset, overrides))
        assert not [str(p) for p in problems if "Perlmutter" in p.message or "NERSC" in p.message]


@pytest.mark.parametrize("rule_id", sorted(BAD))
def test_rule_refuses_and_is_needed(rule_id: str) -> None:
    preset, overrides = BAD[rule_id]
    rule = BY_ID[rule_id]
    loaded = load_preset(preset, overrides)
    spec, problems = validate(loaded)
    hits = [p for p in problems if p.rule == rule_id]
    assert hits, [str(p) for p in problems]
    for p in hits:
        assert p.severity is rule.severity
        assert str(p).endswith(f"({rule_id})")
        assert str(p).startswith(f"--set {p.field.split('.')[0]}") or ":" in str(p)
    if rule.severity is Severity.ERROR:
        assert spec is None
    # Without this one rule the same preset is accepted: the rule is what refuses it.
    spec2, problems2 = validate(load_preset(preset, overrides), [r for r in RULES if r.id != rule_id])
    assert spec2 is not None, [str(p) for p in problems2 if p.is_error]
    assert not any(p.rule == rule_id for p in problems2)


def _script(preset: str, *overrides: str) -> str:
    spec, problems = validate(load_preset(preset, ("logs.dir=/logs", *overrides)))
    assert spec is not None, [str(p) for p in problems]
    return render(spec)


def _launch(script: str) -> str:
    return script.split("# Launch:")[1]


# A check of the rendered script for every guarantee (a rule without a condition).
GUARANTEED: dict[str, Callable[[], bool]] = {
    "P1": lambda: next(ln for ln in _script("local-srun").splitlines() if not ln.startswith("#"))
    == "set -euo pipefail",
    "P2": lambda: all(ln.startswith("#SBATCH --") for ln in _script("local-srun").splitlines()
                      if ln.replace(" ", "").lower().startswith("#sbatch")),
    "G5": lambda: "--gpu-bind=none" in _launch(_script("local-srun", "sbatch.gpus-per-task=1", "sbatch.ntasks=4")),
    "C1": lambda: '--cpus-per-task="$SLURM_CPUS_PER_TASK"' in _launch(_script("local-torchrun")),
    "R1": lambda: 'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)' in _script("local-srun"),
    "R5": lambda: "--rdzv_backend=static" in _script("local-accelerate", "sbatch.nodes=1")
    and "--standalone" in _script("local-torchrun", "sbatch.nodes=1"),
    "R6": lambda: '--rdzv-endpoint="$MASTER_ADDR:$MASTER_PORT"' in _script("local-torchrun")
    and '--rdzv-id="$SLURM_JOB_ID"' in _script("local-torchrun"),
    "R8": lambda: "is_host=$(( SLURM_NODEID == 0 ))" in _script("local-accelerate"),
    "Q1": lambda: "'export RANK=$SLURM_PROCID" in _script("local-srun"),
    "Q2": lambda: "'$(id)'" in _script("local-srun", 'args=["$(id)"]'),
    "E3": lambda: "--export=ALL" in _launch(_script("local-srun", "sbatch.export=NONE")),
    "A1": lambda: '--config_file="$NTUI_ACCELERATE_CONFIG"' in _script("local-accelerate")
    and "gpu_ids: all" in _script("local-accelerate"),
    "L1": lambda: "#SBATCH --output=/logs/local-srun-%j.out" in _script("local-srun"),
    "L2": lambda: '"${RANK:=0}"' in _script("local-accelerate", "sbatch.nodes=1", "launcher.nproc-per-node=1"),
    "L5": lambda: "#SBATCH --open-mode=append" in _script("local-srun"),
    "J2": lambda: _script("local-srun").split("set -euo pipefail\n\n", 1)[1].startswith(
        "# [ntui] The job's event journal")
    and launch_begin_line("srun") + "\nsrun " in _launch(_script("local-srun"))
    and _launch(_script("local-srun")).rstrip().endswith("\nntui_journal_launched"),
    "N2": lambda: "--network=disable_rdzv_get" in _launch(_script("local-srun", "nccl.slingshot=true"))
    and "--network=disable_rdzv_get" in _launch(_script("local-srun", "env.FI_CXI_RDZV_PROTO=alt_read"))
    and "--network" not in _launch(_script("local-srun")),
    "N4": lambda: "export NCCL_DEBUG" not in _script("local-srun")
    and "export NCCL_DEBUG=INFO" in _script("local-srun", "nccl.debug=true"),
    "D1": lambda: "export TORCH_FR_DUMP_TEMP_FILE=/logs/local-srun-\"$SLURM_JOB_ID\"-flight-recorder-rank-\n"
    'export TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$TORCH_FR_DUMP_TEMP_FILE"' in _script("local-srun")
    and _script("local-srun").index("TORCH_FR_DUMP_TEMP_FILE=/logs") < _script("local-srun").index(
        "# Preset environment"),
    "D2": lambda: "PYTHONPATH" not in _script("local-torchrun")
    and _launch(_script("local-torchrun", "monitor.allow-attach=true")) == _launch(_script("local-torchrun"))
    and 'export PYTHONPATH="$NTUI_PTRACER_DIR${PYTHONPATH:+:$PYTHONPATH}"' in _script(
        "local-torchrun", "monitor.allow-attach=true", "env.PYTHONPATH=/mine")
    and _script("local-torchrun", "monitor.allow-attach=true", "env.PYTHONPATH=/mine").index("PYTHONPATH=/mine")
    < _script("local-torchrun", "monitor.allow-attach=true", "env.PYTHONPATH=/mine").index("NTUI_PTRACER_DIR="),
    "D3": lambda: all("\nexport PYTHONFAULTHANDLER=1 " in _script(p) for p in ("local-srun", "local-torchrun",
                                                                                "local-accelerate"))
    and _script("local-srun", "env.PYTHONFAULTHANDLER=0").index("export PYTHONFAULTHANDLER=1")
    < _script("local-srun", "env.PYTHONFAULTHANDLER=0").index("export PYTHONFAULTHANDLER=0"),  # the preset's wins
    "N5": lambda: 'export OMP_NUM_THREADS="$SLURM_CPUS_PER_TASK"' in _script("local-srun", "env={}"),
    "N7": lambda: "export PYTHONUNBUFFERED=1 SLURM_UNBUFFEREDIO=1" in _script("local-torchrun"),
    "Q7": lambda: " python -u " in _launch(_script("local-srun", "launcher.python=python -u")),
    "W10": lambda: "mapfile -d '' -t -s $(( 6 + ntui_task * 2 )) -n 2 NTUI_SWEEP" in _script("local-sweep")
    and '--lr "${NTUI_SWEEP[0]}"' in _launch(_script("local-sweep")),
    "W11": lambda: "#SBATCH --output=/logs/local-sweep-%A_%a.out" in _script("local-sweep")
    and "--output=/logs/local-sweep-%A_%a-rank-%t.out" in _launch(_script("local-sweep")),
}


def _e1() -> bool:
    from ntui.core.slurm.runner import slurm_env

    env, removed = slurm_env({"PATH": "/bin", "SBATCH_QOS": "x"})
    return "SBATCH_QOS" not in env and "SBATCH_QOS" in removed[0] and env["PATH"] == "/bin"


def _f2() -> bool:
    return True  # covered by test_relative_script_resolves_against_the_file_that_wrote_it


def _v6() -> bool:
    with pytest.raises(PresetError) as exc:
        load_preset("local-srun", ["extends=local-torchrun"])
    return str(exc.value).endswith("(V6)")


def _t7() -> bool:
    from ntui.core.compose.sitecheck import check_requeue
    from tests.support.fakes import FakeRunner, result

    spec, _ = validate(load_preset("local-longrun", ()))
    assert spec is not None
    warned = check_requeue(spec, FakeRunner({"scontrol show config": result(stdout="JobRequeue              = 0\n")}))
    runner_ok = FakeRunner({"scontrol show config": result(stdout="JobRequeue              = 1\n")})
    return [p.rule for p in warned] == ["T7"] and not check_requeue(spec, runner_ok)


def _e4() -> bool:
    """torchrun missing from the inherited PATH warns; a venv activated in setup: (read, not run) provides it."""
    import tempfile
    from pathlib import Path

    from ntui.core.compose.sitecheck import check_launcher

    spec, _ = validate(load_preset("local-torchrun", ()))
    assert spec is not None
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv" / "bin"
        venv.mkdir(parents=True)
        for name in ("torchrun", "python"):
            (venv / name).write_text("#!/bin/sh\n")
            (venv / name).chmod(0o755)
        bare = {"PATH": "/nonexistent"}
        missing = [p.message.split()[0] for p in check_launcher(spec, environ=bare)]
        activated = replace(spec, setup=(f"source {venv.parent}/bin/activate",))
        in_path = check_launcher(spec, environ={"PATH": str(venv)})
        module = check_launcher(replace(spec, setup=("module load pytorch",)), environ=bare)
        return (missing == ["torchrun", "python"] and not check_launcher(activated, environ=bare) and not in_path
                and all("module load" in p.message for p in module) and len(module) == 2)


def _t10() -> bool:
    script = _script("local-longrun")
    launch = _launch(script)
    return ("#SBATCH --signal=B:USR2@40" in script and "#SBATCH --requeue" in script
            and "bash -c 'trap \"\" USR2; exec \"$0\" \"$@\"'" in launch
            and launch.rstrip().endswith("ntui_run_continue") and "python /" not in launch.split(" &\n")[-1]
            and 'scontrol requeue "$SLURM_JOB_ID"' in script
            and "afterany:$me" in _script("local-longrun", "run.continue=chain"))


def _k7() -> bool:
    """Under podman the launch line passes the ranks' variables and the host namespaces, mounts the logs; the
    rendezvous is computed above it, in the batch shell; Apptainer gets --nv only for a GPU job."""
    script = _script("local-torchrun", "container.runtime=podman", "container.image=localhost/t:1")
    launch = _launch(script)
    before = script.split("# Launch:")[0]
    gpu = _launch(_script("local-srun", "container.runtime=apptainer", "container.image=/i.sif",
                          "sbatch.gpus-per-node=2"))
    rocm = _launch(_script("local-srun", "container.runtime=apptainer", "container.image=/i.sif",
                           "sbatch.gpus-per-node=2", 'container.options=["--rocm"]'))
    return ('"$0" run --name "$n" --replace "$@"' in launch
            and "podman --rm --net host --ipc host --pid host -e 'SLURM*' -e 'NTUI*' -e MASTER_ADDR -e MASTER_PORT"
            in launch
            and "-v /logs:/logs" in launch and "MASTER_ADDR=$(scontrol" in before and "scontrol" not in launch
            and "apptainer exec --nv" in gpu and "--nv" not in rocm
            and "--nv" not in _launch(_script("local-srun", "container.runtime=apptainer", "container.image=/i.sif")))


GUARANTEED.update({"E1": _e1, "E4": _e4, "F2": _f2, "V6": _v6, "T7": _t7, "T10": _t10, "K7": _k7})


#: A script per H rule (ntui check SCRIPT), each carrying the one mistake its rule names.
_H_SCRIPTS = {
    "H1": "# note\n#!/bin/bash\n#SBATCH -N 1\nsrun python t.py\n",
    "H2": "#!/bin/bash\n#SBATCH -N 1\nmodule load x\n#SBATCH -t 10\nsrun python t.py\n",
    "H3": "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
          "srun torchrun --nnodes=2 --rdzv_id '$SLURM_JOB_ID' t.py\n",
    "H4": "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\nsrun torchrun --node_rank $SLURM_NODEID t.py\n",
    "H5": "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\nsrun torchrun --nproc_per_node=4 t.py\n",
    "H6": "#!/bin/bash\n#SBATCH -N 1\nexport MASTER_PORT=29500\nsrun python t.py\n",
    "H7": "#!/bin/bash\n#SBATCH -N 1\nsrun python t.py --data $NOWHERE\n",
    "H8": "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\nsrun torchrun --nnodes=4 t.py\n",
    "H9": "#!/bin/bash\n#SBATCH -N 2\ntorchrun --nproc_per_node=4 t.py\n",
    "H10": "#!/bin/bash\n#SBATCH -N 1\nMASTER_PORT=$((15000 + SLURM_JOB_ID % 1000))\nsrun python t.py\n",
    "H11": "#!/bin/bash\n#SBATCH -N 1\nsrun python t.py | tee run.log\n",
    "H12": "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
           "srun torchrun --nnodes=2 --rdzv_conf \"rdzv_backend=c10d\" t.py\n",
    "H13": "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n"
           "srun python t.py --devices 4\n",
    "H14": "#!/bin/bash\n#SBATCH -N 1\nsrun \"run.sh 10.0.0.1\"\n",
    "H15": "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
           "srun torchrun --nnodes=2 --master_addr 10.0.0.5 t.py\n",
    "H16": "#!/bin/bash\n#SBATCH -N 1\nsrun t.py\n",
    "H17": "#!/bin/bash\n#SBATCH -N 1\nsrun bash -c \"echo one\nfor i in 1 2; do\n  echo $i\"\ndone\n",
}


def _h(rule_id: str) -> Callable[[], bool]:
    def holds() -> bool:
        from ntui.core.compose.scriptcheck import check_script
        from ntui.core.compose.scriptread import read_script

        found = {f.rule for f in check_script(read_script(_H_SCRIPTS[rule_id], "h.sh"))}
        clean = {f.rule for f in check_script(read_script(
            "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
            "srun torchrun --nnodes=$SLURM_JOB_NUM_NODES --rdzv_id=\"$SLURM_JOB_ID\" t.py\n", "ok.sh"))}
        return rule_id in found and not clean
    return holds


GUARANTEED.update({rule_id: _h(rule_id) for rule_id in _H_SCRIPTS})


def test_every_guarantee_is_checked() -> None:
    assert {r.id for r in RULES if r.check is None} <= set(GUARANTEED)


@pytest.mark.parametrize("rule_id", sorted(GUARANTEED))
def test_guarantee_holds(rule_id: str) -> None:
    assert GUARANTEED[rule_id]()


def test_docs_are_generated_from_the_table() -> None:
    doc = (REPO / "docs" / "rules.md").read_text()
    assert doc == markdown(RULES), "run: python -m ntui.core.compose.rules --markdown"
    assert readme_section(RULES) in (REPO / "README.md").read_text(), "run: python -m ntui.core.compose.rules --readme"
    for r in RULES:
        assert f"| {r.id} |" in markdown(RULES) and r.source


def test_cli_prints_the_docs() -> None:
    res = subprocess.run([sys.executable, "-m", "ntui.core.compose.rules", "--markdown"], capture_output=True,
                         text=True, cwd=REPO, timeout=60)
    assert res.returncode == 0 and res.stdout == markdown(RULES)


# ------------------------------------------------------------------ the numbered items of issue 11


def test_relative_script_resolves_against_the_file_that_wrote_it(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    child = other / "child.yaml"
    child.write_text("extends: perlmutter-torchrun\nsbatch: {nodes: 1}\n")
    spec, _ = validate(load_preset(str(child)))
    assert spec is not None and spec.script == str(REPO / "examples" / "ddp_check.py")
    # A script the child sets itself is taken from the child's directory, existing or not.
    child.write_text("extends: perlmutter-torchrun\nscript: train.py\n")
    spec, problems = validate(load_preset(str(child)))
    assert spec is not None and spec.script == str(other / "train.py")
    f1 = [p for p in problems if p.rule == "F1"]
    assert f1 and not f1[0].is_error and blocks_submit(f1[0])


def test_submit_refuses_a_missing_script(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "ntui", "submit", "local-srun", "--set", "script=/nonexistent/ntui/x.py",
         "--set", f"logs.dir={tmp_path}"],
        capture_output=True, text=True, cwd=REPO, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert res.returncode == 2, res.stderr
    assert "does not exist on this host" in res.stderr and "(F1)" in res.stderr and "not submitted" in res.stderr


@pytest.mark.parametrize(("setting", "rule"), [("sbatch.account=yes", "V3"), ("sbatch.requeue=now", "V3"),
                                             ("sbatch.exclusive=user", ""), ("sbatch.requeue=true", "")])
def test_flags_and_values(setting: str, rule: str) -> None:
    spec, problems = validate(load_preset("local-srun", [setting]))
    if rule:
        assert spec is None and any(p.rule == rule and p.field == setting.split("=")[0] for p in problems)
    else:
        assert spec is not None, [str(p) for p in problems]
        key, _, value = setting.partition("=")
        line = f"#SBATCH --{key.split('.')[1]}" + ("" if value == "true" else f"={value}")
        assert line + "\n" in render(spec)


@pytest.mark.parametrize("option", ["gres-flags=enforce-binding", "threads-per-core=1", "extra-node-info=1:1"])
def test_options_wrapped_in_the_table_are_known(option: str) -> None:
    spec, problems = validate(load_preset("local-srun", [f"sbatch.{option}"]))
    assert spec is not None, [str(p) for p in problems]


@pytest.mark.parametrize("value", ["yes", "true"])
def test_job_name_yes_is_not_dropped(value: str) -> None:
    _, problems = validate(load_preset("local-srun", [f"sbatch.job-name={value}"]))
    assert any(p.rule == "V3" and p.field == "sbatch.job-name" for p in problems)
    spec, _ = validate(load_preset("local-srun", [f'sbatch.job-name="{value}"']))
    assert spec is not None and spec.job_name == value


@pytest.mark.parametrize(("text", "rule"), [("010", "V4"), ("0x10", "V4"), ("2:4", "V4"), ("1_0", "V4"), ("0o10", "")])
def test_yaml11_integers_refused(tmp_path: Path, text: str, rule: str) -> None:
    p = tmp_path / "p.yaml"
    p.write_text(f"extends: local-srun\nsbatch:\n  cpus-per-task: {text}\n")
    spec, problems = validate(load_preset(str(p)))
    assert spec is None
    assert any(p.rule == rule and str(p).startswith(f"{tmp_path}/p.yaml:3: sbatch.cpus-per-task:")
               for p in problems), [str(p) for p in problems]
    # The same through --set, and in a GPU count (2:4 is not TYPE:COUNT).
    _, problems = validate(load_preset("local-srun", [f"sbatch.cpus-per-task={text}"]))
    assert any(p.field == "sbatch.cpus-per-task" and p.is_error for p in problems)
    _, problems = validate(load_preset("local-srun", [f"sbatch.gpus-per-node={text}"]))
    assert any(p.field == "sbatch.gpus-per-node" and p.is_error for p in problems)


def test_false_and_null_drop_inherited_options(tmp_path: Path) -> None:
    p = tmp_path / "p.yaml"
    p.write_text("extends: perlmutter-srun\nsbatch: {gpus-per-node: null, ntasks-per-node: 2, qos: false,"
                 " image: false, constraint: null}\ncontainer: {runtime: none}\nenv: {OMP_NUM_THREADS: null}\n")
    spec, problems = validate(load_preset(str(p)))
    assert spec is not None, [str(x) for x in problems]
    options = {d.option for d in spec.directives}
    assert not options & {"gpus-per-node", "qos", "image", "constraint"}
    assert spec.gpus_per_node == 0 and dict(spec.env) == {}


def test_image_false_with_shifter_is_refused() -> None:
    _, problems = validate(load_preset("perlmutter-srun", ["sbatch.image=false"]))
    assert any(p.rule == "K1" for p in problems)


@pytest.mark.parametrize(
    ("style", "gpus_per_node"),
    [("gpus-per-node=4", 4), ("gpus-per-node=a100:4", 4), ("gres=gpu:4", 4), ("gres=gpu:a100:4", 4),
     ("gres=gpu:a100:4,nvme:1", 4)],
)
def test_every_gpu_style_counts(style: str, gpus_per_node: int) -> None:
    spec, problems = validate(load_preset("local-srun", [f"sbatch.{style}", "sbatch.ntasks-per-node=4"]))
    assert spec is not None and spec.gpus_per_node == gpus_per_node, [str(p) for p in problems]
    assert "--gpu-bind=none" in _launch(render(spec))


def test_accelerate_one_by_one_and_cpu_two_nodes() -> None:
    spec, _ = validate(load_preset("local-accelerate", ["sbatch.nodes=1", "launcher.nproc-per-node=1"]))
    assert spec is not None and spec.accelerate_device == "single" and spec.world_size == 1
    _, problems = validate(load_preset("local-accelerate", ["launcher.cpu=true", "launcher.nproc-per-node=1"]))
    assert any(p.rule == "A2" for p in problems)


def test_accelerate_cpu_false_keeps_the_multi_process_launcher() -> None:
    spec, problems = validate(load_preset("local-accelerate", ["launcher.cpu=false"]))
    assert spec is not None and spec.accelerate_device == "multi_gpu", [str(p) for p in problems]


def test_python_words_are_split() -> None:
    spec, _ = validate(load_preset("local-torchrun", ["launcher.python=python -u -X dev"]))
    assert spec is not None and spec.python_argv == ("python", "-u", "-X", "dev")


def test_master_port_formula_stays_below_ephemeral_range() -> None:
    from ntui.core.compose.rules import EPHEMERAL_PORTS, PORT_BASE, PORT_SPAN

    assert PORT_BASE >= 1024
    assert PORT_BASE + PORT_SPAN <= EPHEMERAL_PORTS.start  # noqa: SIM300
    assert f"$(( {PORT_BASE} + SLURM_JOB_ID % {PORT_SPAN} ))" in _script("local-srun")


# ------------------------------------------------------------------ a user rendezvous configuration (R13)


@pytest.mark.parametrize(
    ("extra", "pairs", "rest"),
    [
        (["--rdzv-conf=timeout=900"], (("timeout", "900"),), ()),
        (["--rdzv_conf", "join_timeout=600,read_timeout=120"], (("join_timeout", "600"), ("read_timeout", "120")),
         ()),
        # torch strips keys and values; a blank value is no configuration at all.
        (["--max-restarts=1", "--rdzv-conf= a = 1 ,b=2", "--rdzv_conf="], (("a", "1"), ("b", "2")),
         ("--max-restarts=1",)),
        # Several options: every key kept, a repeated key keeps its last value (torch's rule within one value).
        (["--rdzv-conf=a=1,b=2", "--log-dir", "/x", "--rdzv_conf", "a=3"], (("a", "3"), ("b", "2")),
         ("--log-dir", "/x")),
        (["--rdzv-conf=store_url=x=y"], (("store_url", "x=y"),), ()),
        (["--rdzv-config=a=1"], (), ("--rdzv-config=a=1",)),
    ],
)
def test_split_rdzv_conf(extra: list[str], pairs: tuple[tuple[str, str], ...], rest: tuple[str, ...]) -> None:
    conf = split_rdzv_conf("torchrun", extra)
    assert conf == RdzvConf(pairs, rest, ())
    assert conf.text == ",".join(f"{k}={v}" for k, v in pairs)


@pytest.mark.parametrize(
    ("extra", "index", "words"),
    [
        (["--rdzv-conf=timeout"], 0, "'timeout' has no value"),
        (["--rdzv-conf=timeout="], 0, "'timeout' has no value"),
        (["--rdzv_conf", "=5"], 1, "empty key"),
        (["--rdzv-conf=a=1,"], 0, "empty key"),
        (["--rdzv-conf=a=1,,b=2"], 0, "empty key"),
        (["--max-restarts=1", "--rdzv_conf"], 1, "needs a value"),
        (["--rdzv-conf", "--max-restarts=1"], 0, "needs a value"),
        (["--rdzv_conf", "join_timeout=60, is_host=0"], 1, "is_host is ntui's"),
    ],
)
def test_split_rdzv_conf_refuses(extra: list[str], index: int, words: str) -> None:
    conf = split_rdzv_conf("torchrun", extra)
    assert [i for i, _ in conf.errors] == [index], conf.errors
    assert words in conf.errors[0][1]
    assert "is_host" not in dict(conf.pairs)


def test_merge_rdzv_conf_puts_ntui_last() -> None:
    assert merge_rdzv_conf("timeout=900,a=b", "is_host=1") == "timeout=900,a=b,is_host=1"
    assert merge_rdzv_conf("", "is_host=1") == "is_host=1"
    assert merge_rdzv_conf("timeout=900") == "timeout=900"


@pytest.mark.parametrize("launcher", ["local-torchrun", "local-accelerate"])
def test_user_rdzv_conf_refused_with_file_line_and_field(launcher: str, tmp_path: Path) -> None:
    p = tmp_path / "p.yaml"
    p.write_text(f"extends: {launcher}\nlauncher:\n  extra-args:\n    - --rdzv_conf\n    - timeout=900,is_host=1\n"
                 "    - --rdzv-conf=read_timeout\n")
    spec, problems = validate(load_preset(str(p)))
    assert spec is None
    r13 = sorted(str(x) for x in problems if x.rule == "R13")
    assert len(r13) == 2 and all(x.endswith("(R13)") for x in r13), r13
    assert r13[0].startswith(f"{p}:5: launcher.extra-args.1: --rdzv_conf: is_host is ntui's"), r13
    assert r13[1].startswith(f"{p}:6: launcher.extra-args.2: --rdzv-conf: 'read_timeout' has no value"), r13
    assert not any(x.rule == "R11" for x in problems)


@pytest.mark.parametrize("option", ["--rdzv-conf=timeout=900", "--rdzv_conf=timeout=900"])
@pytest.mark.parametrize("launcher", ["local-torchrun", "local-accelerate"])
def test_user_rdzv_conf_is_accepted_and_merged(launcher: str, option: str) -> None:
    script = _script(launcher, f'launcher.extra-args=["{option}"]')
    assert "export NTUI_RDZV_CONF=timeout=900\n" in script
    assert "rdzv-conf=timeout" not in _launch(script) and "rdzv_conf=timeout" not in _launch(script)
    spelling = "--rdzv-conf" if launcher == "local-torchrun" else "--rdzv_conf"
    assert f'{spelling}="$NTUI_RDZV_CONF,is_host=$(( SLURM_NODEID == 0 ))"' in _launch(script)


@pytest.mark.parametrize("option", ["--rdzv-endpoint=nid002:1", "--rdzv_backend=static", "--nnodes=3",
                                    "--node_rank=1", "--no-python"])
def test_r11_still_refuses_other_torchrun_options(option: str) -> None:
    _, problems = validate(load_preset("local-torchrun", [f'launcher.extra-args=["{option}"]']))
    assert any(p.rule == "R11" for p in problems), [str(p) for p in problems]
