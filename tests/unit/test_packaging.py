"""The wheel carries the shipped presets and the check program; they are found when installed. Test and demo
scaffolding (fakes, canned data, screenshot scenes: ``tests/support``) is not in it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        check=True, timeout=300, capture_output=True,
    )
    (whl,) = out.glob("ntui-*.whl")
    return whl


def test_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for preset in ("local-srun", "local-torchrun", "local-accelerate",
                   "perlmutter-srun", "perlmutter-torchrun", "perlmutter-accelerate"):
        assert f"ntui/_data/presets/{preset}.yaml" in names
    assert "ntui/_data/examples/ddp_check.py" in names
    assert "ntui/core/compose/render.py" in names


def test_installed_layout_finds_presets_and_script(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    code = "import sys; from ntui.cli import run; sys.exit(run(sys.argv[1:]))"
    listing = subprocess.run([sys.executable, "-c", code, "presets", "--paths"], cwd=elsewhere, env=env,
                             capture_output=True, text=True, timeout=60, check=True)
    assert str(site / "ntui" / "_data" / "presets" / "local-torchrun.yaml") in listing.stdout
    script = subprocess.run([sys.executable, "-c", code, "render", "local-torchrun"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=60, check=True).stdout
    assert f"python {site}/ntui/_data/examples/ddp_check.py" in script


#: What only tests and the screenshot tooling use; none of it may ship.
SCAFFOLDING = re.compile(
    r"^(?:class (?:Fake\w*|CannedStream|FrozenClock|DemoHistory|\w*Host)\b|def (?:result|demo_\w+|settle\w*)\()",
    re.MULTILINE,
)


def test_wheel_has_no_test_or_demo_scaffolding(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    assert "ntui/core/slurm/runner.py" in names and "ntui/core/gpu/stream.py" in names
    assert not [n for n in names if "screenshots" in n or n.startswith(("tests/", "ntui/tests/"))]
    leaks = {n: SCAFFOLDING.findall(archive.read(n).decode()) for n in names if n.endswith(".py")}
    assert {n: found for n, found in leaks.items() if found} == {}
    # the test itself can fail: the support package does define what it looks for
    support = Path(REPO, "tests", "support")
    assert SCAFFOLDING.search((support / "fakes.py").read_text())
    assert SCAFFOLDING.search((support / "demo.py").read_text())


def test_installed_package_has_no_fakes(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    code = (
        "import importlib.util as u, ntui.core.slurm.runner as r, ntui.core.gpu.stream as g\n"
        "print(sorted(n for n in ('FakeRunner', 'FakeCall', 'FakeRunnerUnmatched', 'result') if hasattr(r, n)),"
        " hasattr(g, 'CannedStream'), u.find_spec('ntui.screenshots') is not None,"
        " u.find_spec('ntui.ui.screenshots_jobs') is not None)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "[] False False False"
