"""The command runner, error classification, env scrubbing and the fake runner."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

from ntui.core.slurm.runner import (
    ControllerUnreachable,
    JobNotFound,
    SlurmError,
    SlurmNotInstalled,
    SlurmRejected,
    SlurmTimeout,
    SubprocessRunner,
    check,
    classify,
    scrubbed_env,
)
from tests.support.fakes import FakeRunner, FakeRunnerUnmatched, capture, result
from tests.support.waits import WAIT_BOUND_S


def stub(directory: Path, name: str, body: str) -> Path:
    """An executable Python script (shebang = this interpreter; no shell involved)."""
    path = directory / name
    path.write_text(f"#!{sys.executable}\nimport os, sys, time, subprocess\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# ---------------------------------------------------------------- SubprocessRunner, real processes


def test_runs_and_captures(tmp_path: Path) -> None:
    prog = stub(
        tmp_path,
        "fake-squeue",
        "sys.stdout.write('out ' + ' '.join(sys.argv[1:]) + '\\n'); sys.stderr.write('warn\\n'); sys.exit(3)",
    )
    runner = SubprocessRunner()
    res = runner.run([str(prog), "--me", "a b"], timeout=WAIT_BOUND_S)
    assert res.returncode == 3
    assert res.stdout == "out --me a b\n"  # argv element with a space stays one argument: no shell
    assert res.stderr == "warn\n"
    assert res.argv == (str(prog), "--me", "a b")
    assert res.duration_s > 0
    assert runner.calls == 1
    runner.run([str(prog)], timeout=WAIT_BOUND_S)
    assert runner.calls == 2


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    prog = stub(
        tmp_path, "bytes", "sys.stdout.buffer.write(b'job\\xff\\xfename\\n'); sys.stderr.buffer.write(b'\\xc3')"
    )
    res = SubprocessRunner().run([str(prog)], timeout=WAIT_BOUND_S)
    assert res.stdout == "job\ufffd\ufffdname\n"
    assert res.stderr == "\ufffd"


def test_stdin_is_devnull_unless_input(tmp_path: Path) -> None:
    prog = stub(tmp_path, "cat", "data = sys.stdin.read(); print(repr(data))")
    runner = SubprocessRunner()
    assert runner.run([str(prog)], timeout=WAIT_BOUND_S).stdout.strip() == "''"  # would hang on a TTY/pipe otherwise
    assert runner.run([str(prog)], timeout=WAIT_BOUND_S, input="#!/bin/bash\nhostname\n").stdout.strip() == repr(
        "#!/bin/bash\nhostname\n"
    )


def test_env_is_passed_exactly(tmp_path: Path) -> None:
    prog = stub(tmp_path, "env", "print(os.environ.get('SLURM_CONF'), os.environ.get('SBATCH_ACCOUNT'))")
    res = SubprocessRunner().run([str(prog)], timeout=WAIT_BOUND_S, env={"SLURM_CONF": "/x/slurm.conf"})
    assert res.stdout.split() == ["/x/slurm.conf", "None"]


def test_slurm_bin_dir_override(tmp_path: Path) -> None:
    bindir = tmp_path / "opt-slurm-bin"
    bindir.mkdir()
    stub(bindir, "squeue", "print('site squeue', *sys.argv[1:])")
    runner = SubprocessRunner(slurm_bin_dir=bindir)
    res = runner.run(["squeue", "--me"], timeout=WAIT_BOUND_S)
    assert res.stdout.strip() == "site squeue --me"
    assert res.argv[0] == str(bindir / "squeue")
    # a program not in the bin dir falls back to PATH
    assert runner.resolve("definitely-not-a-slurm-binary") == "definitely-not-a-slurm-binary"


def test_missing_binary_raises_not_installed(tmp_path: Path) -> None:
    runner = SubprocessRunner(slurm_bin_dir=tmp_path)
    with pytest.raises(SlurmNotInstalled) as info:
        runner.run(["ntui-no-such-sbatch", "--parsable"], timeout=5)
    assert "ntui-no-such-sbatch" in str(info.value)
    assert info.value.argv[0] == "ntui-no-such-sbatch"
    assert isinstance(info.value, SlurmError)
    assert runner.calls == 1


def test_timeout_kills_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    prog = stub(
        tmp_path,
        "hang",
        # a "site wrapper" that starts a child and waits: the child must die with it
        f"c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(c.pid))\n"
        "sys.stderr.write('starting\\n'); sys.stderr.flush()\n"
        "time.sleep(60)",
    )
    runner = SubprocessRunner()
    with pytest.raises(SlurmTimeout) as info:  # the stub sleeps 60 s: only the runner's timeout ends it
        runner.run([str(prog)], timeout=5.0)
    assert info.value.timeout == 5.0
    assert "did not answer within 5 s" in str(info.value)
    assert "starting" in info.value.stderr
    child = int(pidfile.read_text())
    deadline = time.monotonic() + WAIT_BOUND_S  # the kernel's reaping, slow on a loaded machine
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child), "grandchild survived the timeout"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (reaped by init later) counts as dead
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_empty_argv_rejected() -> None:
    with pytest.raises(ValueError):
        SubprocessRunner().run([], timeout=1)


# ---------------------------------------------------------------- check / classify on real captures


def test_unreachable_capture() -> None:
    res = capture("squeue_unreachable", ("squeue", "--noheader"))
    with pytest.raises(ControllerUnreachable) as info:
        check(res)
    assert info.value.returncode == 1
    assert "Unable to contact slurm controller" in str(info.value)
    assert "[squeue, exit 1]" in str(info.value)


def test_unknown_job_capture() -> None:
    err = classify(capture("scontrol_show_job_unknown"))
    assert isinstance(err, JobNotFound)
    assert err.reason == "Invalid job id specified"
    assert isinstance(classify(capture("scontrol_release_unknown")), JobNotFound)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("sbatch_bad_partition", "Invalid partition name specified"),
        ("sbatch_gpus5", "Requested node configuration is not available"),
        ("sbatch_bad_constraint", "Invalid feature specification"),
        ("sbatch_test_only_gpus5", "Requested node configuration is not available"),
        ("scontrol_requeue_pending", "Job is pending execution for job 38"),
        ("sacct_no_accounting", "Slurm accounting storage is disabled"),
    ],
)
def test_rejections_capture(name: str, reason: str) -> None:
    err = classify(capture(name))
    assert type(err) is SlurmRejected
    assert err.reason == reason
    assert reason in str(err)


def test_bad_field_on_rc0_is_an_error() -> None:
    """squeue 22.05 exits 0 after "Invalid job format specification": still an error."""
    res = capture("squeue_mix_with_exitcode")
    assert res.returncode == 0
    err = classify(res)
    assert isinstance(err, SlurmRejected)
    assert err.reason == "Invalid job format specification: ExitCode"


@pytest.mark.parametrize(
    "name",
    [
        "sbatch_parsable",
        "sbatch_test_only_ok",
        "squeue_mix_array",
        "scancel_unknown",
        "scontrol_hold_pending",
        "sdiag",
        "scontrol_show_job_running_2node_gpu",
    ],
)
def test_successes_capture(name: str) -> None:
    res = capture(name)
    assert check(res) is res


def test_socket_timed_out_on_rc0() -> None:
    res = result("squeue --me", stdout="", stderr="slurm_load_jobs error: Socket timed out on send/recv operation\n")
    with pytest.raises(ControllerUnreachable, match="Socket timed out"):
        check(res)


@pytest.mark.parametrize(
    "stderr",
    [
        "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)",
        "allocation failure: Unable to contact slurm controller (connect failure)",
        "scancel: error: Kill job error on job id 5: Unable to contact slurm controller (connect failure)",
        "slurm_get_statistics: Unable to contact slurm controller (connect failure)",
        "squeue: error: Connection refused",
        "slurm_load_partitions: Zero Bytes were transmitted or received",
        "squeue: fatal: Could not establish a configuration source",
    ],
)
def test_unreachable_is_not_a_rejection(stderr: str) -> None:
    err = classify(result("sbatch", stderr=stderr, returncode=1))
    assert type(err) is ControllerUnreachable


def test_other_load_error_counts_as_unreachable() -> None:
    err = classify(result("squeue", stderr="slurm_load_jobs error: Unexpected message received\n"))
    assert type(err) is ControllerUnreachable
    assert "Unexpected message received" in str(err)


@pytest.mark.parametrize(
    "stderr",
    [
        "sbatch: warning: can't honor --ntasks-per-node set to 4 which doesn't match the requested tasks 2\n",
        "sbatch: Job 3 to start at 2026-11-30T04:26:41 using 4 processors on nodes nid001 in partition debug",
        "squeue: error: Parsing error at unrecognized key: SlurmctldParameters2\n",
        "",
    ],
)
def test_harmless_stderr_on_rc0(stderr: str) -> None:
    assert classify(result("squeue", stdout="x", stderr=stderr)) is None


def test_fatal_on_rc0_raises() -> None:
    err = classify(result("squeue", stderr="squeue: fatal: something broke\n"))
    assert type(err) is SlurmError
    assert "fatal: something broke" in str(err)


def test_nonzero_without_stderr() -> None:
    err = classify(result("/usr/bin/scancel 5", returncode=8))
    assert type(err) is SlurmError
    assert str(err) == "scancel failed with exit code 8 [scancel, exit 8]"
    assert err.command == "/usr/bin/scancel 5"


def test_nonzero_uses_last_error_line() -> None:
    err = classify(
        result("sbatch", returncode=1, stderr="sbatch: error: first\nsbatch: error: Invalid --gres specification\n")
    )
    assert isinstance(err, SlurmRejected)
    assert err.reason == "Invalid --gres specification"


# ---------------------------------------------------------------- scrubbed_env


def test_scrub_outside_allocation_drops_only_sbatch() -> None:
    env = {
        "PATH": "/usr/bin",
        "SLURM_CONF": "/etc/slurm/slurm.conf",
        "SLURM_TIME_FORMAT": "standard",
        "SBATCH_ACCOUNT": "other",
        "SBATCH_TIMELIMIT": "1",
        "SRUN_CPUS_PER_TASK": "2",
    }
    kept, removed = scrubbed_env(env)
    assert removed == ["SBATCH_ACCOUNT", "SBATCH_TIMELIMIT"]
    assert kept == {
        "PATH": "/usr/bin",
        "SLURM_CONF": "/etc/slurm/slurm.conf",
        "SLURM_TIME_FORMAT": "standard",
        "SRUN_CPUS_PER_TASK": "2",
    }


def test_scrub_inside_allocation_drops_slurm_sbatch_srun_but_keeps_conf() -> None:
    env = {
        "HOME": "/root",
        "SLURM_JOB_ID": "77",
        "SLURM_MEM_PER_CPU": "100",
        "SLURM_CONF": "/x/slurm.conf",
        "SBATCH_PARTITION": "gpu",
        "SRUN_CPUS_PER_TASK": "2",
        "MY_SLURM_THING": "keep",
    }
    kept, removed = scrubbed_env(env)
    assert removed == ["SBATCH_PARTITION", "SLURM_JOB_ID", "SLURM_MEM_PER_CPU", "SRUN_CPUS_PER_TASK"]
    assert kept == {"HOME": "/root", "SLURM_CONF": "/x/slurm.conf", "MY_SLURM_THING": "keep"}
    assert env["SLURM_JOB_ID"] == "77"  # input untouched


def test_scrub_nothing_to_do() -> None:
    kept, removed = scrubbed_env({"A": "1"})
    assert kept == {"A": "1"}
    assert removed == []


# ---------------------------------------------------------------- FakeRunner


def test_fake_longest_prefix_and_basename() -> None:
    fake = FakeRunner(
        {
            "scontrol": result(stdout="generic"),
            ("scontrol", "show", "job"): result(stdout="job details"),
        }
    )
    assert fake.run(["/opt/slurm/bin/scontrol", "show", "job", "-d", "5"], timeout=3).stdout == "job details"
    res = fake.run(["scontrol", "hold", "5"], timeout=3, env={"A": "b"}, input="x")
    assert res.stdout == "generic"
    assert res.argv == ("scontrol", "hold", "5")  # the actual argv, not the key's
    assert fake.calls == 2
    assert fake.history[1].env == {"A": "b"}
    assert fake.history[1].input == "x"
    assert fake.history[1].timeout == 3
    assert fake.argvs()[0][-1] == "5"


def test_fake_sequence_exception_callable_handler_default() -> None:
    boom = SlurmTimeout("squeue did not answer", timeout=1, argv=("squeue",))
    fake = FakeRunner(
        {"squeue": [result(stdout="first"), boom, result(stdout="last")]},
        handler=lambda argv: result(stdout="handled") if argv[-1] == "magic" else None,
    )
    fake.add("sinfo", lambda argv: result(stdout=f"called with {argv[1]}"))
    assert fake.run(["squeue"], timeout=1).stdout == "first"
    with pytest.raises(SlurmTimeout):
        fake.run(["squeue"], timeout=1)
    assert fake.run(["squeue"], timeout=1).stdout == "last"
    assert fake.run(["squeue"], timeout=1).stdout == "last"  # the last answer repeats
    assert fake.run(["sinfo", "--version"], timeout=1).stdout == "called with --version"
    assert fake.run(["squeue", "magic"], timeout=1).stdout == "handled"
    with pytest.raises(FakeRunnerUnmatched):
        fake.run(["sbatch", "x.sh"], timeout=1)
    fake.default = result(returncode=127, stderr="nope")
    assert fake.run(["sbatch", "x.sh"], timeout=1).returncode == 127
    assert len(fake.history) == 8 and fake.calls == 7  # calls leaves out --version (local, as the app counts)
