"""End to end on the real dev cluster: ntui submits, Slurm runs real gloo training on two nodes.

Every launcher: 2 nodes x 2 processes, world size 4, ranks 0-3 exactly once, two per node, the
all-reduce right, and the program's argv exactly as given (hostile strings included), read back
from the per-rank log files whose paths ntui derives from the job id.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ntui.core.compose.rules import PORT_BASE, PORT_SPAN
from tests.cluster.conftest import REPO, DevCluster

pytestmark = pytest.mark.cluster

HOSTILE_ARGS = ["$(touch CANARY)", "it's", 'say "hi"', "a b  c", "x;y", "`id`", "--lr=0.1", "", "ünï"]


def ntui(cluster: DevCluster, *args: str, timeout: float = 300, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    full = dict(cluster.env)
    full["PATH"] = f"{Path(sys.executable).parent}:{full.get('PATH', '')}"
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "ntui", *args], env=full, capture_output=True, text=True, errors="replace",
        timeout=timeout, cwd=full.get("NTUI_TEST_CWD", str(REPO)),
    )


def rank_records(log_dir: Path, stem: str, job_id: str) -> list[dict[str, Any]]:
    records = []
    for path in sorted(log_dir.glob(f"{stem}-{job_id}-rank-*.out")):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("NTUI_CHECK "):
                rec = json.loads(line[len("NTUI_CHECK "):])
                rec["file"] = path.name
                records.append(rec)
    return records


@pytest.mark.parametrize("preset", ["local-srun", "local-torchrun", "local-accelerate"])
def test_launcher_trains_across_two_nodes(dev_cluster: DevCluster, tmp_path: Path, preset: str) -> None:
    log_dir = tmp_path / "logs"
    args_yaml = json.dumps(HOSTILE_ARGS)
    t0 = time.monotonic()
    res = ntui(dev_cluster, "submit", preset, "--wait", "--set", f"logs.dir={log_dir}",
               "--set", f"args={args_yaml}", env={"NTUI_TEST_CWD": str(tmp_path)})
    wall = time.monotonic() - t0
    assert res.returncode == 0, res.stdout + res.stderr
    job_id = res.stdout.strip().splitlines()[0]
    assert job_id.isdigit()
    assert "COMPLETED" in res.stderr
    records = rank_records(log_dir, preset, job_id)
    assert sorted(r["rank"] for r in records) == [0, 1, 2, 3], records
    for r in records:
        assert r["file"] == f"{preset}-{job_id}-rank-{r['rank']}.out", "rank N's output is in rank N's file"
        assert r["world_size"] == 4
        assert r["allreduce"] == 10.0 and r["ok"]
        assert r["argv"] == HOSTILE_ARGS
        assert r["job_id"] == job_id
    assert Counter(r["node"] for r in records) == {"nid001": 2, "nid002": 2}
    assert not (tmp_path / "CANARY").exists()
    # The script ntui submitted sits next to the logs, readable by the user only.
    script = log_dir / f"{preset}-{job_id}.sbatch"
    assert script.exists() and (script.stat().st_mode & 0o077) == 0
    # `ntui logs --rank 3` shows rank 3's output.
    logs = ntui(dev_cluster, "logs", job_id, "--rank", "3", timeout=60)
    assert logs.returncode == 0, logs.stderr
    assert '"rank": 3' in logs.stdout
    hist = ntui(dev_cluster, "history", "--json", timeout=60)
    assert any(e["job_id"] == job_id and e["preset"] == preset for e in json.loads(hist.stdout))
    print(f"\n[e2e] {preset}: job {job_id} wall {wall:.1f}s")


def test_failing_rank_fails_the_job(dev_cluster: DevCluster, tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    res = ntui(dev_cluster, "submit", "local-torchrun", "--wait", "--set", f"logs.dir={log_dir}",
               "--set", "env.NTUI_CHECK_FAIL_RANK=2")
    assert res.returncode == 4, res.stdout + res.stderr
    assert "FAILED" in res.stderr
    job_id = res.stdout.strip().splitlines()[0]
    rank2 = (log_dir / f"local-torchrun-{job_id}-rank-2.out").read_text()
    assert "Traceback (most recent call last)" in rank2
    assert "RuntimeError: ntui check: rank 2 fails on purpose" in rank2
    for other in (0, 1, 3):
        text = (log_dir / f"local-torchrun-{job_id}-rank-{other}.out").read_text()
        assert "fails on purpose" not in text


#: torch's log lines (glog's form: I1204 22:51:50.708000 10795 torch/...:747] ...), one or several, starting inside
#: another line, then that line's rest: the other node's agent's chunk that srun wrote in the middle of a line.
_GLOG_LINE = r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]\n]+\][^\n]*\n"
_INSERTED_GLOG_LINES = re.compile(rf"(?<=[^\n])(?P<chunk>(?:{_GLOG_LINE})+)(?P<rest>(?![IWEF]\d{{4}} )[^\n]*\n)")


def rejoin_cut_lines(text: str) -> str:
    """``text`` with each line cut by another agent's chunk whole again, the chunk's lines after it."""
    while (joined := _INSERTED_GLOG_LINES.sub(r"\g<rest>\g<chunk>", text)) != text:
        text = joined
    return text


def test_user_rdzv_conf_is_merged_on_two_nodes(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """R13 with the real torchrun: the user's --rdzv-conf key and ntui's per-node is_host (R8) reach
    both agents in the one configuration torch reads (its INFO log prints it; a user value is text,
    torch's own default timeout the number 900), and the job trains."""
    log_dir = tmp_path / "logs"
    res = ntui(dev_cluster, "submit", "local-torchrun", "--wait", "--set", f"logs.dir={log_dir}",
               "--set", 'launcher.extra-args=["--rdzv-conf=timeout=900"]', "--set", "env.LOGLEVEL=INFO")
    assert res.returncode == 0, res.stdout + res.stderr
    job_id = res.stdout.strip().splitlines()[0]
    assert "COMPLETED" in res.stderr
    assert sorted(r["rank"] for r in rank_records(log_dir, "local-torchrun", job_id)) == [0, 1, 2, 3]
    batch = (log_dir / f"local-torchrun-{job_id}.out").read_text(errors="replace")
    # The two nodes' agents write into the one batch log through srun, which forwards what it reads as it comes: one
    # agent's lines can land inside the other's line (seen: "{'timeout': '900', 'is_host" + a whole line of the other
    # agent + "': '1'}"; and "'is_hos" + eleven lines of it + "t': '1'}"). The cut line is made whole before reading.
    batch = rejoin_cut_lines(batch)
    configs = [ast.literal_eval(line.split("rdzv_configs", 1)[1].split(":", 1)[1].strip())
               for line in batch.splitlines() if "rdzv_configs" in line]
    assert sorted(c.get("is_host") for c in configs) == ["0", "1"], batch
    assert all(c.get("timeout") == "900" for c in configs), configs


@pytest.mark.parametrize("preset", ["local-torchrun", "local-accelerate"])
def test_a_derived_port_in_use_on_the_first_node_is_stepped_over(dev_cluster: DevCluster, tmp_path: Path,
                                                                  preset: str) -> None:
    """R4 with real rendezvous: the ports the next jobs' ids derive are held by listening sockets on this host (where
    both dev nodes live, as a service or another job's store would hold one on a real first node); the batch shell
    steps over them, says so in the batch log, and the job trains on the port it took."""
    probe = dev_cluster.run("sbatch", "--parsable", "--hold", "-J", "ntui-port-probe", "-o", "/dev/null",
                            "--wrap", "true")
    assert probe.returncode == 0, probe.stderr
    last = int(probe.stdout.strip().split(";")[0])
    dev_cluster.run("scancel", str(last))
    ports = {PORT_BASE + job_id % PORT_SPAN for job_id in range(last + 1, last + 21)}  # this lane's next jobs
    held = []
    try:
        for port in sorted(ports):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.append(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the TIME_WAIT of a job's own store
            s.bind(("0.0.0.0", port))
            s.listen()
        log_dir = tmp_path / "logs"
        res = ntui(dev_cluster, "submit", preset, "--wait", "--set", f"logs.dir={log_dir}")
    finally:
        for s in held:
            s.close()
    assert res.returncode == 0, res.stdout + res.stderr
    job_id = res.stdout.strip().splitlines()[0]
    derived = PORT_BASE + int(job_id) % PORT_SPAN
    assert derived in ports, (last, job_id)
    batch = (log_dir / f"{preset}-{job_id}.out").read_text(errors="replace")
    said = re.search(rf"^ntui: port {derived} is in use on nid001; MASTER_PORT=(\d+) \(R4\)$", batch, flags=re.M)
    assert said is not None, batch
    assert int(said[1]) not in ports
    assert sorted(r["rank"] for r in rank_records(log_dir, preset, job_id)) == [0, 1, 2, 3]


def test_test_only(dev_cluster: DevCluster, tmp_path: Path) -> None:
    ok = ntui(dev_cluster, "submit", "local-torchrun", "--test-only", "--set", f"logs.dir={tmp_path}", timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "would start at" in ok.stdout
    bad = ntui(dev_cluster, "submit", "local-srun", "--test-only", "--set", "sbatch.gpus-per-node=5",
               "--set", "sbatch.ntasks-per-node=5", "--set", f"logs.dir={tmp_path}", timeout=60)
    assert bad.returncode == 3
    assert "Requested node configuration is not available" in bad.stderr
    assert "Perlmutter" not in bad.stderr  # no site said: ntui knows no node and leaves it to Slurm (issue 44)
    # The words of G6, now the NERSC site's: with the site (its defaults dropped, so the job is the same) ntui says
    # them itself, before sbatch.
    nersc = ntui(dev_cluster, "submit", "local-srun", "--test-only", "--set", "sbatch.gpus-per-node=5",
                 "--set", "sbatch.ntasks-per-node=5", "--set", "sbatch.qos=false", "--set", "sbatch.module=false",
                 "--set", "sbatch.image=false", "--set", "container.runtime=none", "--set", f"logs.dir={tmp_path}",
                 timeout=60, env={"NTUI_SITE_DIR": str(REPO / "sites" / "nersc")})
    assert nersc.returncode == 2, nersc.stderr
    assert "5 GPUs per node: Perlmutter nodes have 4; Slurm will refuse (NERSC-GPUS)" in nersc.stderr


def _state(cluster: DevCluster, job_id: str) -> str:
    res = ntui(cluster, "jobs", "--json", timeout=60)
    assert res.returncode == 0, res.stderr
    for job in json.loads(res.stdout):
        if job["job_id"] == job_id:
            return str(job["state"])
    return ""


def test_cancel_running_job(dev_cluster: DevCluster, tmp_path: Path) -> None:
    res = ntui(dev_cluster, "submit", "local-srun", "--set", f"logs.dir={tmp_path}",
               "--set", "env.NTUI_CHECK_SLEEP=300", timeout=60)
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    deadline = time.monotonic() + 120
    while _state(dev_cluster, job_id) != "RUNNING":
        assert time.monotonic() < deadline, "job never started"
        time.sleep(1)
    show = ntui(dev_cluster, "show", job_id, timeout=60)
    assert show.returncode == 0 and "RUNNING" in show.stdout and "Preset" in show.stdout
    version = dev_cluster.env.get("NTUI_DEV_SLURM", "22.05")  # the cluster's, from scripts/dev-cluster env
    assert re.search(rf"^ +Slurm: {re.escape(version)}\.\d+$", show.stdout, re.M), show.stdout
    cancel = ntui(dev_cluster, "cancel", job_id, timeout=60)
    assert cancel.returncode == 0, cancel.stderr
    deadline = time.monotonic() + 60
    while True:
        show = ntui(dev_cluster, "show", job_id, timeout=60)
        if "CANCELLED" in show.stdout:
            break
        assert time.monotonic() < deadline, show.stdout
        time.sleep(1)
    assert _state(dev_cluster, job_id) in ("", "CANCELLED", "COMPLETING")


def test_env_scrubbed_inside_allocation(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """Submitting from inside an allocation: SLURM_*/SBATCH_* would override the script."""
    res = ntui(dev_cluster, "submit", "local-srun", "--hold", "--set", f"logs.dir={tmp_path}", timeout=60,
               env={"SLURM_JOB_ID": "999999", "SBATCH_TIMELIMIT": "1", "SLURM_NTASKS_PER_NODE": "7"})
    assert res.returncode == 0, res.stderr
    assert "removed SBATCH_TIMELIMIT, SLURM_JOB_ID, SLURM_NTASKS_PER_NODE" in res.stderr
    job_id = res.stdout.strip()
    show = ntui(dev_cluster, "show", job_id, "--json", timeout=60)
    details = json.loads(show.stdout)
    assert details["time_limit"] == "00:10:00"
    assert ntui(dev_cluster, "cancel", job_id, timeout=60).returncode == 0


def test_progress_of_a_pending_job_says_it_has_not_started(dev_cluster: DevCluster, tmp_path: Path) -> None:
    """Before: "rank 0's log is not there" and exit 2, for a job that was only waiting."""
    res = ntui(dev_cluster, "submit", "local-srun", "--hold", "--set", f"logs.dir={tmp_path}", timeout=60)
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    try:
        said = ntui(dev_cluster, "progress", job_id, timeout=60)
        assert said.returncode == 0, said.stderr
        assert f"job {job_id} is pending: it has not started" in said.stdout and "not there" not in said.stderr
        as_json = json.loads(ntui(dev_cluster, "progress", job_id, "--json", timeout=60).stdout)
        assert as_json["state"] == "PENDING" and as_json["step"] is None
    finally:
        assert ntui(dev_cluster, "cancel", job_id, timeout=60).returncode == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a private controller copy")
def test_unreachable_controller_is_a_clear_error(dev_cluster: DevCluster, tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    text = dev_cluster.slurm_conf.read_text()
    text = "\n".join(
        "SlurmctldPort=1" if ln.startswith("SlurmctldPort=") else ln for ln in text.splitlines()
    ) + "\nMessageTimeout=2\n"
    conf.write_text(text)
    res = ntui(dev_cluster, "jobs", env={"SLURM_CONF": str(conf)}, timeout=60)
    assert res.returncode == 3
    assert "controller" in res.stderr.lower() or "unable to contact" in res.stderr.lower(), res.stderr


def test_a_launcher_missing_from_path_is_warned_then_named_on_its_nodes(dev_cluster: DevCluster,
                                                                        tmp_path: Path) -> None:
    """A shell whose PATH lacks the environment with torchrun (python alone is there): ``submit`` warns (E4) and,
    submitted anyway, the job dies with exit 127 on its nodes; ``logs --triage`` names the command and those nodes
    instead of "the launcher on nid002 (srun task 1) failed first"."""
    log_dir = tmp_path / "logs"
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    # the Slurm clients stay reachable (the newer versions' wrappers come first on the cluster's PATH)
    slurm_dirs = [d for d in dev_cluster.env.get("PATH", "").split(os.pathsep)
                  if d and (Path(d) / "sbatch").exists() and not (Path(d) / "torchrun").exists()]
    # (/usr/sbin: the newer versions' client wrappers chroot into their root)
    path = os.pathsep.join([str(bare), *slurm_dirs, "/usr/sbin", "/usr/bin", "/sbin", "/bin"])
    assert shutil.which("torchrun", path=path) is None
    env = dict(dev_cluster.env, PATH=path)
    res = subprocess.run([sys.executable, "-m", "ntui", "submit", "local-torchrun", "--wait",
                          "--set", f"logs.dir={log_dir}", "--set", "sbatch.job-name=no-torchrun"],
                         env=env, capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert "torchrun is not on the PATH this job inherits" in res.stderr and "(E4)" in res.stderr, res.stderr
    assert res.returncode == 4, res.stdout + res.stderr  # submitted anyway: the warning does not refuse
    job_id = res.stdout.strip().splitlines()[0]
    triage = ntui(dev_cluster, "logs", job_id, "--triage", timeout=120)
    # Both nodes' torchrun fail at once, but srun terminates the step at the first exit: a node whose task had not
    # exec'd yet is "Terminated", not 127 (seen once in a full run on 26.05). The verdict names the nodes whose exit
    # the batch log gives as 127, and those only.
    batch = (log_dir / f"no-torchrun-{job_id}.out").read_text()
    failed = sorted(set(re.findall(r"^srun: error: (\S+): tasks? \S+: Exited with exit code 127$", batch, re.M)))
    assert failed and set(failed) <= {"nid001", "nid002"}, batch
    said = f"torchrun was not found on {', '.join(failed)} (exit 127"
    assert said in triage.stdout, triage.stdout + triage.stderr + batch
    show = ntui(dev_cluster, "history", "--json", timeout=60)
    entry = next(e for e in json.loads(show.stdout) if e["job_id"] == job_id)
    assert entry["verdict"] and "torchrun was not found" in entry["verdict"], entry
