"""The job's event journal (rule J2, ntui.core.jobfiles.journal): the script's lines run by real bash with
``set -euo pipefail``, the GPU sampler's EXIT trap and a setup's own; the reader on cut and garbage lines; the
reader through a held descriptor.

What Slurm does around it (scancel, the time limit, sacct's view) is tested on the dev cluster in
tests/cluster/test_record.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.jobfiles.journal import (
    JournalReader,
    compose_line,
    journal_lines,
    journal_path,
    journal_state,
    launch_begin_line,
    launch_end_line,
    parse_events,
    parse_line,
    read_journal,
)
from tests.support.waits import WAIT_BOUND_S

JOB = "4242"


def _script(log_dir: Path, launch: str, *, setup: str = "true", sampler: bool = True, user_trap: bool = True) -> str:
    lines = ["#!/bin/bash", "set -euo pipefail", *journal_lines(str(log_dir), "job")]
    if sampler:  # what compose/sampler.py sets, then the journal takes it (render.py does the same)
        lines += ["ntui_gpu_sampler_stop() { echo \"sampler stopped rc=$?\" >>\"$OUT\"; }",
                  "trap ntui_gpu_sampler_stop EXIT", compose_line()]
    if user_trap:
        lines.append("trap 'echo \"user trap rc=$?\" >>\"$OUT\"' EXIT")
    lines += [setup, launch_begin_line("srun"), launch, launch_end_line(), ""]
    return "\n".join(lines)


def _run(tmp_path: Path, launch: str, *, kill_after: float | None = None, **kw: object) -> tuple[int, list[str]]:
    log_dir = tmp_path / "logs"
    log_dir.mkdir(exist_ok=True)
    out = tmp_path / "out.txt"
    script = tmp_path / "job.sbatch"
    script.write_text(_script(log_dir, launch, **kw))  # type: ignore[arg-type]
    env = {"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": JOB, "SLURM_JOB_NODELIST": "nid[001-002]",
           "SLURM_JOB_NUM_NODES": "2", "SLURMD_NODENAME": "nid001", "OUT": str(out)}
    stdout = tmp_path / "stdout.txt"
    with open(stdout, "wb") as fh:
        proc = subprocess.Popen(["bash", str(script)], env=env, stdout=fh, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    if kill_after is not None:
        time.sleep(kill_after)
        os.kill(proc.pid, signal.SIGTERM)  # the batch shell only, as scancel's SIGTERM reaches it
    proc.wait(timeout=60)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # what the shell left running (Slurm ends the steps itself)
    assert stdout.read_bytes() == b""  # nothing on the program's output
    traps = out.read_text().splitlines() if out.exists() else []
    return proc.returncode, traps


def _events(tmp_path: Path) -> list[dict[str, object]]:
    text = Path(journal_path(str(tmp_path / "logs"), "job", JOB)).read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_a_job_that_completes_writes_each_event_once_and_keeps_status_0(tmp_path: Path) -> None:
    rc, traps = _run(tmp_path, 'bash -c "exit 0"')
    assert rc == 0
    assert traps == ["user trap rc=0", "sampler stopped rc=0"]  # both traps ran, the last set first
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "launch", "launch-end", "end"]
    alloc = events[0]
    assert (alloc["job"], alloc["nodes"], alloc["nnodes"], alloc["host"], alloc["restart"]) == (
        JOB, "nid[001-002]", 2, "nid001", 0)
    assert events[2]["rc"] == 0 and events[3]["rc"] == 0 and events[3]["phase"] == "after"
    state = read_journal(journal_path(str(tmp_path / "logs"), "job", JOB), JOB)
    assert state is not None and state.final() is not None
    assert (state.final().state, state.final().exit_code) == ("COMPLETED", "0:0")  # type: ignore[union-attr]


def test_a_launch_that_exits_3_ends_the_script_with_3_and_says_so(tmp_path: Path) -> None:
    rc, traps = _run(tmp_path, 'bash -c "exit 3"')
    assert rc == 3  # set -e still ends the script with the launch's status
    assert traps == ["user trap rc=3", "sampler stopped rc=3"]  # $? is the job's status in each trap
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "launch", "launch-end", "end"]
    assert events[2]["rc"] == 3 and events[3]["rc"] == 3 and events[3]["phase"] == "launch"
    state = journal_state(JOB, parse_events(Path(journal_path(str(tmp_path / "logs"), "job", JOB)).read_bytes())[0])
    end = state.final()
    assert end is not None and (end.state, end.exit_code) == ("FAILED", "3:0")


def test_a_signal_during_the_launch_ends_the_shell_at_once_and_is_recorded(tmp_path: Path) -> None:
    rc, traps = _run(tmp_path, "sleep 30", kill_after=1.0)
    assert rc == -signal.SIGTERM  # the shell dies of the signal, as without the journal
    assert traps == ["user trap rc=0", "sampler stopped rc=0"]
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "launch", "end"]
    assert events[2]["rc"] is None and events[2]["sig"] is None and events[2]["phase"] == "launch"
    state = read_journal(journal_path(str(tmp_path / "logs"), "job", JOB), JOB)
    assert state is not None
    cancelled, timeout = state.final(3600), state.final(0)
    assert cancelled is not None and (cancelled.state, cancelled.exit_code) == ("CANCELLED", "0:0")
    assert timeout is not None and timeout.state == "TIMEOUT"  # at or after the limit: the time limit


def test_a_step_killed_by_slurm_just_before_the_shell_reads_as_the_signal(tmp_path: Path) -> None:
    """Slurm ending a job (scancel, the time limit) signals the launch step's tasks and the batch shell; the step
    may die first (srun exits 143) and the shell's SIGTERM come a moment later, inside the EXIT trap: the journal
    waits for it and records the signal, not a failure with status 143 (seen on the loaded dev cluster)."""
    rc, traps = _run(tmp_path, "sh -c 'sleep 0.3; kill -TERM $$'", kill_after=1.0)
    assert rc == -signal.SIGTERM and traps == ["user trap rc=143", "sampler stopped rc=143"]
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "launch", "launch-end", "end"]
    assert events[2]["rc"] == 143 and (events[3]["rc"], events[3]["sig"]) == (None, "TERM")
    state = read_journal(journal_path(str(tmp_path / "logs"), "job", JOB), JOB)
    assert state is not None and state.final(3600) is not None
    assert state.final(3600).state == "CANCELLED"  # type: ignore[union-attr]


def test_a_step_killed_by_a_signal_with_no_signal_to_the_shell_is_a_failure(tmp_path: Path) -> None:
    rc, _ = _run(tmp_path, "sh -c 'kill -TERM $$'")
    assert rc == 143  # set -e, the step's status: what Slurm records as FAILED 143:0
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "launch", "launch-end", "end"] and events[3]["rc"] == 143
    state = read_journal(journal_path(str(tmp_path / "logs"), "job", JOB), JOB)
    assert state is not None and (state.final().state, state.final().exit_code) == ("FAILED", "143:0")  # type: ignore[union-attr]


def test_a_signal_during_the_setup_is_named(tmp_path: Path) -> None:
    rc, _ = _run(tmp_path, "true", setup="sleep 2", kill_after=0.5, user_trap=False)
    assert rc == -signal.SIGTERM
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "signal", "end"]
    assert events[1]["sig"] == "TERM" and events[2]["sig"] == "TERM" and events[2]["phase"] == "setup"


def test_a_setup_that_fails_under_set_e_is_recorded_with_its_status(tmp_path: Path) -> None:
    rc, traps = _run(tmp_path, "true", setup="false", user_trap=False)
    assert rc == 1 and traps == ["sampler stopped rc=1"]
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "end"] and events[1]["rc"] == 1


def test_a_setup_trap_joins_once_the_setup_is_done(tmp_path: Path) -> None:
    """The known gap (J2): a setup that sets its own EXIT trap and then fails inside the setup ran before ntui took
    that trap into its chain, so only the setup's trap runs and the journal has no end (Slurm's answer is the
    record then). The job's status is kept either way."""
    rc, traps = _run(tmp_path, "true", setup="false")
    assert rc == 1 and traps == ["user trap rc=1"]
    assert [e["ev"] for e in _events(tmp_path)] == ["alloc"]


def test_a_setup_signal_trap_of_its_own_is_left_alone(tmp_path: Path) -> None:
    rc, _ = _run(tmp_path, "sleep 3", setup="trap 'echo mine >>\"$OUT\"; exit 7' TERM", kill_after=0.5)
    assert rc == 7  # the setup's TERM trap decided, as it would have without ntui
    assert [e["ev"] for e in _events(tmp_path)] == ["alloc", "launch", "launch-end", "end"]


def test_hostile_values_from_the_environment_stay_json(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    script = tmp_path / "j.sh"
    script.write_text("\n".join(["set -euo pipefail", *journal_lines(str(log_dir), "job"), ""]))
    nasty = 'nid"001\\x\t$(id)`id`\x1b[31m' + "é" * 300
    env = {"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": "12", "SLURM_JOB_NODELIST": nasty, "SLURMD_NODENAME": nasty,
           "SLURM_RESTART_COUNT": "2x", "SLURM_ARRAY_JOB_ID": "11", "SLURM_ARRAY_TASK_ID": "3;x"}  # C locale: bytes
    assert subprocess.run(["bash", str(script)], env=env, timeout=WAIT_BOUND_S).returncode == 0
    files = list(log_dir.iterdir())
    assert [f.name for f in files] == ["job-12.events"]
    lines = files[0].read_bytes().splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["ev"] for e in events] == ["requeue", "alloc", "end"]
    alloc = events[1]
    assert alloc["job"] == "12" and alloc["restart"] == 2 and alloc["array_job"] == "11" and alloc["array_task"] == "3"
    assert alloc["nodes"].startswith('nid"001\\x?$(id)`id`?[31m') and len(alloc["nodes"].encode()) <= 200
    assert all(len(line) < 1024 for line in lines)  # one write each, far below PIPE_BUF


def test_the_reader_skips_garbage_and_keeps_a_cut_last_line() -> None:
    good = b'{"v":1,"ev":"alloc","t":10,"job":"5","restart":0,"nodes":"n1"}\n'
    end = b'{"v":1,"ev":"end","t":70.5,"job":"5","rc":0,"phase":"after"}\n'
    data = good + b"garbage\n" + b'{"v":1,"ev":"end","t":"x","job":"5"}\n' + b'{"v":2,"ev":"end"}\n' + end[:20]
    events, bad, rest = parse_events(data)
    assert [e.kind for e in events] == ["alloc"] and bad == 3 and rest == end[:20]
    events2, bad2, rest2 = parse_events(rest + end[20:])
    assert [e.kind for e in events2] == ["end"] and bad2 == 0 and rest2 == b""
    state = journal_state("5", [*events, *events2])
    assert state.ended and state.elapsed_s == 60 and state.final() is not None
    # a killed writer's cut line with the next event appended to it: the event is still read
    joined = parse_line('{"v":1,"ev":"laun{"v":1,"ev":"end","t":80,"job":"5","rc":2}')
    assert joined is not None and joined.kind == "end" and joined.number("rc") == 2
    assert parse_line("") is None and parse_line("[1, 2]") is None
    assert parse_line('{"v":1,"ev":"alloc","t":true,"job":"5"}') is None  # wrong types


def test_a_requeued_job_is_read_from_its_last_allocation() -> None:
    lines = [
        '{"v":1,"ev":"alloc","t":10,"job":"5","restart":0}',
        '{"v":1,"ev":"end","t":20,"job":"5","rc":null,"sig":null,"phase":"launch"}',
        '{"v":1,"ev":"requeue","t":150,"job":"5","restart":1}',
        '{"v":1,"ev":"alloc","t":150,"job":"5","restart":1}',
    ]
    state = journal_state("5", parse_events(("\n".join(lines) + "\n").encode())[0])
    assert state.allocations == 2 and state.restart == 1 and not state.ended and state.final() is None


def test_the_reader_follows_through_one_held_descriptor(tmp_path: Path) -> None:
    path = tmp_path / "j.events"
    now = [0.0]
    reader = JournalReader(str(path), "5", retry_s=2.0, clock=lambda: now[0])
    assert not reader.poll() and reader.opens == 1  # not there yet (a pending job)
    assert not reader.poll() and reader.opens == 1  # retried only after retry_s
    path.write_bytes(b'{"v":1,"ev":"alloc","t":10,"job":"5","restart":0,"nodes":"n1"}\n{"v":1,"ev":"lau')
    now[0] = 2.0
    assert reader.poll() and reader.opens == 2 and reader.state.started and not reader.state.ended
    with open(path, "ab") as fh:
        fh.write(b'nch","t":11,"job":"5","launcher":"srun"}\n{"v":1,"ev":"end","t":12,"job":"5","rc":0}\n')
    assert reader.poll() and reader.state.ended and reader.state.launch_started == 11
    assert reader.opens == 2  # every later poll was a pread, no open
    assert not reader.poll()
    reader.close()


def test_every_shipped_preset_renders_a_journal_around_its_launch() -> None:
    for name in ("local-srun", "local-torchrun", "local-accelerate"):
        spec, _ = validate(load_preset(name))
        assert spec is not None
        script = render(spec)
        launch = script.split("# Launch:")[1].splitlines()
        assert launch[1] == launch_begin_line(spec.launcher) and launch[-1] == launch_end_line(), name
        assert script.index("ntui_journal_start") < script.index("MASTER_ADDR=")


@pytest.mark.parametrize("name", ["", "a b", "x;y"])
def test_launch_lines_take_plain_launcher_names(name: str) -> None:
    with pytest.raises(ValueError):
        launch_begin_line(name)


def test_a_second_term_while_the_exit_trap_runs_never_cuts_it_short(tmp_path: Path) -> None:
    """Slurm signals a job's processes more than once: a SIGTERM arriving while the journal's EXIT trap ran killed
    the shell there (a time-limited job's journal had no ``end`` once in a full run; here: the chained traps after
    it never ran, the GPU sampler left running). The second SIGTERM comes from the setup's EXIT trap, which the
    journal's trap runs: always inside the trap, so the test does not depend on timing."""
    second_term = "trap 'kill -TERM $$; echo \"user trap rc=$?\" >>\"$OUT\"' EXIT"
    rc, traps = _run(tmp_path, "sleep 30", kill_after=1.0, user_trap=False, setup=second_term)
    assert rc == -signal.SIGTERM  # it dies of the signal, after the traps
    assert traps == ["user trap rc=0", "sampler stopped rc=0"]  # every chained trap ran, the sampler's too
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "launch", "end"] and events[-1]["phase"] == "launch"


def test_a_term_landing_before_the_exit_traps_first_line_is_noted_not_lost(tmp_path: Path) -> None:
    """The step failed (srun 143: Slurm signalled its tasks first) and the shell's own SIGTERM lands after the
    shell began to exit but before the EXIT trap's first line: bash does not run an EXIT trap already running, so
    the shell died with no ``end`` (a 1-minute job at its time limit, once in a full test run). The journal's ERR
    trap takes SIGTERM before the shell exits. A DEBUG trap (``set -T``: in functions too) sends the signal just
    before the EXIT trap's first command, so the test does not depend on timing."""
    at_the_trap = ("set -T\ntrap '[ \"${FUNCNAME[0]:-}\" = ntui_journal_exit ] && [ -z \"${SENT:-}\" ] "
                   "&& { SENT=1; kill -TERM $$; }; :' DEBUG\nsh -c 'exit 143'")
    rc, traps = _run(tmp_path, at_the_trap, user_trap=True)
    assert rc == -signal.SIGTERM and traps == ["user trap rc=143", "sampler stopped rc=143"]
    events = _events(tmp_path)
    assert [e["ev"] for e in events] == ["alloc", "launch", "launch-end", "end"]
    assert events[2]["rc"] == 143 and (events[3]["rc"], events[3]["sig"]) == (None, "TERM")


def test_the_err_trap_is_set_for_the_launch_line_unless_the_setup_set_its_own(tmp_path: Path) -> None:
    """(The launch line here prints the ERR trap: at the top level, where bash shows it.)"""
    print_err = "trap -p ERR >>\"$OUT\""
    (tmp_path / "ntui").mkdir()
    (tmp_path / "own").mkdir()
    rc, traps = _run(tmp_path / "ntui", print_err, user_trap=False)
    assert rc == 0 and traps == ["trap -- 'ntui_journal_hold_term' ERR", "sampler stopped rc=0"]
    rc, traps = _run(tmp_path / "own", print_err, user_trap=False, setup="trap 'echo own >>\"$OUT\"' ERR")
    assert rc == 0 and traps == ["trap -- 'echo own >>\"$OUT\"' ERR", "sampler stopped rc=0"]


def test_a_signal_just_before_the_limit_by_the_journals_clock_is_the_time_limit() -> None:
    """Seen on a loaded 26.05 cluster: a 1-minute job's journal ended 59.4 s after its alloc (the shell starts a
    moment after Slurm does, whose clock the limit runs on); it read as CANCELLED, not TIMEOUT."""
    lines = [
        '{"v":1,"ev":"alloc","t":100.0,"job":"7","restart":0,"nnodes":1,"nodes":"nid002","host":"nid002","pid":1}',
        '{"v":1,"ev":"launch","t":100.1,"job":"7","launcher":"srun"}',
        '{"v":1,"ev":"end","t":159.4,"job":"7","rc":null,"sig":null,"phase":"launch"}',
    ]
    state = journal_state("7", parse_events(("\n".join(lines) + "\n").encode())[0])
    limited, cancelled = state.final(60), state.final(3600)
    assert limited is not None and limited.state == "TIMEOUT"
    assert cancelled is not None and cancelled.state == "CANCELLED"  # far from its limit: a cancel
