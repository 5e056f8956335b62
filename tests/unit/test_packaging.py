"""The wheel carries the shipped presets and the check program; they are found when installed."""

from __future__ import annotations

import os
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
    assert "ntui/core/render.py" in names


def test_installed_layout_finds_presets_and_script(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    code = "import sys; from ntui.cli import run; sys.exit(run(sys.argv[1:]))"
    listing = subprocess.run([sys.executable, "-c", code, "presets"], cwd=elsewhere, env=env,
                             capture_output=True, text=True, timeout=60, check=True)
    assert str(site / "ntui" / "_data" / "presets" / "local-torchrun.yaml") in listing.stdout
    script = subprocess.run([sys.executable, "-c", code, "render", "local-torchrun"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=60, check=True).stdout
    assert f"python {site}/ntui/_data/examples/ddp_check.py" in script
