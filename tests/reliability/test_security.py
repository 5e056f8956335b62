"""Security: no code path that turns a value into code, and ntui's files are readable by the user only.

* The source of ``ntui/`` is parsed (AST, so comments and strings do not count) for ``shell=True``,
  ``yaml.load``/``yaml.load_all`` without a safe loader (``yaml.unsafe_load``/``full_load`` too),
  ``eval``/``exec``/``compile``, ``os.system``/``os.popen``, ``pickle``/``marshal`` loads. A planted
  sample proves the checker finds each of them.
* ruff's security rules (S) are selected for ``ntui/``.
* The script of a submission (staging and final), ``ntui render -o`` output, the history database and
  its WAL files are mode 0600, the state directory 0700, even under a permissive umask.
"""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ntui import cli
from ntui.core.compose.presets import load_preset
from ntui.core.compose.spec import validate
from ntui.core.jobs.submission import submit_job
from ntui.core.records.history import History
from tests.reliability.conftest import REPO
from tests.support.fakes import FakeRunner, result

SAFE_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"}
BANNED_CALLS = {"eval", "exec", "compile", "__import__"}
BANNED_ATTRS = {("os", "system"), ("os", "popen"), ("os", "execl"), ("os", "execlp"), ("pickle", "loads"),
                ("pickle", "load"), ("marshal", "loads"), ("yaml", "unsafe_load"), ("yaml", "full_load"),
                ("yaml", "unsafe_load_all"), ("yaml", "full_load_all"), ("subprocess", "getoutput"),
                ("subprocess", "getstatusoutput")}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def findings(source: str, filename: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        where = f"{filename}:{node.lineno}"
        for kw in node.keywords:
            if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                yield f"{where}: shell={ast.unparse(kw.value)}"
        func = node.func
        if isinstance(func, ast.Name) and func.id in BANNED_CALLS:
            yield f"{where}: {func.id}()"
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            pair = (func.value.id, func.attr)
            if pair in BANNED_ATTRS:
                yield f"{where}: {pair[0]}.{pair[1]}()"
            if pair in (("yaml", "load"), ("yaml", "load_all")):
                loader = [kw.value for kw in node.keywords if kw.arg == "Loader"] + node.args[1:2]
                if not loader or _name(loader[0]) not in SAFE_LOADERS:
                    yield f"{where}: yaml.{func.attr}() without a safe Loader"


def test_checker_finds_planted_samples() -> None:
    sample = "\n".join([
        "import os, subprocess, yaml",
        "subprocess.run('ls', shell=True)",
        "subprocess.Popen(cmd, shell=flag)",
        "yaml.load(text)",
        "yaml.load(text, Loader=yaml.Loader)",
        "yaml.load(text, Loader=yaml.SafeLoader)  # fine",
        "yaml.safe_load(text)  # fine",
        "eval('1+1')",
        "exec(code)",
        "os.system('id')",
        "# eval( in a comment is fine",
        "'shell=True in a string is fine'",
    ])
    found = list(findings(sample, "sample.py"))
    assert [f.split(": ", 1)[1] for f in found] == [
        "shell=True", "shell=flag", "yaml.load() without a safe Loader", "yaml.load() without a safe Loader",
        "eval()", "exec()", "os.system()"]


def test_no_code_injection_primitives_in_ntui() -> None:
    files = sorted((REPO / "ntui").rglob("*.py"))
    assert len(files) > 20
    bad = [f for path in files for f in findings(path.read_text(), str(path.relative_to(REPO)))]
    assert not bad, "\n".join(bad)


def test_ruff_security_rules_are_on() -> None:
    tomllib = pytest.importorskip("tomllib")
    conf = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert "S" in conf["select"]
    assert not {"S602", "S604", "S605", "S506", "S307", "S301"} & set(conf.get("ignore", []))
    for pattern, ignored in conf.get("per-file-ignores", {}).items():
        assert not pattern.startswith("ntui") or "S" not in ignored, pattern


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0o000)
    yield
    os.umask(old)


def test_scripts_and_history_are_private(tmp_path: Path, loose_umask: None) -> None:
    state = tmp_path / "state" / "ntui"
    history = History(state / "history.sqlite3")
    loaded = load_preset("local-srun", [f"logs.dir={tmp_path / 'logs'}"])
    spec, problems = validate(loaded)
    assert spec is not None, problems
    modes: dict[str, int] = {}

    def sbatch(argv: tuple[str, ...]) -> object:
        script = Path(argv[-1])
        modes["staging"] = _mode(script)
        modes["records"] = max(_mode(p) for p in (state / "records").iterdir())  # the intent, before sbatch
        return result(stdout="777\n")

    runner = FakeRunner({"sbatch": sbatch})  # type: ignore[dict-item]
    job = submit_job(loaded, spec, runner, history)
    assert modes == {"staging": 0o600, "records": 0o600}
    assert _mode(Path(job.script_path)) == 0o600
    assert {_mode(p) for p in (state / "records").iterdir()} == {0o600}
    assert {_mode(p) for p in (state / "index").iterdir()} == {0o600}  # this host's index (and its -wal, -shm)
    assert _mode(state) == _mode(state / "records") == _mode(state / "index") == 0o700
    history.close()
    out = tmp_path / "rendered.sbatch"
    assert cli.run(["render", "local-srun", "-o", str(out)]) == 0
    assert _mode(out) == 0o600
