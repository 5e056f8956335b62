"""The SSH transport: the remote command's quoting, ssh's own errors in words, the socket directory, and the
runner against a real OpenSSH server on the loopback address (``tests/support/sshd.py``; no Slurm needed)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ntui.core.slurm.runner import SlurmTimeout
from ntui.core.slurm.ssh import (
    MAX_SOCKET_DIR,
    SshError,
    SshRunner,
    SshTarget,
    build_control_argv,
    build_ssh_argv,
    classify_ssh,
    control_dir,
    ensure_private_dir,
    remote_command,
    valid_host,
)
from tests.support import sshd as sshd_support

MARKER_DIR = Path("/tmp")


def _marker() -> Path:
    return MARKER_DIR / f"ntui-pwned-{uuid.uuid4().hex}"


def hostile_values(marker: Path) -> list[str]:
    """Values that would run ``touch MARKER`` if they reached a shell unquoted (or quoted for the wrong shell)."""
    m = str(marker)
    return [
        f"; touch {m}",
        f"$(touch {m})",
        f"`touch {m}`",
        f"x\ntouch {m}",
        f"x\rtouch {m}",
        f"'; touch {m}; '",
        f"\"; touch {m}; \"",
        f"x\\'; touch {m}; #",  # a backslash before a quote: fish reads it as an escaped quote
        f"&& touch {m}",
        f"| touch {m}",
        f"> {m}",
        f"!touch {m}",
        "$HOME ~ * ?",
        "-n",
        "",
        "ünïcödé ✓",
    ]


# ---------------------------------------------------------------- the remote command, through local shells


def _shells() -> list[str]:
    return [s for s in ("sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish") if shutil.which(s)]


@pytest.mark.parametrize("shell", _shells())
def test_every_value_arrives_verbatim_as_one_word_whatever_the_login_shell(shell: str) -> None:
    """What sshd does with the command (``$SHELL -c COMMAND``), done here with each login shell installed."""
    marker = _marker()
    for value in hostile_values(marker):
        command = remote_command(["printf", "%s|", value, "end"])
        out = subprocess.run([shell, "-c", command], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        assert out.returncode == 0, (value, out.stderr)
        assert out.stdout.decode() == f"{value}|end|", (shell, value, command)
        assert not marker.exists(), (shell, value)


def test_plain_words_stay_readable_and_the_others_are_encoded() -> None:
    assert remote_command(["squeue", "--me", "-o", "%i|%j %T"]) == "squeue --me -o '%i|%j %T'"
    assert remote_command(["echo", "a'b"]) == "echo 'a'\"'\"'b'"
    for word in ("a\nb", "a\\b", "a!b", "a\tb", "ü"):  # read otherwise by csh, tcsh or fish in single quotes
        encoded = remote_command(["echo", word])
        assert encoded.startswith("exec /bin/sh -c ") and "\n" not in encoded and "\\" not in encoded, word
    with pytest.raises(ValueError):
        remote_command([])


def test_a_host_is_never_an_option_nor_several_words() -> None:
    assert valid_host("perlmutter") and valid_host("me@login.example.org") and valid_host("10.0.0.1")
    for bad in ("-oProxyCommand=touch /tmp/x", "a b", "a;b", "", "a\nb", "$(x)"):
        assert not valid_host(bad), bad
        with pytest.raises(ValueError):
            build_ssh_argv(bad, ["true"], control_path="/tmp/x/%C")


def test_the_ssh_argv_multiplexes_never_prompts_and_ends_options_before_the_command() -> None:
    argv = build_ssh_argv("dev", ["squeue", "--me"], control_path="/run/user/1/ntui-ssh/%C", persist_s=60,
                          config_file="/etc/cfg")
    assert argv[:3] == ["ssh", "-F", "/etc/cfg"]
    for option in ("ControlMaster=auto", "ControlPath=/run/user/1/ntui-ssh/%C", "ControlPersist=60",
                   "BatchMode=yes"):
        assert option in argv and argv[argv.index(option) - 1] == "-o"
    assert argv[-3:] == ["dev", "--", "squeue --me"]
    assert build_control_argv("dev", "check", control_path="/s/%C")[-3:] == ["-O", "check", "dev"]


@pytest.mark.parametrize(("stderr", "words"), [
    ("ssh: connect to host 127.0.0.1 port 9: Connection refused", "unreachable"),
    ("me@host: Permission denied (publickey).", "login was refused"),
    ("Host key verification failed.", "host key"),
    ("ssh: Could not resolve hostname nowhere: Name or service not known", "host name is unknown"),
    ("Certificate invalid: expired", "certificate has expired"),
    ("Connection closed by 10.0.0.1 port 22", "connection dropped"),
    ("client_loop: send disconnect: Broken pipe", "connection dropped"),
])
def test_ssh_failures_are_said_in_words(stderr: str, words: str) -> None:
    err = classify_ssh("dev", 255, stderr)
    assert isinstance(err, SshError) and words in err.words and "dev" in str(err)


def test_exit_255_without_ssh_words_and_every_other_status_are_the_commands_own() -> None:
    assert classify_ssh("dev", 255, "") is None
    assert classify_ssh("dev", 255, "my program failed\n") is None
    assert classify_ssh("dev", 1, "ssh: connect to host x port 22: Connection refused") is None


def test_the_socket_directory_is_short_and_private(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir()
    assert control_dir({"XDG_RUNTIME_DIR": str(runtime)}) == (runtime / "ntui-ssh"
                                                              if len(str(runtime / "ntui-ssh")) <= MAX_SOCKET_DIR
                                                              else Path(f"/tmp/ntui-ssh-{os.getuid()}"))
    assert control_dir({"XDG_RUNTIME_DIR": "/" + "x" * 80}, uid=7) == Path("/tmp/ntui-ssh-7")
    assert control_dir({}, uid=7) == Path("/tmp/ntui-ssh-7")
    # a socket path: the directory, "/", %C's 40 hex digits, ssh's ".XXXXXXXXXXXXXXXX" while it binds, NUL
    assert MAX_SOCKET_DIR + 1 + 40 + 17 + 1 <= 104
    made = tmp_path / "sockets"
    ensure_private_dir(made)
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    made.chmod(0o755)
    ensure_private_dir(made)  # an existing one of this user is made private again
    assert stat.S_IMODE(made.stat().st_mode) == 0o700


# ---------------------------------------------------------------- against a real sshd


@pytest.fixture(scope="module")
def sshd() -> Iterator[sshd_support.Sshd]:
    reason = sshd_support.why_not()
    if reason is not None:
        pytest.skip(reason)
    with sshd_support.private_sshd() as server:
        yield server


def _runner(server: sshd_support.Sshd, host: str = sshd_support.HOST, sockets: str = "ctl") -> SshRunner:
    return SshRunner(SshTarget(host=host, control_dir=server.directory / sockets, persist_s=300,
                               config_file=str(server.ssh_config)))


@pytest.fixture(scope="module")
def runner(sshd: sshd_support.Sshd) -> SshRunner:
    return _runner(sshd)


def test_calls_share_one_master_and_one_login(sshd: sshd_support.Sshd) -> None:
    r = _runner(sshd, sockets="reuse")
    before = sshd.logins()
    first = r.run(["echo", "hello"], timeout=120)
    assert (first.returncode, first.stdout, first.argv) == (0, "hello\n", ("echo", "hello"))
    master = r.control("check")
    assert master.returncode == 0 and "Master running" in master.stderr, master
    for i in range(3):
        assert r.run(["echo", str(i)], timeout=120).stdout == f"{i}\n"
    assert r.control("check").stderr == master.stderr  # the same master process (its pid)
    assert sshd.logins() - before == 1
    assert r.calls == 4
    assert stat.S_IMODE((sshd.directory / "reuse").stat().st_mode) == 0o700


def test_a_hostile_value_arrives_verbatim_and_runs_nothing(runner: SshRunner) -> None:
    marker = _marker()
    for value in hostile_values(marker):
        res = runner.run(["printf", "%s\\n", value], timeout=120)
        assert res.returncode == 0, (value, res.stderr)
        assert res.stdout == f"{value}\n", value
        assert not marker.exists(), value
    # several words stay several words, each whole
    values = hostile_values(marker)
    res = runner.run(["printf", "<%s>", *values], timeout=120)
    assert res.stdout == "".join(f"<{v}>" for v in values)
    assert not marker.exists()


def test_the_remote_commands_exit_status_and_streams_are_kept(runner: SshRunner) -> None:
    res = runner.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=120)
    assert (res.returncode, res.stdout, res.stderr) == (3, "out\n", "err\n")
    assert runner.run(["false"], timeout=120).returncode == 1
    own = runner.run(["sh", "-c", "echo 'my program failed' >&2; exit 255"], timeout=120)
    assert (own.returncode, own.stderr) == (255, "my program failed\n")  # its own 255, not ssh's


def test_standard_input_reaches_the_remote_command(runner: SshRunner) -> None:
    script = "#!/bin/bash\n#SBATCH --job-name='x; touch /tmp/no'\necho $(hostname) `id`\n"
    assert runner.run(["cat"], timeout=120, input=script).stdout == script


def test_a_missing_remote_program_is_said_as_such(runner: SshRunner) -> None:
    from ntui.core.slurm.runner import SlurmNotInstalled

    with pytest.raises(SlurmNotInstalled, match="not found on cluster"):
        runner.run(["ntui-no-such-program-xyz"], timeout=120)


def test_an_unreachable_host_is_an_ssh_error_in_words(sshd: sshd_support.Sshd) -> None:
    with pytest.raises(SshError) as caught:
        _runner(sshd, sshd_support.REFUSED, sockets="refused").run(["true"], timeout=120)
    assert caught.value.returncode == 255 and "unreachable" in caught.value.words
    assert "Connection refused" in caught.value.stderr


def test_a_refused_login_is_an_ssh_error_in_words_and_never_a_prompt(sshd: sshd_support.Sshd) -> None:
    with pytest.raises(SshError) as caught:
        _runner(sshd, sshd_support.DENIED, sockets="denied").run(["true"], timeout=120)
    assert "login was refused" in caught.value.words and "Permission denied" in caught.value.stderr


def _local_ssh_clients_with(token: str) -> list[int]:
    """Local ssh client processes whose argv holds ``token``."""
    return _processes_with(token, program="ssh")


def _processes_with(token: str, program: str | None = None) -> list[int]:
    """Processes whose argv holds ``token`` (and whose program is ``program``, when given)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and (program is None or os.path.basename(argv[0].decode(errors="replace")) == program) and \
                any(token.encode() in a for a in argv):
            found.append(int(entry.name))
    return found


def test_a_timeout_kills_the_call_and_the_master_stays(sshd: sshd_support.Sshd, runner: SshRunner) -> None:
    runner.run(["true"], timeout=120)  # the master is up: the timeout below is the command's
    logins = sshd.logins()
    token = f"ntui-timeout-{uuid.uuid4().hex}"
    with pytest.raises(SlurmTimeout) as caught:
        runner.run(["sh", "-c", "sleep 300", token], timeout=1)
    assert caught.value.argv[-1] == token and "did not answer within 1 s" in str(caught.value)
    assert _local_ssh_clients_with(token) == []  # the call's ssh process was killed, not left behind
    assert runner.run(["echo", "again"], timeout=120).stdout == "again\n"
    assert sshd.logins() == logins
    for pid in _processes_with(token):  # the sleep itself, on the "cluster" side (this test's own)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------- after a dropped link


def test_only_reads_are_asked_again_after_a_dropped_link() -> None:
    from ntui.core.slurm.ssh import repeatable

    assert all(repeatable(a) for a in (["squeue", "--me"], ["/opt/slurm/bin/sacct", "-j", "1"],
                                        ["scontrol", "show", "job", "1"], ["sacctmgr", "show", "qos"], ["true"]))
    assert not any(repeatable(a) for a in (["sbatch", "--parsable"], ["scancel", "1"], ["scontrol", "hold", "1"],
                                            ["scontrol", "requeue", "1"], ["scontrol", "update", "JobId=1"],
                                            ["sacctmgr", "add", "user"], ["mkdir", "-p", "--", "/x"], []))


def test_the_backoff_doubles_to_its_cap_and_starts_over_after_a_success() -> None:
    from ntui.core.slurm.ssh import Backoff

    b = Backoff(first=0.5, cap=3)
    assert [b.delay() for _ in range(5)] == [0.5, 1, 2, 3, 3]
    b.reset()
    assert b.delay() == 0.5


def test_a_refused_or_expired_login_names_the_clusters_renew_command_and_a_dropped_link_does_not() -> None:
    expired = classify_ssh("pm", 255, "Certificate invalid: expired\n", renew="sshproxy -u me")
    refused = classify_ssh("pm", 255, "me@pm: Permission denied (publickey).\n", renew="sshproxy -u me")
    dropped = classify_ssh("pm", 255, "Connection reset by 1.2.3.4 port 22\n", renew="sshproxy -u me")
    assert expired is not None and expired.words.endswith("to renew it here: sshproxy -u me")
    assert refused is not None and "sshproxy -u me" in refused.words and not refused.link_down
    assert dropped is not None and "sshproxy" not in dropped.words and dropped.link_down
    plain = classify_ssh("pm", 255, "me@pm: Permission denied (publickey).\n")
    assert plain is not None and "renew" in plain.words and "sshproxy" not in plain.words


# ---------------------------------------------------------------- the version, asked with the first query


def _stub_clients(bin_dir: Path, version: str = "slurm 22.05.11") -> None:
    """``scontrol`` printing its arguments one per line (exit 3 when the last is ``9``, with a word on stderr) and
    ``sinfo --version``."""
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "scontrol").write_text(
        '#!/bin/sh\nprintf "<%s>\\n" "$@"\nfor a; do l=$a; done\n'
        'if [ "$l" = 9 ]; then echo "no such job" >&2; exit 3; fi\n')
    (bin_dir / "sinfo").write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "{version}"\n')
    for name in ("scontrol", "sinfo"):
        (bin_dir / name).chmod(0o755)


def _sessions(server: sshd_support.Sshd) -> int:
    return server.log.read_text(errors="replace").count("Starting session:")


def test_the_version_comes_with_the_first_query_and_costs_no_channel(sshd: sshd_support.Sshd, tmp_path: Path
                                                                     ) -> None:
    from ntui.core.slurm.version import SlurmVersion, installed_version

    _stub_clients(tmp_path / "bin")
    r = SshRunner(SshTarget(host=sshd_support.HOST, control_dir=sshd.directory / "version", persist_s=300,
                            config_file=str(sshd.ssh_config), bin_dir=str(tmp_path / "bin")))
    before = _sessions(sshd)
    marker = _marker()
    hostile = hostile_values(marker)
    first = r.run(["scontrol", "show", "job", *hostile], timeout=120)
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout == "".join(f"<{w}>\n" for w in ["show", "job", *hostile])  # its own output, nothing else
    assert not marker.exists()
    assert r.known_version == "slurm 22.05.11\n"
    assert r.run(["sinfo", "--version"], timeout=120).stdout == "slurm 22.05.11\n"
    assert installed_version(r) == SlurmVersion((22, 5, 11))
    assert _sessions(sshd) - before == 1 and r.calls == 1
    failed = r.run(["scontrol", "show", "job", "9"], timeout=120)  # later queries run alone, status kept
    assert (failed.returncode, failed.stdout, failed.stderr) == (3, "<show>\n<job>\n<9>\n", "no such job\n")
    assert _sessions(sshd) - before == 2


def test_an_action_never_carries_the_version_and_its_status_is_its_own(sshd: sshd_support.Sshd, tmp_path: Path
                                                                       ) -> None:
    _stub_clients(tmp_path / "bin")
    r = SshRunner(SshTarget(host=sshd_support.HOST, control_dir=sshd.directory / "action", persist_s=300,
                            config_file=str(sshd.ssh_config), bin_dir=str(tmp_path / "bin")))
    res = r.run(["scontrol", "hold", "9"], timeout=120)
    assert (res.returncode, res.stdout, res.stderr) == (3, "<hold>\n<9>\n", "no such job\n")
    assert r.known_version is None
    assert r.run(["sinfo", "--version"], timeout=120).stdout == "slurm 22.05.11\n"  # asked on its own
    assert r.calls == 2


# ---------------------------------------------------------------- a terminal handed to ssh (ntui attach)

_ON_A_TERMINAL = r"""
import json, os, sys, termios
from pathlib import Path
from ntui.core.slurm.ssh import SshRunner, SshTarget
target = SshTarget(host=sys.argv[1], control_dir=Path(sys.argv[2]), persist_s=300, config_file=sys.argv[3])
before = termios.tcgetattr(0)
code = SshRunner(target).run_terminal(json.loads(sys.argv[4]))
after = termios.tcgetattr(0)
Path(sys.argv[5]).write_text(json.dumps({"code": code, "same": before == after}))
"""


def _on_a_terminal(server: sshd_support.Sshd, sockets: str, argv: list[str], out: Path,
                   while_running: Callable[[int], None] | None = None) -> tuple[dict[str, object], str]:
    """``SshRunner.run_terminal(argv)`` in a process whose standard streams are a new terminal (a pty); what it
    wrote to ``out`` and what the terminal showed. ``while_running``: called with the process's pid once the
    terminal has shown something."""
    import json
    import pty
    import select
    import sys
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", _ON_A_TERMINAL, sshd_support.HOST, str(server.directory / sockets),
                             str(server.ssh_config), json.dumps(argv), str(out)],
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 120
    called = False
    while proc.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                shown += os.read(master, 4096)
            except OSError:
                break
        if while_running is not None and not called and b"ready" in shown:
            called = True
            while_running(proc.pid)
    proc.wait(timeout=60)
    os.close(master)
    return json.loads(out.read_text()), shown.decode(errors="replace")


def test_a_terminal_command_gets_a_terminal_there_and_its_exit_status_comes_back(sshd: sshd_support.Sshd,
                                                                                 tmp_path: Path) -> None:
    marker = _marker()
    said, shown = _on_a_terminal(sshd, "term", ["sh", "-c", '[ -t 0 ] && [ -t 1 ] && echo "on a tty: $1"; exit 7',
                                                "sh", f"; touch {marker}"], tmp_path / "out.json")
    assert said == {"code": 7, "same": True}, shown
    assert f"on a tty: ; touch {marker}" in shown and not marker.exists()


def test_the_terminal_is_put_back_when_ssh_is_killed_holding_it_raw(sshd: sshd_support.Sshd, tmp_path: Path) -> None:
    def kill_ssh(pid: int) -> None:
        for child in _processes_with("-t", program="ssh"):
            if Path(f"/proc/{child}/stat").read_text().split()[3] == str(pid):  # its own ssh, holding the terminal
                os.kill(child, signal.SIGKILL)

    said, shown = _on_a_terminal(sshd, "killed", ["sh", "-c", "echo ready; sleep 60"], tmp_path / "out.json",
                                 while_running=kill_ssh)
    assert said["code"] == -signal.SIGKILL and said["same"] is True, shown


# ---------------------------------------------------------------- a stream read here (ntui gpus)


def test_a_streamed_command_ends_on_the_cluster_when_this_side_stops_reading(sshd: sshd_support.Sshd,
                                                                            tmp_path: Path) -> None:
    import threading
    import time

    from ntui.core.gpu.stream import GpuStream

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    trace = tmp_path / "srun.trace"
    (bin_dir / "srun").write_text(
        f"#!/bin/sh\ntrap 'echo terminated >> {trace}; exit 0' TERM\nprintf '<%s>\\n' \"$@\"\n"
        "i=0; while :; do i=$((i + 1)); echo \"line $i\"; sleep 0.2; done\n")
    (bin_dir / "srun").chmod(0o755)
    r = SshRunner(SshTarget(host=sshd_support.HOST, control_dir=sshd.directory / "stream", persist_s=300,
                            config_file=str(sshd.ssh_config), bin_dir=str(bin_dir)))
    marker = _marker()
    words = [w for w in hostile_values(marker) if "\n" not in w and "\r" not in w]  # one line each
    lines: list[str] = []
    enough = threading.Event()

    def on_line(line: str) -> None:
        lines.append(line)
        if sum(x.startswith("line ") for x in lines) >= 3:
            enough.set()

    stream = GpuStream(r.stream_argv(["srun", *words]), env=None, on_line=on_line, on_exit=lambda rc, err: None)
    stream.start()
    try:
        assert enough.wait(120), lines
    finally:
        stream.stop()
    assert lines[:len(words)] == [f"<{w}>" for w in words] and not marker.exists()  # every word verbatim
    deadline = time.monotonic() + 60  # the relay notices at the next line it cannot write
    while time.monotonic() < deadline and not (trace.exists() and "terminated" in trace.read_text()):
        time.sleep(0.1)
    assert trace.exists() and trace.read_text() == "terminated\n"
