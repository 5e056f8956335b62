"""ShellCheck (``shellcheck -S warning``) on every script ntui generates: each shipped preset as submitted and
as its golden file, and the variations ``test_render.py`` renders (other launch lines, the GPU sampler, user
rendezvous options, hostile values, setups).

ShellCheck is a Debian package (``scripts/bootstrap`` installs it). Without it the test is skipped on a
developer's machine, but fails in CI (``CI``) and in ``scripts/test`` (``NTUI_REQUIRE_CLUSTER``): a check that
silently does not run is no check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.unit.test_render import GOLDEN, SHIPPED, render_preset

#: (preset, overrides): the variations of tests/unit/test_render.py, so that each launch line, the sampler and
#: the escaping are checked in every shape they are rendered in.
VARIATIONS: list[tuple[str, tuple[str, ...]]] = [
    ("local-torchrun", ("sbatch.nodes=1",)),  # --standalone
    ("local-torchrun", ("launcher.master-port=29555",)),
    ("local-torchrun", ('launcher.extra-args=["--rdzv_conf", "join_timeout=600,note=$(touch canary) *", '
                        '"--max-restarts=2"]',)),
    ("local-accelerate", ('launcher.extra-args=["--rdzv_conf", "join_timeout=600", "--max-restarts=2"]',)),
    ("local-srun", ('args=["$(touch /tmp/ntui-pwned)", "a\'b", "`id`", "x; rm -rf /"]', "env.EVIL=$(reboot)",
                    "sbatch.job-name=my job #1")),
    ("local-srun", ("sbatch.gpus-per-node=2",)),
    ("local-srun", ("sbatch.gres=gpu:a100:2",)),
    ("local-srun", ("sbatch.gpus-per-task=1", "sbatch.ntasks=4")),
    ("local-srun", ("sbatch.nodes=1", "sbatch.gpus=2")),
    ("local-srun", ("sbatch.gpus-per-node=2", "monitor.interval=30")),
    ("local-srun", ("sbatch.gpus-per-node=2", "monitor.gpu=false")),
    ("local-srun", ("monitor.gpu=true",)),  # a CPU job that asked for the sampler (M2)
    ("local-torchrun", ("monitor.allow-attach=true", "env.PYTHONPATH=/mine")),  # the ranks' sitecustomize (D2)
    ("local-torchrun", ("sbatch.gpus-per-node=2", "launcher.nproc-per-node=2", 'setup=["trap \\"echo mine\\" EXIT"]',
                        "env.PATH=/opt/sim/bin:/usr/bin")),
    ("local-accelerate", ("sbatch.gpus-per-node=2", "launcher.nproc-per-node=2")),
    ("local-longrun", ("run.continue=chain",)),  # the long-run lines in each mode and under each launcher (T10)
    ("local-longrun", ("run.continue=none", "sbatch.time=04:00:00", "run.warning=600")),  # preemption told apart
    ("local-longrun", ("launcher.type=srun", "sbatch.ntasks-per-node=2")),
    ("local-longrun", ("launcher.type=accelerate", "sbatch.gpus-per-node=2", "launcher.nproc-per-node=2",
                       'setup=["trap \\"echo mine\\" EXIT"]')),
]
# Every launcher under every container runtime (core/compose/containers.py), with a mount, a workdir and options.
VARIATIONS += [
    (preset, (f"container.runtime={runtime}", "container.image=reg.io#org/img:1 x", 'container.mounts=["/d a:/d"]',
              "container.workdir=/w", 'container.options=["--x=$(id)"]', "sbatch.gpus-per-node=2"))
    for preset in ("local-srun", "local-torchrun", "local-accelerate")
    for runtime in ("shifter", "podman-hpc", "podman", "apptainer", "singularity", "pyxis", "charliecloud")
]


def _shellcheck() -> str:
    found = shutil.which("shellcheck")
    if found:
        return found
    if os.environ.get("CI") or os.environ.get("NTUI_REQUIRE_CLUSTER"):
        pytest.fail("shellcheck is not installed (scripts/bootstrap installs the Debian package shellcheck); "
                    "CI and scripts/test require it", pytrace=False)
    pytest.skip("shellcheck is not installed (scripts/bootstrap installs the Debian package shellcheck)")


def _check(script: str, name: str) -> None:
    res = subprocess.run([_shellcheck(), "-S", "warning", "-s", "bash", "-"], input=script, text=True,
                         capture_output=True, timeout=60)
    assert res.returncode == 0, f"shellcheck -S warning on {name}:\n{res.stdout}{res.stderr}"


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_preset_scripts(name: str) -> None:
    _check(render_preset(name), name)


@pytest.mark.parametrize("golden", sorted(GOLDEN.glob("*.sbatch")), ids=lambda p: p.name)
def test_golden_scripts(golden: Path) -> None:
    _check(golden.read_text(), str(golden))


@pytest.mark.parametrize(("preset", "overrides"), VARIATIONS, ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_variations(preset: str, overrides: tuple[str, ...]) -> None:
    _check(render_preset(preset, *overrides), f"{preset} --set {' '.join(overrides)}")


def test_a_warning_fails_the_check() -> None:
    """The check itself works: an unused variable (SC2034, a warning) is reported."""
    with pytest.raises(AssertionError, match="SC2034"):
        _check("#!/bin/bash\nfor i in 1 2; do echo x; done\n", "a loop with an unused variable")
