"""The Slurm layer's parsers on the captures of every tested Slurm version (tests/data/slurm/22.05, 24.11, 26.05;
tests/data/slurm/README.md lists each capture and every difference found). Each test runs once per version and
asserts what ntui must make of the answer, the same on all three; where the versions differ, the test says how."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.jobfiles.lognames import LogPaths
from ntui.core.logs.joblogs import job_verdict
from ntui.core.records.record import infer_from_batch_log
from ntui.core.slurm.actions import cancel, hold, release, requeue
from ntui.core.slurm.common import (
    STATE_CODES,
    StateCategory,
    exit_code_meaning,
    normalize_state,
    parse_exit_code,
    state_category,
)
from ntui.core.slurm.runner import ControllerUnreachable, JobNotFound, SlurmRejected, classify
from ntui.core.slurm.sacct import final_state, parse_sacct_records, parse_sacct_steps, restore_exit_code, sacct_jobs
from ntui.core.slurm.sacctmgr import parse_sacctmgr_assoc, user_associations
from ntui.core.slurm.sbatch import parse_sbatch_parsable, parse_sbatch_test_only, submit
from ntui.core.slurm.scontrol import parse_key_values, parse_scontrol_jobs, parse_scontrol_partitions, show_job
from ntui.core.slurm.sdiag import parse_sdiag_rpc_by_type, parse_sdiag_rpc_by_user
from ntui.core.slurm.sinfo import parse_node_states, parse_sinfo_partitions
from ntui.core.slurm.squeue import SQUEUE_FIELDS, parse_squeue, probe_squeue_fields
from ntui.core.slurm.srunlines import parse_cancel
from ntui.core.slurm.version import (
    SlurmVersion,
    forget_versions,
    installed_version,
    parse_version,
    sacct_subtracts_128,
)
from tests.support.fakes import CAPTURE_VERSIONS, CAPTURES, FakeRunner, capture, capture_jobs

#: the field list the squeue captures were made with (SQUEUE_FIELDS without exit_code)
CAPTURE_FIELDS = SQUEUE_FIELDS[:-1]
RELEASE = {"22.05": (22, 5, 8), "24.11": (24, 11, 5), "26.05": (26, 5, 5)}
CLIENTS = ("squeue", "sbatch", "scontrol", "scancel", "sacct", "sacctmgr", "sinfo", "sdiag", "srun", "sprio",
           "salloc", "sstat", "strigger")

versions = pytest.mark.parametrize("v", CAPTURE_VERSIONS)


@pytest.fixture(autouse=True)
def _fresh_versions() -> None:
    forget_versions()


def cap(v: str, name: str) -> str:
    return capture(name, version=v).stdout


# ---------------------------------------------------------------- version


@versions
def test_every_client_says_the_same_version(v: str) -> None:
    assert {parse_version(cap(v, f"{c}_version")) for c in CLIENTS} == {RELEASE[v]}
    assert str(SlurmVersion(RELEASE[v])) == f"{v}.{RELEASE[v][2]}"  # Slurm's spelling: 26.05.5


@versions
def test_installed_version_is_asked_once(v: str) -> None:
    fake = FakeRunner({"sinfo --version": capture("sinfo_version", version=v)})
    assert installed_version(fake) == installed_version(fake) == SlurmVersion(RELEASE[v])
    assert len(fake.history) == 1 and fake.calls == 0  # --version is local: not one of the counted calls
    assert sacct_subtracts_128(installed_version(fake)) is (v != "26.05")  # 25.11 stopped subtracting


def test_installed_version_unknown_is_none() -> None:
    fake = FakeRunner({"sinfo --version": capture("squeue_unreachable", version="26.05")})  # an error, rc 1
    assert installed_version(fake) is None and installed_version(fake) is None
    assert len(fake.history) == 1  # a fake is asked once, failure included
    assert not sacct_subtracts_128(None)


# ---------------------------------------------------------------- sbatch


@versions
def test_test_only_start_line(v: str) -> None:
    """26.05 prints "Job N to start at T a using ..." (25.05+): the same result as 22.05's line."""
    jobs = capture_jobs(v)
    ok = parse_sbatch_test_only(capture("sbatch_test_only_ok", version=v))
    assert ok.ok and ok.start and ok.job_id and int(ok.job_id) > int(jobs["failed"])
    assert (ok.processors, ok.nodes, ok.partition, ok.cluster) == (4, "nid[001-002]", "debug", None)
    over = parse_sbatch_test_only(capture("sbatch_test_only_time_over_limit", version=v))
    assert (over.ok, over.processors, over.nodes, over.partition) == (True, 1, "nid001", "debug")
    long = parse_sbatch_test_only(capture("sbatch_test_only_long_partition", version=v))
    assert (long.ok, long.nodes, long.partition) == (True, "nid001", "long")
    qos = parse_sbatch_test_only(capture("sbatch_test_only_qos_not_allowed", version=v))
    assert qos.ok and qos.partition == "debug"  # test-only does not check the association's QOS (all three)


def test_test_only_start_line_with_a_cluster() -> None:
    line = "sbatch: Job 7 to start at 2026-12-01T10:00:00 on cluster perlmutter a using 8 processors on nodes " \
           "nid[001-002] in partition regular\n"
    r = parse_sbatch_test_only(capture("sbatch_test_only_ok", version="26.05").__class__(
        ("sbatch",), 0, "", line, 0.0))
    assert (r.job_id, r.cluster, r.processors, r.nodes, r.partition) == (
        "7", "perlmutter", 8, "nid[001-002]", "regular")


@versions
@pytest.mark.parametrize(("name", "reason"), [
    ("sbatch_test_only_gpus5", "Requested node configuration is not available"),
    ("sbatch_test_only_too_many_nodes", "Requested node configuration is not available"),
    ("sbatch_test_only_bad_partition", "Invalid partition name specified"),
    ("sbatch_test_only_bad_account", "Invalid account or account/partition combination specified"),
])
def test_test_only_refusals(v: str, name: str, reason: str) -> None:
    r = parse_sbatch_test_only(capture(name, version=v))
    assert (r.ok, r.reason, r.job_id) == (False, reason, None)


@versions
@pytest.mark.parametrize(("name", "reason"), [
    ("sbatch_gpus5", "Requested node configuration is not available"),
    ("sbatch_bad_partition", "Invalid partition name specified"),
    ("sbatch_bad_constraint", "Invalid feature specification"),
    ("sbatch_bad_account", "Invalid account or account/partition combination specified"),
])
def test_submit_refusals(v: str, name: str, reason: str) -> None:
    with pytest.raises(SlurmRejected) as info:
        submit(FakeRunner({"sbatch": capture(name, version=v)}), "job.sh")
    assert info.value.reason == reason


@versions
def test_parsable(v: str) -> None:
    assert parse_sbatch_parsable(cap(v, "sbatch_parsable")).job_id == capture_jobs(v)["parsable"]


# ---------------------------------------------------------------- squeue


@versions
def test_squeue_mix(v: str) -> None:
    ids = capture_jobs(v)
    jobs = parse_squeue(cap(v, "squeue_mix_array"), fields=CAPTURE_FIELDS)
    assert len(jobs) == 18
    by_id = {j.job_id: j for j in jobs}
    train = by_id[ids["running_2node_gpu"]]
    assert (train.name, train.state, train.nodes, train.num_nodes) == ("train 2n", "RUNNING",
                                                                      ("nid001", "nid002"), 2)
    assert train.reason == "" and train.qos is None and train.tres == {"cpu": "2", "node": "2", "billing": "2"}
    assert train.time_limit_s == 3600 and train.start_time is not None
    assert by_id[ids["running_unicode"]].name == "ünï cödé: run #1"
    array = ids["running_array"]
    task0 = by_id[f"{array}_0"]
    assert task0.state == "RUNNING" and task0.array_job_id == array and task0.raw_job_id != array
    assert {by_id[f"{array}_{i}"].reason for i in (1, 2, 3)} == {"JobArrayTaskLimit"}
    pending = {role: by_id[ids[role]].reason for role in ("pending_resources", "pending_priority", "pending_held",
                                                          "pending_begin", "pending_dependency",
                                                          "pending_time_over_limit")}
    assert pending == {"pending_resources": "Resources", "pending_priority": "Priority",
                       "pending_held": "JobHeldUser", "pending_begin": "BeginTime",
                       "pending_dependency": "Dependency", "pending_time_over_limit": "PartitionTimeLimit"}
    held = ids["pending_held_array"]
    assert sorted(j.job_id for j in jobs if j.array_job_id == held) == [f"{held}_{i}" for i in range(6)]
    assert all(j.category is StateCategory.PENDING for j in jobs if j.job_id.startswith(held))
    folded = {j.job_id for j in parse_squeue(cap(v, "squeue_mix_noarray"), fields=CAPTURE_FIELDS)}
    assert {f"{array}_[1-3%1]", f"{held}_[0-5]", f"{array}_0"} <= folded and len(folded) == 11


@versions
def test_squeue_all_states_and_exit_code_field(v: str) -> None:
    fields = ("JobID", "State", "Reason")
    jobs = parse_squeue(cap(v, "squeue_all_states"), fields=fields)
    assert len(jobs) == 24 and all(j.category is not StateCategory.OTHER for j in jobs)
    assert {j.state for j in jobs} == {"CANCELLED", "COMPLETED", "FAILED", "PENDING", "RUNNING"}
    # "ExitCode" is rejected by squeue -O in all three (error on stderr, rc 0, the field printed empty)
    fake = FakeRunner({"squeue": capture("squeue_mix_with_exitcode", version=v)})
    assert probe_squeue_fields(fake, (*CAPTURE_FIELDS, "ExitCode")) == ("ExitCode",)


@versions
def test_unreachable_controller(v: str) -> None:
    assert isinstance(classify(capture("squeue_unreachable", version=v)), ControllerUnreachable)


# ---------------------------------------------------------------- scontrol show job


def job(v: str, name: str) -> object:
    (details,) = parse_scontrol_jobs(cap(v, f"scontrol_show_job_{name}"))
    return details


@versions
def test_show_job_running(v: str) -> None:
    """TRES: 22.05 prints TRES=, 23.02+ ReqTRES= and AllocTRES=; TresPerNode gres:gpu:4 (22.05) / gres/gpu:4;
    StdErr the stdout path (22.05, 24.11) / empty (26.05): the same meaning, "with stdout"."""
    (d,) = parse_scontrol_jobs(cap(v, "scontrol_show_job_running_2node_gpu"))
    assert (d.job_id, d.name, d.state, d.nodes) == (capture_jobs(v)["running_2node_gpu"], "train 2n", "RUNNING",
                                                    ("nid001", "nid002"))
    assert d.gres_by_node == {"nid001": (0, 1, 2, 3), "nid002": (0, 1, 2, 3)} and d.gpus == 8
    assert d.tres == d.alloc_tres == "cpu=2,node=2,billing=2"
    assert d.req_tres == ("cpu=2,node=2,billing=2" if v == "22.05" else "cpu=2,mem=4000M,node=2,billing=2")
    assert d.tres_per_node == "gres/gpu:4" and d.tres_per_job == ""
    assert d.std_out and d.std_out.endswith(f"/train 2n-{d.job_id}.out")
    assert d.std_err == (None if v == "26.05" else d.std_out)
    assert d.stderr_path == d.std_out
    assert d.command is None  # --wrap: Command=(null)
    assert d.partition == "debug" and d.num_nodes == 2 and d.time_limit_s == 3600


@versions
def test_show_job_pending_and_held(v: str) -> None:
    (p,) = parse_scontrol_jobs(cap(v, "scontrol_show_job_pending"))
    assert (p.state, p.reason, p.nodes, p.alloc_tres) == ("PENDING", "Resources", (), "")
    assert p.req_tres == "cpu=1,mem=2000M,node=1,billing=1" == p.tres
    assert p.tres_per_node == "gres/gpu:2"
    reasons = {name: job(v, name).reason for name in ("held", "begin", "dependency", "time_over_limit")}  # type: ignore[attr-defined]
    assert reasons == {"held": "JobHeldUser", "begin": "BeginTime", "dependency": "Dependency",
                       "time_over_limit": "PartitionTimeLimit"}
    (task,) = parse_scontrol_jobs(cap(v, "scontrol_show_job_array_task_running"))
    array = capture_jobs(v)["running_array"]
    assert (task.job_id, task.array_job_id, task.state) == (f"{array}_0", array, "RUNNING")
    (held,) = parse_scontrol_jobs(cap(v, "scontrol_show_job_held_array"))
    assert held.job_id == f"{capture_jobs(v)['pending_held_array']}_[0-5]" and held.reason == "JobHeldUser"


@versions
def test_show_job_requeued(v: str) -> None:
    (going,) = parse_scontrol_jobs(cap(v, "scontrol_show_job_requeued"))
    assert (going.state, going.category, going.restarts) == ("COMPLETING", StateCategory.COMPLETING, 1)
    (back,) = parse_scontrol_jobs(cap(v, "scontrol_show_job_requeued_pending"))
    assert (back.state, back.reason, back.restarts, back.name) == ("PENDING", "BeginTime", 1, "ünï cödé: run #1")


@versions
def test_show_job_ended_exit_codes_mean_the_same(v: str) -> None:
    """scontrol's ExitCode: a time-limited job is 0:15 (22.05, 24.11: the batch shell killed by SIGTERM) or
    143:0 (26.05: it exited 128 + 15); ntui reads both as SIGTERM."""
    def ended(name: str) -> tuple[str, str, str]:
        (d,) = parse_scontrol_jobs(cap(v, f"scontrol_show_job_{name}"))
        return d.state, d.exit_code, exit_code_meaning(d.exit_code)

    assert ended("completed") == ("COMPLETED", "0:0", "")
    assert ended("failed") == ("FAILED", "3:0", "exit 3")
    assert ended("exit_130") == ("FAILED", "130:0", "SIGINT")
    assert ended("killed_9") == ("FAILED", "0:9", "SIGKILL")
    assert ended("cancelled") == ("CANCELLED", "0:15", "SIGTERM")
    assert ended("timeout") == ("TIMEOUT", "143:0" if v == "26.05" else "0:15", "SIGTERM")


@versions
def test_show_job_unknown(v: str) -> None:
    with pytest.raises(JobNotFound):
        show_job(FakeRunner({"scontrol": capture("scontrol_show_job_unknown", version=v)}), "999999")


# ---------------------------------------------------------------- actions


@versions
def test_actions(v: str) -> None:
    """26.05 says "slurm_suspend error:Invalid job id specified" (no space): still JobNotFound."""
    assert cancel(FakeRunner({"scancel": capture("scancel_unknown", version=v)}), "999999").returncode == 0
    assert isinstance(classify(capture("scancel_unknown_verbose", version=v)), JobNotFound)  # stderr says, rc 0
    for name in ("scancel_running", "scontrol_hold_pending", "scontrol_release_pending", "scontrol_hold_running",
                 "scontrol_release_running", "scontrol_requeue_running"):
        assert classify(capture(name, version=v)) is None, name
    assert hold(FakeRunner({"scontrol": capture("scontrol_hold_pending", version=v)}), "1").returncode == 0
    with pytest.raises(JobNotFound):
        release(FakeRunner({"scontrol": capture("scontrol_release_unknown", version=v)}), "999999")
    with pytest.raises(SlurmRejected, match="pending execution"):
        requeue(FakeRunner({"scontrol": capture("scontrol_requeue_pending", version=v)}), "1")


@versions
def test_create_partition_with_allow_qos(v: str) -> None:
    """26.05 refuses AllowQos without accounting ("Invalid qos specification"); 22.05 and 24.11 accept it."""
    err = classify(capture("scontrol_create_partition_allowqos", version=v))
    if v == "26.05":
        assert isinstance(err, SlurmRejected) and err.reason == "Invalid qos specification"
    else:
        assert err is None


# ---------------------------------------------------------------- partitions, nodes, sinfo


@versions
def test_partitions(v: str) -> None:
    """ExclusiveUser=NO (22.05), + ExclusiveTopo=NO (24.11), Exclusive=NO (26.05): all "NO"."""
    (debug,) = parse_scontrol_partitions(cap(v, "scontrol_show_partition"))
    assert (debug.name, debug.default, debug.up, debug.max_time_s, debug.node_names, debug.total_cpus) == (
        "debug", True, True, 7200, ("nid001", "nid002"), 4)
    assert debug.exclusive == "NO" and debug.allow_accounts is None and debug.max_nodes is None
    parts = {p.name: p for p in parse_scontrol_partitions(cap(v, "scontrol_show_partition_multi"))}
    assert list(parts) == ["debug", "long", "maint", "acctonly"]
    assert parts["long"].max_time_s is None and parts["long"].max_nodes == 1
    assert parts["maint"].state == "DOWN" and parts["maint"].max_time_s == 1800
    assert parts["acctonly"].allow_accounts == ("physics",) and parts["acctonly"].max_time_s == 86400
    # 26.05 refused AllowQos without accounting, so its acctonly partition was made without it
    assert parts["acctonly"].allow_qos == (None if v == "26.05" else ("normal",))
    sinfo = {p.name: p for p in parse_sinfo_partitions(cap(v, "sinfo_partitions_multi"))}
    assert list(sinfo) == list(parts) and sinfo["maint"].state == "DOWN" and sinfo["debug"].default
    (busy,) = parse_sinfo_partitions(cap(v, "sinfo_partitions_busy"), separator="|")
    assert (busy.name, busy.total_nodes, busy.max_time_s) == ("debug", 2, 7200)


@versions
def test_nodes(v: str) -> None:
    """scontrol show node: 24.11 adds ResumeAfterTime=, 26.05 SuspendTime= and drops CapWatts/ExtSensors."""
    nodes = [parse_key_values(line) for line in cap(v, "scontrol_show_node").splitlines() if line.strip()]
    assert [(n["NodeName"], n["State"], n["Gres"], n["CPUTot"]) for n in nodes] == [
        ("nid001", "IDLE", "gpu:4", "2"), ("nid002", "IDLE", "gpu:4", "2")]
    assert all(n["Version"] == v + "." + str(RELEASE[v][2]) for n in nodes)
    idle = parse_node_states(cap(v, "sinfo_node_states_idle"))
    assert [(n.node, n.state, n.healthy) for n in idle] == [("nid001", "idle", True), ("nid002", "idle", True)]
    (_, silent) = parse_node_states(cap(v, "sinfo_node_states_not_responding"))
    assert (silent.state, silent.responding, silent.healthy) == ("idle*", False, False)
    (_, down) = parse_node_states(cap(v, "sinfo_node_states_down"))
    assert (down.state, down.reason, down.healthy) == ("down*", "Not responding", False)
    busy = [line.split("|")[:2] for line in cap(v, "sinfo_nodes_busy").splitlines()]
    assert busy == [["nid001", "allocated"], ["nid002", "allocated"]]


# ---------------------------------------------------------------- states from Slurm 26.05's source


def _state_table(name: str) -> list[list[str]]:
    lines = (CAPTURES / "26.05" / name).read_text().splitlines()
    return [line.split() for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize(("name", "code"), [tuple(row) for row in _state_table("job_states.txt")])
def test_every_job_state_of_2605(name: str, code: str) -> None:
    """Every job state 26.05 can print has its category (EXPEDITING, 25.11+: requeued at once: pending)."""
    assert normalize_state(name) == name
    expected = StateCategory.OTHER if name in ("SUSPENDED", "REVOKED") else None
    assert state_category(name) is not StateCategory.OTHER or expected is StateCategory.OTHER, name
    if code != "-":
        assert STATE_CODES[code] == name and state_category(code) is state_category(name)
    assert state_category("EXPEDITING") is StateCategory.PENDING


#: node states (suffixes as Slurm prints them) that are trouble in the details panel, and ones that are not
_TROUBLE = {"DOWN", "DOWN*", "DRAINED", "DRAINING", "DRAINED*", "FAIL", "FAILING", "INVAL", "MAINT", "REBOOT",
            "REBOOT^", "IDLE*", "ALLOCATED*", "MIXED*", "FUTURE", "UNKNOWN", "POWERING_UP", "POWERED_DOWN"}
_FINE = {"IDLE", "MIXED", "ALLOCATED", "ALLOCATED+", "MIXED-", "COMPLETING", "RESERVED", "PLANNED", "BLOCKED",
         "EXTERNAL", "IDLE~", "IDLE#", "MIXED@"}


@pytest.mark.parametrize("state", [row[0] for row in _state_table("node_states.txt")])
def test_every_node_state_of_2605(state: str) -> None:
    (node,) = parse_node_states(f"nid001\x1f{state.lower()}\x1fnone\n")
    assert node.responding is not state.endswith("*")
    if state in _TROUBLE:
        assert not node.healthy
    if state in _FINE:
        assert node.healthy
    if state.endswith("*"):
        assert not node.healthy  # not responding is always trouble


def test_node_state_lists_cover_the_table() -> None:
    names = {row[0] for row in _state_table("node_states.txt")}
    assert names >= _TROUBLE | _FINE | {"BLOCKED", "EXTERNAL"}


# ---------------------------------------------------------------- sacct and exit codes


def _sacct_runner(v: str, name: str = "sacct_records") -> FakeRunner:
    return FakeRunner({"sacct": capture(name, version=v), "sinfo --version": capture("sinfo_version", version=v)})


@versions
def test_sacct_records(v: str) -> None:
    """sacct before 25.11 takes 128 off an exit code; ntui gives it back where the code is a signal a job
    ends by (srun's 137 for a task killed by SIGKILL read 9:0), so those read the same on every version. A
    plain exit 130 stays 2:0 before 25.11 (indistinguishable from exit 2)."""
    ids = capture_jobs(v, accounting=True)
    raw = {r.job_id: r for r in parse_sacct_records(cap(v, "sacct_records"))}
    fake = _sacct_runner(v)
    got = sacct_jobs(fake, list(ids.values()))

    def rec(role: str) -> tuple[str, str]:
        return got[ids[role]].state, got[ids[role]].exit_code

    assert rec("timeout") == ("TIMEOUT", "0:0")
    assert rec("completed") == ("COMPLETED", "0:0")
    assert rec("failed") == ("FAILED", "3:0")
    assert rec("killed_9") == ("FAILED", "0:9")
    assert rec("srun_killed_9") == ("FAILED", "137:0")  # printed 9:0 before 25.11
    assert raw[ids["srun_killed_9"]].exit_code == ("137:0" if v == "26.05" else "9:0")
    assert rec("exit_130") == rec("srun_exit_130") == ("FAILED", "130:0" if v == "26.05" else "2:0")
    assert rec("steps_2node") == ("FAILED", "3:0")
    assert rec("cancelled_srun") == ("CANCELLED", "0:0") and got[ids["cancelled_srun"]].raw_state == "CANCELLED by 0"
    assert exit_code_meaning(rec("srun_killed_9")[1]) == "SIGKILL"
    # the version is asked only because of 9:0 (26.05 prints 137:0: nothing to give back, nothing asked)
    assert [c.argv[0] for c in fake.history] == (["sacct"] if v == "26.05" else ["sacct", "sinfo"])


@versions
def test_sacct_without_codes_to_restore_asks_no_version(v: str) -> None:
    fake = _sacct_runner(v, "sacct_job_completed")
    text = capture("sacct_records", version=v).stdout.splitlines()[1]  # the completed job
    fake.add("sacct", capture("sacct_records", version=v).__class__(("sacct",), 0, text + "\n", "", 0.0))
    assert list(sacct_jobs(fake, [text.split("|")[0]]).values())[0].exit_code == "0:0"
    assert len(fake.history) == 1


@pytest.mark.parametrize(("v", "printed", "meant"), [
    ("22.05", "15:0", "143:0"),  # a cancelled srun job's 143 (srun's 128 + SIGTERM)
    ("24.11", "9:0", "137:0"),
    ("22.05", "6:0", "134:0"),
    ("22.05", "11:0", "139:0"),
    ("22.05", "2:0", "2:0"),  # exit 2 or 130: exit 2 is the common one
    ("22.05", "0:15", "0:15"),
    ("26.05", "15:0", "15:0"),  # 25.11+ print the code as it is
    ("26.05", "143:0", "143:0"),
])
def test_exit_codes_restored_by_version(v: str, printed: str, meant: str) -> None:
    line = f"9|j|CANCELLED by 0|{printed}|None|||||nid001|a|normal|debug|/tmp\n"
    fake = FakeRunner({"sacct": capture("sacct_records", version=v).__class__(("sacct",), 0, line, "", 0.0),
                       "sinfo --version": capture("sinfo_version", version=v)})
    rec = final_state(fake, "9")
    assert rec is not None and rec.exit_code == meant


def test_restore_exit_code_and_meaning() -> None:
    assert [restore_exit_code(c) for c in ("15:0", "9:0", "3:0", "0:9", "", "x")] == [
        "143:0", "137:0", "3:0", "0:9", "", "x"]
    assert parse_exit_code("143:0") == (143, 0) and parse_exit_code("2") == (2, 0) and parse_exit_code("") is None
    assert [exit_code_meaning(c) for c in ("0:0", "1:0", "143:0", "0:15", "137:0", "0:9", "200:0", "0:77")] == [
        "", "exit 1", "SIGTERM", "SIGTERM", "SIGKILL", "SIGKILL", "exit 200", "signal 77"]


@versions
def test_sacct_steps(v: str) -> None:
    """A step of 'srun -N2 --ntasks-per-node=1' inside a --ntasks-per-node=2 job ran 4 tasks on 22.05, 2 on
    24.11 and 26.05; MaxRSS of such short steps may be empty on the newer ones."""
    steps = {s.job_id.split(".", 1)[-1]: s for s in parse_sacct_steps(cap(v, "sacct_steps_2node"))}
    assert set(steps) >= {"batch", "0", "1"}
    sampler = next(s for s in steps.values() if s.name == "ntui-gpu-sampler")
    assert (sampler.state, sampler.nodes) == ("COMPLETED", 2)
    assert sampler.tasks == (4 if v == "22.05" else 2)
    train = next(s for s in steps.values() if s.name == "train")
    assert train.tasks == 4 and train.max_rss_kib is not None and train.max_rss_kib > 0


@versions
def test_sacct_without_accounting_and_unknown(v: str) -> None:
    assert final_state(FakeRunner({"sacct": capture("sacct_no_accounting", version=v)}), "1") is None
    assert final_state(FakeRunner({"sacct": capture("sacct_unknown", version=v)}), "999999") is None
    since = parse_sacct_records(cap(v, "sacct_since"))
    assert since and all(r.end is not None or r.category is not StateCategory.DONE for r in since)


@versions
def test_sacctmgr(v: str) -> None:
    """The rows come in another order on 24.11 and 26.05 (root first): ntui relies on none."""
    assert not user_associations(FakeRunner({"sacctmgr": capture("sacctmgr_users", version=v)}), "root").available
    assoc = parse_sacctmgr_assoc(cap(v, "sacctmgr_users_accounting"))
    assert set(assoc.accounts) == {"ntuiother", "ntuidev", "root"} and set(assoc.qos) == {"normal", "ntuilow"}
    assert ("ntuiother", ("normal", "ntuilow")) in assoc.pairs and ("ntuidev", ("normal",)) in assoc.pairs


@versions
def test_sdiag(v: str) -> None:
    """24.11 adds "RPC queue enabled" and the main scheduler / backfill exit sections: the counts still parse."""
    for name in ("sdiag", "sdiag_accounting"):
        by_user = parse_sdiag_rpc_by_user(cap(v, name))
        assert set(by_user) == {"root"} and by_user["root"] > 0, name
        by_type = parse_sdiag_rpc_by_type(cap(v, name))
        assert by_type["REQUEST_JOB_INFO"] > 0 and "root" not in by_type


# ---------------------------------------------------------------- batch logs: the cancel line


@versions
@pytest.mark.parametrize(("name", "state", "kind"), [
    ("batch_log_cancelled_srun", "CANCELLED", "cancelled"),
    ("batch_log_cancelled_batch", "CANCELLED", "cancelled"),
    ("batch_log_cancelled_srun_accounting", "CANCELLED", "cancelled"),
    ("batch_log_timeout", "TIMEOUT", "timeout"),
])
def test_batch_log_cancel_line(v: str, name: str, state: str, kind: str, tmp_path: Path) -> None:
    """26.05 writes "[T.mmm] error: *** JOB N ON nid001 CANCELLED AT T DUE to SIGNAL Terminated ***" where
    22.05 and 24.11 write "slurmstepd-nid001: error: *** JOB N ON nid001 CANCELLED AT T ***"."""
    text = cap(v, name)
    job_line = next(line for line in text.splitlines() if "*** JOB " in line)
    found = parse_cancel(job_line)
    assert found is not None and found.scope == "JOB" and found.node == "nid001"
    assert found.reason == ("TIME LIMIT" if kind == "timeout" else "SIGNAL Terminated" if v == "26.05" else None)
    log = tmp_path / "batch.out"
    log.write_text(text)
    inferred = infer_from_batch_log(log)
    assert (inferred.state, inferred.end_time, inferred.node_list) == (state, found.at, "nid001")
    paths = LogPaths(str(tmp_path), "j")
    Path(paths.batch(found.id)).write_text(text)
    verdict = job_verdict(paths, found.id, None, "srun")
    assert (verdict.kind, verdict.when, verdict.rank) == (kind, found.at, None)
    assert verdict.line.startswith("cancelled at " if kind == "cancelled" else "")
