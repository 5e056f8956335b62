"""Malformed presets (``tests/data/presets-bad/`` plus files generated here) are rejected, each with
``file:line`` and the field (or, for a problem with the whole file, what is wrong with it), and
``ntui presets`` with all of them in the user's preset directory still lists the six shipped presets.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ntui import cli
from ntui.cli.compose import load_spec
from ntui.core.paths import user_presets_dir
from tests.reliability.conftest import REPO, ntui_env, run_ntui

CORPUS = REPO / "tests" / "data" / "presets-bad"
SHIPPED = ("local-accelerate", "local-srun", "local-torchrun",
           "perlmutter-accelerate", "perlmutter-srun", "perlmutter-torchrun")

# file -> (line, field); line None = a problem with the whole file, where "field" is what the message says.
EXPECTED: dict[str, tuple[int | None, str]] = {
    "binary.yaml": (None, "binary file"),
    "comments-only.yaml": (1, "empty preset"),
    "cycle-a.yaml": (2, "extends"),
    "cycle-b.yaml": (1, "extends"),
    "cycle-self.yaml": (2, "extends"),
    "empty.yaml": (1, "empty preset"),
    "extends-missing.yaml": (2, "extends"),
    "huge.yaml": (None, "file is larger than"),
    "invalid-utf8.yaml": (4, "not valid UTF-8"),
    "list-for-mapping-sbatch.yaml": (4, "sbatch"),
    "mapping-for-list-args.yaml": (5, "args"),
    "nested-args.yaml": (5, "args.1"),
    "reserved-sbatch-output.yaml": (5, "sbatch.output"),
    "syntax-bad-indent.yaml": (4, "YAML syntax error"),
    "syntax-unclosed-flow.yaml": (5, "YAML syntax error"),  # the unclosed `[` (the parser notices on line 6)
    "tabs.yaml": (3, "YAML syntax error"),
    "top-level-list.yaml": (1, "expected a YAML mapping"),
    "top-level-scalar.yaml": (1, "expected a YAML mapping"),
    "unknown-launcher-key.yaml": (4, "launcher.nproc_per_node"),
    "unknown-sbatch-option.yaml": (5, "sbatch.nodez"),
    "unknown-top-key.yaml": (4, "scirpt"),
    "wrong-type-env.yaml": (5, "env"),
    "wrong-type-launcher.yaml": (2, "launcher"),
    "wrong-type-nodes.yaml": (5, "sbatch.nodes"),
    "wrong-type-time.yaml": (5, "sbatch.time"),
}
# Broken already when loaded (YAML, encoding, size, extends); the rest only fail validation.
LOAD_BROKEN = {"binary.yaml", "comments-only.yaml", "cycle-a.yaml", "cycle-b.yaml", "cycle-self.yaml",
               "empty.yaml", "extends-missing.yaml", "huge.yaml", "invalid-utf8.yaml", "syntax-bad-indent.yaml",
               "syntax-unclosed-flow.yaml", "tabs.yaml", "top-level-list.yaml", "top-level-scalar.yaml"}


def _install_corpus(target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for f in CORPUS.iterdir():
        shutil.copy(f, target / f.name)
    with open(target / "huge.yaml", "w") as fh:  # 2.4 MB, generated rather than committed
        fh.write("name: huge\nlauncher: {type: srun}\nscript: train.py\nargs:\n")
        fh.writelines(f'  - "--arg-{i:07d}"\n' for i in range(120_000))
    return target


def test_corpus_is_complete() -> None:
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(set(EXPECTED) - {"huge.yaml"})
    assert b"\0" in (CORPUS / "binary.yaml").read_bytes()


def _params() -> list[object]:
    return sorted(EXPECTED)


@pytest.mark.parametrize("name", _params())
def test_rejected_with_file_line_and_field(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    directory = _install_corpus(user_presets_dir())
    path = directory / name
    line, field = EXPECTED[name]
    _, spec, problems = load_spec(str(path), ())
    errors = [str(p) for p in problems if p.is_error]
    assert spec is None and errors
    if line is None:
        wanted = f"{path}: {field}"
        assert any(e.startswith(wanted) for e in errors), errors
    else:
        assert any(e.startswith(f"{path}:{line}: {field}") for e in errors), (f"want {path}:{line}: {field}", errors)
    assert cli.run(["check", str(path)]) == 2
    assert (f"{path}:{line}: " if line else f"{path}: ") in capsys.readouterr().err


def test_ntui_presets_lists_shipped_and_marks_broken(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _install_corpus(home / "config" / "ntui" / "presets")
    res = run_ntui("presets", env=ntui_env(home))
    out = res.stdout.decode()
    assert res.returncode == 0, res.stderr.decode()
    rows = {line.split()[0]: line for line in out.splitlines()}
    for name in SHIPPED:
        assert name in rows and " shipped " in rows[name] and "BROKEN" not in rows[name], out
    for f in EXPECTED:
        assert Path(f).stem in rows, f
    for f in LOAD_BROKEN:
        assert "BROKEN: " in rows[Path(f).stem], rows[Path(f).stem]


def test_ntui_presets_marks_presets_that_fail_validation(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _install_corpus(home / "config" / "ntui" / "presets")
    rows = {line.split()[0]: line for line in run_ntui("presets", env=ntui_env(home)).stdout.decode().splitlines()}
    unmarked = sorted(Path(f).stem for f in EXPECTED if "BROKEN: " not in rows[Path(f).stem])
    assert not unmarked


def test_alias_bomb_is_refused_at_its_first_alias(tmp_path: Path) -> None:
    # 10**8 strings if expanded; refused at the first alias event, before anything is built (not a matter of speed)
    lines = ['l0: &l0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 8)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    res = subprocess.run([sys.executable, "-m", "ntui", "check", str(bomb)], capture_output=True, timeout=120,
                         cwd=REPO, env=ntui_env(tmp_path / "home"))
    assert res.returncode == 2
    assert f"{bomb}:2: YAML aliases (*name) are not allowed in presets" in res.stderr.decode(), res.stderr
