"""A submit over ``--cluster`` whose answer is lost with the link (a real sshd on the loopback address; the
cluster's sbatch and squeue are stubs that record what they got): the job is looked for by its comment before
anything else, and never submitted twice."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ntui.core.remote.lostsubmit import build_lookup_argvs, new_tag, parse_lookup
from tests.support import sshd as sshd_support

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = (ROOT / "tests/data/slurm/scontrol_show_partition.stdout").read_text()

#: Records its call, keeps the job (its comment) in a file squeue reads, then drops the ssh connection it came by
#: (kills the sshd process serving it) before answering: the answer is lost, the job was submitted. With LOSE_JOB
#: the job is dropped too (sbatch refused it as the link went).
SBATCH = r'''
import json, os, signal, sys
sys.stdin.read()
comment = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--comment="))
with open(TRACE, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
if not os.path.exists(LOSE_JOB):
    with open(QUEUE, "a") as f:
        f.write("9001|" + comment + "\n")
pid = os.getppid()
while pid > 1:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    with open(f"/proc/{pid}/comm") as f:
        comm = f.read().strip()
    if comm.startswith("sshd"):
        os.kill(pid, signal.SIGKILL)
        break
    pid = int(fields[1])
'''

SQUEUE = r'''
import json, sys
with open(TRACE, "a") as f:
    f.write(json.dumps(["squeue", *sys.argv[1:]]) + "\n")
print("8000|someone else's")
try:
    print(open(QUEUE).read(), end="")
except FileNotFoundError:
    pass
'''

SACCT = r'''
import json, sys
with open(TRACE, "a") as f:
    f.write(json.dumps(["sacct", *sys.argv[1:]]) + "\n")
'''

SCONTROL = r'''
import sys
if sys.argv[1:4] == ["show", "partition", "-o"]:
    sys.stdout.write(PARTITIONS)
else:
    sys.exit(1)
'''


@pytest.fixture(scope="module")
def cluster_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The state dir of the cluster's side (its history), where the agent writes the submissions' facts."""
    return tmp_path_factory.mktemp("cluster-state")


@pytest.fixture(scope="module")
def sshd(cluster_state: Path) -> Iterator[sshd_support.Sshd]:
    reason = sshd_support.why_not()
    if reason is not None:
        pytest.skip(reason)
    with sshd_support.private_sshd(environment={"PYTHONPATH": str(ROOT), "NTUI_STATE_DIR": str(cluster_state)}
                                   ) as server:
        yield server


def _laptop(sshd: sshd_support.Sshd, tmp_path: Path) -> dict[str, str]:
    cluster_bin = tmp_path / "cluster-bin"
    cluster_bin.mkdir()
    consts = (f"TRACE = {str(tmp_path / 'trace.jsonl')!r}\nQUEUE = {str(tmp_path / 'queue')!r}\n"
              f"LOSE_JOB = {str(tmp_path / 'lose-job')!r}\nPARTITIONS = {PARTITIONS!r}\n")
    for name, body in (("sbatch", SBATCH), ("squeue", SQUEUE), ("sacct", SACCT), ("scontrol", SCONTROL)):
        path = cluster_bin / name
        path.write_text(f"#!{sys.executable}\n{consts}{body}")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    laptop_bin = tmp_path / "laptop-bin"
    laptop_bin.mkdir()
    (laptop_bin / "ssh").symlink_to(shutil.which("ssh") or "/usr/bin/ssh")
    config = tmp_path / "config" / "ntui"
    config.mkdir(parents=True)
    (config / "config.yaml").write_text(
        f"clusters:\n  dev:\n    ssh: {sshd_support.HOST}\n    bin-dir: {cluster_bin}\n"
        f"    ssh-config: {sshd.ssh_config}\n    persist: 120\n")
    runtime = Path(sshd.directory) / f"rt-{tmp_path.name[-8:]}"
    runtime.mkdir(mode=0o700)
    return {"PATH": str(laptop_bin), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_RUNTIME_DIR": str(runtime), "NTUI_STATE_DIR": str(tmp_path / "state"), "LANG": "C.UTF-8",
            "PYTHONPATH": str(ROOT)}


def _submit(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ntui", "--cluster", "dev", "submit",
                           str(ROOT / "presets/local-accelerate.yaml"), "--hold", "--set",
                           f"logs.dir={tmp_path / 'logs'}"], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def _trace(tmp_path: Path) -> list[list[str]]:
    return [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]


def test_a_submit_whose_answer_was_lost_is_found_by_its_comment_and_not_sent_again(sshd: sshd_support.Sshd,
                                                                                  tmp_path: Path) -> None:
    env = _laptop(sshd, tmp_path)
    done = _submit(env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "9001"
    assert "the connection dropped" in done.stderr or "link" in done.stderr, done.stderr
    assert "not submitted again" in done.stderr
    calls = _trace(tmp_path)
    sbatches = [c for c in calls if c[0] != "squeue" and c[0] != "sacct"]
    assert len(sbatches) == 1  # sbatch ran once
    (comment,) = [a for a in sbatches[0] if a.startswith("--comment=ntui-submit:")]
    assert any(c[0] == "squeue" and "--name=local-accelerate" in " ".join(c) for c in calls), calls
    assert comment.split("=", 1)[1] in (tmp_path / "queue").read_text()


def test_a_lost_submit_that_is_not_on_the_cluster_is_said_and_not_sent_again(sshd: sshd_support.Sshd,
                                                                             tmp_path: Path) -> None:
    env = _laptop(sshd, tmp_path)
    (tmp_path / "lose-job").touch()
    done = _submit(env, tmp_path)
    assert done.returncode == 3, done.stderr
    assert "not submitted: dev has no job with comment ntui-submit:" in done.stderr
    calls = _trace(tmp_path)
    assert sum(c[0] not in ("squeue", "sacct") for c in calls) == 1
    assert [c[0] for c in calls if c[0] in ("squeue", "sacct")] == ["squeue", "sacct"]


def test_the_submissions_facts_go_to_the_clusters_history_even_when_its_answer_was_lost(
        sshd: sshd_support.Sshd, tmp_path: Path, cluster_state: Path) -> None:
    from ntui.core.records.history import History

    env = dict(_laptop(sshd, tmp_path), NTUI_REMOTE_AGENT=f"{sys.executable} -m ntui agent --stdio")
    done = _submit(env, tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "9001", done.stderr
    assert "kept in its history there" in done.stderr
    history = History(cluster_state)
    try:
        entry = history.get("9001")
    finally:
        history.close()
    assert entry is not None and entry.status == "submitted" and entry.log_dir == str(tmp_path / "logs")
    (sbatch,) = [c for c in _trace(tmp_path) if c[0] not in ("squeue", "sacct")]
    assert f"--comment=ntui-submit:{entry.token}" in sbatch  # the intent's token is the job's comment
    assert entry.script.startswith("#!") and entry.launcher == "accelerate"
    assert not (tmp_path / "state").exists()  # nothing on the laptop's side


def test_the_lookups_only_take_our_tag_and_name_the_jobs_they_cannot_tell() -> None:
    tag = new_tag()
    squeue, sacct = build_lookup_argvs("train; rm -rf ~")
    assert squeue[-2:] == ["--name=train; rm -rf ~", "--format=%i|%k"] and "--name=train; rm -rf ~" in sacct
    assert parse_lookup(f"11|{new_tag()}\n12|{tag}\n13|\n14|my own words\n", tag) == ("12", ("13", "14"))
    assert parse_lookup("garbage\n\n", tag) == (None, ())
    assert new_tag() != tag and os.path.basename(squeue[0]) == "squeue"
