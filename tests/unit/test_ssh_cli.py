"""``ntui --cluster NAME ...`` through a real sshd on the loopback address: the laptop side's PATH has ssh and no
Slurm client; the "cluster" side's Slurm clients are stubs in the cluster's ``bin-dir`` that record what they got
(no Slurm needed: the real dev cluster's test is in tests/cluster)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import sshd as sshd_support

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = (ROOT / "tests/data/slurm/scontrol_show_partition.stdout").read_text()
SHOW_JOB = (ROOT / "tests/data/slurm/24.11/scontrol_show_job_completed.stdout").read_text()  # JobId=203
SHOW_RUNNING = (ROOT / "tests/data/slurm/24.11/scontrol_show_job_running_2node_gpu.stdout").read_text()  # 213
GPU_LINES = (ROOT / "tests/data/gpus/two-nodes-label.txt").read_text()

SQUEUE = r'''
import json, os, sys
with open(TRACE, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
fields = sys.argv[sys.argv.index("-O") + 1].split(",")
values = {"JobID": "4242", "ArrayJobID": "4242", "ArrayTaskID": "N/A", "Name": "remote-train",
          "StateCompact": "R", "State": "RUNNING", "Reason": "None", "TimeUsed": "1:02", "TimeLimit": "10:00",
          "NumNodes": "2", "NodeList": "c[1-2]", "UserName": "me"}
print("".join(values.get(f.split(":")[0], "") + ":".join(f.split(":")[1:]) for f in fields))
'''

SINFO = r'''
import json, sys
with open(TRACE, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
print("slurm 24.11.7" if sys.argv[1:] == ["--version"] else "")
'''

SRUN = r'''
import json, os, signal, sys, time
def trace(what):
    with open(TRACE, "a") as f:
        f.write(json.dumps(what) + "\n")
if "--pty" in sys.argv:  # attach: a shell on the node's terminal
    trace({"srun": sys.argv[1:], "tty": os.isatty(0) and os.isatty(1)})
    print("a shell on the node")
    sys.exit(5)
# the GPU watch step: nvidia-smi's lines, labelled by task, every second until it is told to stop
signal.signal(signal.SIGTERM, lambda *_: (trace({"gpu-step": "terminated"}), sys.exit(0)))
trace({"gpu-step": sys.argv[1:]})
while True:
    sys.stdout.write(GPU_LINES)
    sys.stdout.flush()
    time.sleep(1)
'''

SBATCH = r'''
import json, sys
script = sys.stdin.read()
with open(TRACE, "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": script}) + "\n")
print("777")
'''

SCONTROL = r'''
import json, sys
with open(TRACE, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
if sys.argv[1:4] == ["show", "partition", "-o"]:
    sys.stdout.write(PARTITIONS)
elif sys.argv[1:] == ["show", "job", "-d", "203"]:
    sys.stdout.write(SHOW_JOB)
elif sys.argv[1:] == ["show", "job", "-d", "213"]:
    sys.stdout.write(SHOW_RUNNING)
else:
    sys.stderr.write("scontrol: error: not in this stub\n")
    sys.exit(1)
'''


@dataclass(frozen=True)
class Remote:
    env: dict[str, str]
    trace: Path
    home: Path


def _stub(bin_dir: Path, name: str, body: str, trace: Path) -> None:
    path = bin_dir / name
    path.write_text(f"#!{sys.executable}\nTRACE = {str(trace)!r}\nPARTITIONS = {PARTITIONS!r}\n"
                    f"SHOW_JOB = {SHOW_JOB!r}\nSHOW_RUNNING = {SHOW_RUNNING!r}\nGPU_LINES = {GPU_LINES!r}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture(scope="module")
def sshd() -> Iterator[sshd_support.Sshd]:
    reason = sshd_support.why_not()
    if reason is not None:
        pytest.skip(reason)
    with sshd_support.private_sshd() as server:
        yield server


@pytest.fixture
def remote(sshd: sshd_support.Sshd, tmp_path: Path) -> Remote:
    slurm_bin = tmp_path / "cluster-bin"
    slurm_bin.mkdir()
    trace = tmp_path / "trace.jsonl"
    trace.touch()
    for name, body in (("squeue", SQUEUE), ("sbatch", SBATCH), ("scontrol", SCONTROL), ("sinfo", SINFO),
                       ("srun", SRUN)):
        _stub(slurm_bin, name, body, trace)
    laptop_bin = tmp_path / "laptop-bin"  # ssh only: no Slurm client on this side
    laptop_bin.mkdir()
    (laptop_bin / "ssh").symlink_to(shutil.which("ssh") or "/usr/bin/ssh")
    config = tmp_path / "config" / "ntui"
    config.mkdir(parents=True)
    runtime = Path(sshd.directory) / f"rt-{tmp_path.name[-8:]}"  # short: the master's socket lives under it
    runtime.mkdir(mode=0o700)
    (config / "config.yaml").write_text(
        f"clusters:\n  dev:\n    ssh: {sshd_support.HOST}\n    bin-dir: {slurm_bin}\n"
        f"    ssh-config: {sshd.ssh_config}\n    persist: 120\n")
    env = {"PATH": str(laptop_bin), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_RUNTIME_DIR": str(runtime), "NTUI_STATE_DIR": str(tmp_path / "state"), "LANG": "C.UTF-8",
           "PYTHONPATH": str(ROOT)}
    return Remote(env=env, trace=trace, home=tmp_path)


def ntui(remote: Remote, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ntui", *args], env=remote.env, cwd=ROOT, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


def _trace(remote: Remote) -> list[object]:
    return [json.loads(line) for line in remote.trace.read_text().splitlines()]


def test_jobs_of_a_cluster_over_ssh_and_one_login_for_several_processes(remote: Remote,
                                                                        sshd: sshd_support.Sshd) -> None:
    logins = sshd.logins()
    out = ntui(remote, "--cluster", "dev", "jobs")
    assert out.returncode == 0, out.stderr
    assert "4242" in out.stdout and "remote-train" in out.stdout and "RUNNING" in out.stdout
    (argv,) = _slurm_calls(remote)
    assert isinstance(argv, list) and "--me" in argv and "-O" in argv
    assert not (remote.home / "state").exists()  # nothing of the cluster's is recorded here
    assert ntui(remote, "--cluster", "dev", "jobs").returncode == 0
    assert len(_slurm_calls(remote)) == 2
    assert sshd.logins() - logins == 1  # the second process used the master the first one opened


def test_submit_gives_the_rendered_script_on_sbatchs_standard_input(remote: Remote, sshd: sshd_support.Sshd) -> None:
    logins = sshd.logins()
    logs = remote.home / "cluster-logs" / "run1"
    out = ntui(remote, "--cluster", "dev", "submit", str(ROOT / "presets/local-accelerate.yaml"),
               "--set", f"logs.dir={logs}", "--set", "env.NOTE=x; touch /tmp/ntui-pwned-submit", "--hold")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "777"
    calls = _trace(remote)
    assert ["show", "partition", "-o"] in calls  # the partition check asked the cluster
    (sub,) = [c for c in calls if isinstance(c, dict)]
    # no script path: the script came on stdin; the comment tags the submission (a lost answer is looked for by it)
    assert sub["argv"][:2] == ["--parsable", "--hold"] and len(sub["argv"]) == 3
    assert re.fullmatch(r"--comment=ntui-submit:[0-9a-f]{32}", sub["argv"][2])
    assert sub["stdin"].startswith("#!") and "#SBATCH" in sub["stdin"] and "x; touch" in sub["stdin"]
    assert logs.is_dir()  # made on the cluster before sbatch (the same machine here)
    assert not Path("/tmp/ntui-pwned-submit").exists()
    assert not list(logs.iterdir())  # nothing written beside the logs from here
    assert sshd.logins() - logins == 1  # scontrol, mkdir and sbatch: three channels over one login


def _slurm_calls(remote: Remote) -> list[object]:
    """The stubs' calls but ``sinfo --version`` (asked with a process's first query, in its channel)."""
    return [c for c in _trace(remote) if c != ["--version"]]


def _channels(sshd: sshd_support.Sshd) -> int:
    """Channels the server opened so far (one per command over a master, the master's first included)."""
    return sshd.log.read_text(errors="replace").count("Starting session:")


def test_show_asks_the_job_and_the_slurm_version_in_one_channel(remote: Remote, sshd: sshd_support.Sshd) -> None:
    channels = _channels(sshd)
    out = ntui(remote, "--cluster", "dev", "show", "203")
    assert out.returncode == 0, out.stderr
    assert re.search(r"JobId: 203\n", out.stdout) and re.search(r"State: COMPLETED\n", out.stdout), out.stdout
    assert re.search(r"Slurm: 24\.11\.7\n", out.stdout), out.stdout  # the cluster's version, not this side's
    assert "ntui-version-" not in out.stdout
    calls = _trace(remote)
    assert ["show", "job", "-d", "203"] in calls and ["--version"] in calls
    assert _channels(sshd) - channels == 1  # scontrol and sinfo --version: one remote command


def test_attach_hands_this_terminal_to_srun_on_the_cluster(remote: Remote, sshd: sshd_support.Sshd) -> None:
    import pty
    import select
    import time

    logins = sshd.logins()
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ntui", "--cluster", "dev", "attach", "213", "-w", "nid002"],
                            env=remote.env, cwd=ROOT, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if select.select([master], [], [], 0.2)[0]:
            try:
                shown += os.read(master, 4096)
            except OSError:
                break
    assert proc.wait(timeout=60) == 5, shown  # the shell's (srun's) exit status
    os.close(master)
    (srun,) = [c for c in _trace(remote) if isinstance(c, dict) and "srun" in c]
    assert srun == {"srun": ["--jobid=213", "--overlap", "--pty", "-N", "1", "-n", "1", "-w", "nid002", "bash"],
                    "tty": True}
    assert b"a shell on the node" in shown and b"Traceback" not in shown
    assert sshd.logins() - logins == 1  # scontrol, then the terminal: one login


def test_gpus_streams_the_watch_steps_output_and_the_step_ends_there_after(remote: Remote,
                                                                          sshd: sshd_support.Sshd) -> None:
    import time

    logins = sshd.logins()
    out = ntui(remote, "--cluster", "dev", "gpus", "213", "--once", "--timeout", "120")
    assert out.returncode == 0, out.stderr
    assert "job 213: 8 GPUs on 2 node(s)" in out.stdout, out.stdout
    assert re.search(r"nid001 .* 3 .* 99%", out.stdout) and re.search(r"nid002 .* 0 .* 0%", out.stdout), out.stdout
    (step,) = [c["gpu-step"] for c in _trace(remote) if isinstance(c, dict) and isinstance(c.get("gpu-step"), list)]
    assert step[:3] == ["--jobid=213", "--overlap", "--nodes=2"] and "--label" in step
    deadline = time.monotonic() + 60  # the step is told to stop at the first line nobody reads any more
    while time.monotonic() < deadline and {"gpu-step": "terminated"} not in _trace(remote):
        time.sleep(0.2)
    assert {"gpu-step": "terminated"} in _trace(remote)
    assert sshd.logins() - logins == 1


def test_import_reads_a_script_of_this_machine_with_the_cluster_named(remote: Remote, tmp_path: Path) -> None:
    script = tmp_path / "train.sbatch"
    script.write_text("#!/bin/bash\n#SBATCH --job-name=imported\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=4\n"
                      "#SBATCH --time=01:00:00\nsrun python train.py\n")
    out = ntui(remote, "--cluster", "dev", "import", str(script))
    assert out.returncode == 0, out.stderr
    assert "name: imported" in out.stdout and "gpus-per-node: 4" in out.stdout, out.stdout


def test_every_subcommand_works_over_ssh_or_says_why_not(remote: Remote, monkeypatch: pytest.MonkeyPatch) -> None:
    # (logs, progress, triage, history, report, sweep and resubmit read the cluster's files and records through its
    # agent: tests/unit/test_remote_cli.py)
    import ntui.cli as cli

    assert {c.name for c in cli.COMMANDS} == cli.REMOTE_COMMANDS | set(cli.NOT_REMOTE)
    assert not cli.REMOTE_COMMANDS & set(cli.NOT_REMOTE)
    for name, why in cli.NOT_REMOTE.items():
        out = ntui(remote, "--cluster", "dev", name, "1")
        assert out.returncode == 2, (name, out.stderr)
        assert f"ntui {name} {why}: not over --cluster yet" in out.stderr and "Traceback" not in out.stderr, out.stderr
    # one that would not (none today): said, and nothing asked
    monkeypatch.setattr(cli, "REMOTE_COMMANDS", cli.REMOTE_COMMANDS - {"report"})
    monkeypatch.setattr(cli, "NOT_REMOTE", {"report": "reads GPU samples on the cluster"})
    said = cli._remote_refusal("report", "dev")
    assert said is not None and said.startswith("ntui report reads GPU samples on the cluster: not over --cluster yet")
    assert _trace(remote) == []


def test_an_unknown_cluster_and_a_host_that_refuses_are_said_in_words(remote: Remote,
                                                                     sshd: sshd_support.Sshd) -> None:
    out = ntui(remote, "--cluster", "nope", "jobs")
    assert out.returncode == 2 and "no cluster 'nope': the settings name dev" in out.stderr
    cfg = Path(remote.env["XDG_CONFIG_HOME"]) / "ntui" / "config.yaml"
    cfg.write_text(cfg.read_text().replace(f"ssh: {sshd_support.HOST}", f"ssh: {sshd_support.REFUSED}"))
    out = ntui(remote, "--cluster", "dev", "cancel", "12")
    assert out.returncode == 3 and "Traceback" not in out.stderr
    assert "ssh to ntui-refused: the host is unreachable" in out.stderr, out.stderr


def test_without_cluster_nothing_goes_over_ssh(remote: Remote) -> None:
    env = dict(remote.env)
    out = subprocess.run([sys.executable, "-m", "ntui", "jobs"], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert out.returncode == 3 and "Slurm is not installed here" in out.stderr  # the laptop has no squeue
    assert _trace(remote) == []
