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

#: Records its call (and the script it read), keeps the job (its comment) in a file squeue reads, then drops the ssh
#: connection it came by (kills the sshd process serving it) before answering: the answer is lost, the job was
#: submitted. With LOSE_JOB the job is dropped too (sbatch refused it as the link went). A job array is listed as
#: squeue lists one: its tasks, the pending ones folded.
SBATCH = r'''
import json, os, signal, sys
script = sys.stdin.read()
with open(SCRIPT, "w") as f:
    f.write(script)
if "--test-only" in sys.argv:
    with open(TRACE, "a") as f:
        f.write(json.dumps(["sbatch-test-only", *sys.argv[1:]]) + "\n")
    ok = script.startswith("#!") and "#SBATCH" in script
    sys.stderr.write("sbatch: Job 9100 to start at 2026-12-05T06:00:00 using 1 processors on nodes n1 in partition "
                     "debug\n" if ok else "sbatch: error: no script on standard input\n")
    sys.exit(0 if ok else 1)
comment = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--comment="))
try:
    job = str(9001 + sum(json.loads(c)[0] == "--parsable" for c in open(TRACE).read().splitlines()))
except FileNotFoundError:
    job = "9001"
with open(TRACE, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
if not os.path.exists(LOSE_JOB):
    with open(QUEUE, "a") as f:
        if "#SBATCH --array=" in script:
            f.write(job + "_0|" + comment + "\n" + job + "_[1-5%2]|" + comment + "\n")
        else:
            f.write(job + "|" + comment + "\n")
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
import json, os, sys
if "-j" in sys.argv and os.path.exists(SACCT_OUT):  # a sweep's tasks
    print(open(SACCT_OUT).read(), end="")
else:
    with open(TRACE, "a") as f:
        f.write(json.dumps(["sacct", *sys.argv[1:]]) + "\n")
'''

SCONTROL = r'''
import os, sys
if sys.argv[1:4] == ["show", "partition", "-o"]:
    sys.stdout.write(PARTITIONS)
elif sys.argv[1:3] == ["show", "config"] and os.path.exists(MAX_ARRAY):
    print("MaxArraySize            = " + open(MAX_ARRAY).read().strip())
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
              f"LOSE_JOB = {str(tmp_path / 'lose-job')!r}\nPARTITIONS = {PARTITIONS!r}\n"
              f"SCRIPT = {str(tmp_path / 'script')!r}\nMAX_ARRAY = {str(tmp_path / 'max-array')!r}\n"
              f"SACCT_OUT = {str(tmp_path / 'sacct-out')!r}\n")
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


def _submit(env: dict[str, str], tmp_path: Path, preset: str = "local-accelerate"
            ) -> subprocess.CompletedProcess[str]:
    return _ntui(env, "submit", str(ROOT / f"presets/{preset}.yaml"), "--hold", "--set",
                 f"logs.dir={tmp_path / 'logs'}")


def _ntui(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ntui", "--cluster", "dev", *argv], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


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
    # a job array: its tasks, pending ones folded, are the array's id
    assert parse_lookup(f"77_[2-5%2]|{tag}\n77_0|{tag}\n", tag) == ("77", ())
    assert parse_lookup("80_1|\n80_[2-3]|\n", tag) == (None, ("80",))
    assert new_tag() != tag and os.path.basename(squeue[0]) == "squeue"


def _with_agent(sshd: sshd_support.Sshd, tmp_path: Path) -> dict[str, str]:
    return dict(_laptop(sshd, tmp_path), NTUI_REMOTE_AGENT=f"{sys.executable} -m ntui agent --stdio")


def test_a_sweep_writes_its_manifest_and_records_on_the_cluster_and_is_submitted_once(
        sshd: sshd_support.Sshd, tmp_path: Path, cluster_state: Path) -> None:
    from ntui.core.jobfiles.manifest import job_file_path, manifest_of_script, read_job_file, read_manifest
    from ntui.core.records.history import History

    env = _with_agent(sshd, tmp_path)
    done = _submit(env, tmp_path, "local-sweep")
    assert done.returncode == 0 and done.stdout.strip() == "9001", done.stderr
    assert "not submitted again" in done.stderr and "kept in its history there" in done.stderr
    calls = _trace(tmp_path)
    (sbatch,) = [c for c in calls if c[0] not in ("squeue", "sacct")]  # the array, once
    lookup = [c for c in calls if c[0] == "squeue"]
    assert lookup and "--name=local-sweep" in lookup[0]  # found by its tasks' comment
    script = (tmp_path / "script").read_text()
    assert "#SBATCH --array=0-5%2" in script
    manifest = manifest_of_script(script)
    assert manifest is not None and os.path.dirname(manifest) == str(tmp_path / "logs")
    m = read_manifest(manifest)  # written there before sbatch, where the script reads it
    assert m.names == ("lr", "seed") and m.values(5) == {"lr": "1e-4", "seed": "3"}
    assert not [p.name for p in (tmp_path / "logs").iterdir() if p.name.startswith(".")]  # no staging left
    history = History(cluster_state)
    try:
        entry = history.get("9001")
    finally:
        history.close()
    assert entry is not None and entry.status == "submitted" and entry.script == script
    assert f"--comment=ntui-submit:{entry.token}" in sbatch
    job = read_job_file(job_file_path(str(tmp_path / "logs"), entry.log_stem, "9001"))
    assert job is not None and job.indices == tuple(range(6)) and job.parallel == 2
    assert job.manifest == os.path.basename(manifest)
    assert not (tmp_path / "state").exists()  # nothing on the laptop's side

    shown = _ntui(env, "sweep", "9001", "--json")  # afterwards, the sweep's table from the cluster's files
    assert shown.returncode == 0, shown.stderr
    tasks = json.loads(shown.stdout)["tasks"]
    assert [t["task"] for t in tasks] == list(range(6)) and tasks[4]["values"] == {"lr": "1e-4", "seed": "2"}


def test_a_sweep_larger_than_the_clusters_max_array_size_is_not_submitted(sshd: sshd_support.Sshd,
                                                                            tmp_path: Path) -> None:
    env = _with_agent(sshd, tmp_path)
    (tmp_path / "max-array").write_text("4")
    done = _submit(env, tmp_path, "local-sweep")
    assert done.returncode == 2, done.stderr
    assert "MaxArraySize is 4" in done.stderr
    assert not (tmp_path / "trace.jsonl").exists()  # sbatch never ran
    assert not (tmp_path / "logs").exists()  # nor was a manifest written there


def test_a_sweep_without_an_agent_there_is_not_submitted(sshd: sshd_support.Sshd, tmp_path: Path) -> None:
    done = _submit(_laptop(sshd, tmp_path), tmp_path, "local-sweep")
    assert done.returncode == 2, done.stderr
    assert "manifest is written on dev by ntui's agent" in done.stderr
    assert not (tmp_path / "trace.jsonl").exists()


def test_resubmit_failed_runs_a_sweeps_failed_tasks_there_with_its_manifest(
        sshd: sshd_support.Sshd, tmp_path: Path, cluster_state: Path) -> None:
    from ntui.core.jobfiles.manifest import job_file_path, read_job_file
    from ntui.core.records.history import History

    env = _with_agent(sshd, tmp_path)
    first = _submit(env, tmp_path, "local-sweep")
    assert first.returncode == 0 and first.stdout.strip() == "9001", first.stderr
    manifests = sorted(p.name for p in (tmp_path / "logs").glob("*.manifest"))
    end = "|local-sweep|{}|{}|None|2026-12-05T05:00:00|2026-12-05T05:01:00|2026-12-05T05:02:00|00:01:00|n1" \
          "|acct|normal|debug|/home\n"
    (tmp_path / "sacct-out").write_text("".join(
        f"9001_{i}" + end.format(*(("FAILED", "1:0") if i in (1, 4) else ("COMPLETED", "0:0"))) for i in range(6)))

    tried = _ntui(env, "resubmit", "9001", "--failed", "--test-only")  # asks sbatch --test-only there, no more
    assert tried.returncode == 0, tried.stderr
    assert "ok: dev would start it at 2026-12-05T06:00:00 on n1 in debug" in tried.stdout
    assert "resubmitting tasks 1,4" in tried.stderr and "task 4: lr=1e-4  seed=2" in tried.stderr
    assert [c[0] for c in _trace(tmp_path)].count("sbatch-test-only") == 1

    again = _ntui(env, "resubmit", "9001", "--failed")
    assert again.returncode == 0, again.stderr
    assert "resubmitted tasks 1,4 of sweep 9001 as 9002 on dev" in again.stderr, again.stderr
    sbatches = [c for c in _trace(tmp_path) if c[0] not in ("squeue", "sacct", "sbatch-test-only")]
    assert len(sbatches) == 2 and "--array=1,4%2" in sbatches[1]  # the failed tasks, once
    assert sorted(p.name for p in (tmp_path / "logs").glob("*.manifest")) == manifests  # the same values
    history = History(cluster_state)
    try:
        entry = history.get("9002")
    finally:
        history.close()
    assert entry is not None and entry.resubmit_of == "9001" and entry.status == "submitted"
    job = read_job_file(job_file_path(str(tmp_path / "logs"), entry.log_stem, "9002"))
    assert job is not None and job.indices == (1, 4) and job.resubmit_of == "9001"
    assert not (tmp_path / "state").exists()


def test_submit_test_only_gives_the_script_on_sbatchs_standard_input_there(sshd: sshd_support.Sshd,
                                                                           tmp_path: Path) -> None:
    env = _laptop(sshd, tmp_path)
    done = _ntui(env, "submit", str(ROOT / "presets/local-accelerate.yaml"), "--test-only", "--set",
                 f"logs.dir={tmp_path / 'logs'}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok: dev would start it at 2026-12-05T06:00:00 on n1 in debug"
    assert [c[0] for c in _trace(tmp_path)] == ["sbatch-test-only"]  # nothing submitted
    assert (tmp_path / "script").read_text().startswith("#!")
    checked = _ntui(env, "check", str(ROOT / "presets/local-sweep.yaml"), "--test-only", "--set",
                    f"logs.dir={tmp_path / 'logs'}")  # ntui check's, a sweep's: the same, nothing written there
    assert checked.returncode == 0 and checked.stdout.startswith("ok: dev would start it at"), checked.stderr
    assert "#SBATCH --array=0-5%2" in (tmp_path / "script").read_text() and not (tmp_path / "logs").exists()
    assert [c[0] for c in _trace(tmp_path)] == ["sbatch-test-only"] * 2
    what_if = _ntui(env, "check", str(ROOT / "presets/local-sweep.yaml"), "--what-if")
    assert what_if.returncode == 2 and "--what-if gives sbatch a script file per shape" in what_if.stderr
