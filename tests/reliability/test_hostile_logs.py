"""Hostile log content is shown inert: nothing reaches the terminal that it would interpret.

Core level: :class:`FileTail` + :func:`clean_line` turn binary data, invalid UTF-8, a 10 MB line and
escape sequences (cursor moves, screen clears, window title, OSC 52 clipboard, DCS, 8-bit C1 controls,
bell, backspace) into text with no ESC, no C0 control but tab, no C1 control, and bounded length.
CLI level: ``ntui logs JOBID`` (the job known from a history entry pointing at a temp dir) prints them
without a single ESC byte.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ntui.core.logs.tail import CHUNK_SIZE, FileTail
from ntui.core.records.history import History
from ntui.core.textsafe import DISPLAY_CAP, clean_line
from tests.reliability.conftest import ntui_env, run_ntui

HOSTILE_LINES: dict[str, bytes] = {
    "clear-screen": b"before \x1b[2J\x1b[H after",
    "cursor-moves": b"x\x1b[10;20Hy\x1b[5Az\x1b[?25l\x1b[?1049h",
    "title": b"t \x1b]0;pwned\x07 t",
    "title-st": b"t \x1b]2;pwned\x1b\\ t",
    "osc52-clipboard": b"c \x1b]52;c;cm0gLXJmIH4=\x07 c",
    "osc8-link": b"\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "dcs": b"d \x1bP+q544e\x1b\\ d",
    "c1-csi": "e \u009b2J e".encode(),
    "c1-osc": "f \u009d0;pwned\u0007 f".encode(),
    "bell-backspace": b"bell\x07\x07 back\x08\x08\x08space del\x7f",
    "unterminated-osc": b"u \x1b]0;never terminated",
    "lone-esc": b"lone \x1b",
    "c0": bytes(range(0, 32)).replace(b"\n", b"").replace(b"\r", b""),
    "invalid-utf8": b"bad \xff\xfe\xc3\x28 \xed\xa0\x80 end",
    "binary": bytes(range(256)).replace(b"\n", b""),
    "progress-cr": b"10%\r50%\r\x1b[2K100%",
}
_FORBIDDEN = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
BIG = 10 * 1024 * 1024


def _assert_inert(text: str) -> None:
    bad = _FORBIDDEN.search(text)
    assert bad is None, f"control character {bad.group()!r} survived in {text[:200]!r}"


@pytest.mark.parametrize("name", sorted(HOSTILE_LINES))
def test_clean_line_is_inert(name: str) -> None:
    text = clean_line(HOSTILE_LINES[name] + b"\n")
    _assert_inert(text)
    assert len(text) <= DISPLAY_CAP + 40


def _write_log(path: Path) -> None:
    with open(path, "wb") as fh:
        for name, raw in HOSTILE_LINES.items():
            fh.write(f"<{name}> ".encode() + raw + b"\n")
        fh.write(b"<big> " + b"A\x1b[2J" * (BIG // 5) + b" tail-of-big\n")
        fh.write(b"<last> done\n")


def test_file_tail_of_hostile_log_is_inert_and_bounded(tmp_path: Path) -> None:
    path = tmp_path / "hostile.out"
    _write_log(path)
    tail = FileTail(path, window=100)
    update = tail.poll()
    assert update.exists
    # bounded work, whatever the machine's speed: one open, one stat, and each byte of the window's lines read at
    # most twice (scanned back for the line starts, then read forward), never the whole file again per line
    assert (tail.opens, tail.stats) == (1, 1)
    assert tail.bytes_read <= 2 * path.stat().st_size + CHUNK_SIZE, tail.bytes_read
    lines = tail.window
    assert lines[-1] == "<last> done"
    for line in lines:
        _assert_inert(line)
        assert len(line) <= DISPLAY_CAP + 40, len(line)
    big = next(line for line in lines if line.startswith("<big>"))
    assert "bytes]" in big  # cut with "… [+N bytes]"
    assert any(line.startswith("<title>") and "pwned" not in line for line in lines)


def test_ntui_logs_prints_hostile_log_inert(tmp_path: Path) -> None:
    home = tmp_path / "home"
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    history = History(home / "state" / "ntui" / "history.sqlite3")
    history.record_intent(token="t-hostile", preset="local-srun", preset_path=None, overrides=(),
                          job_name="evil", launcher="srun", nodes=1, world_size=2, log_dir=str(log_dir),
                          log_stem="evil", script="")
    history.record_submitted("t-hostile", "4242", None, None)
    history.close()
    _write_log(log_dir / "evil-4242.out")
    (log_dir / "evil-4242-rank-1.out").write_bytes(b"".join(HOSTILE_LINES.values()) + b"\n")
    env = ntui_env(home)
    for args in (("logs", "4242"), ("logs", "4242", "--rank", "1"), ("logs", "4242", "-n", "3")):
        res = run_ntui(*args, env=env)
        assert res.returncode == 0, res.stderr.decode(errors="replace")
        assert b"\x1b" not in res.stdout and b"\x07" not in res.stdout and b"\x08" not in res.stdout
        _assert_inert(res.stdout.decode("utf-8").replace("\n", " "))
        assert b"Traceback" not in res.stderr
    assert b"<last> done" in run_ntui("logs", "4242", env=env).stdout


HOSTILE_NAME = "x\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cm0gLXJm\x07y"


def _squeue_line(job_id: str, name: str) -> str:
    from ntui.core.slurm.squeue import SQUEUE_FIELDS, SQUEUE_SEPARATOR

    values = {"JobID": job_id, "ArrayJobID": job_id, "ArrayTaskID": "N/A", "Name": name, "StateCompact": "PD",
              "State": "PENDING", "Reason": "JobHeldUser", "TimeUsed": "0:00", "TimeLimit": "10:00",
              "NumNodes": "1", "UserName": "someone"}
    return SQUEUE_SEPARATOR.join(values.get(f, "") for f in SQUEUE_FIELDS) + SQUEUE_SEPARATOR


def test_ntui_jobs_prints_hostile_job_names_inert(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from ntui import cli
    from ntui.cli import jobs as cli_jobs
    from tests.support.fakes import FakeRunner, result

    runner = FakeRunner({"squeue": result(stdout=_squeue_line("901", HOSTILE_NAME) + "\n")})
    monkeypatch.setattr(cli_jobs, "cli_runner", lambda: runner)
    assert cli.run(["jobs", "--all"]) == 0
    out = capsys.readouterr().out
    assert "901" in out
    assert "\x1b" not in out and "\x07" not in out
