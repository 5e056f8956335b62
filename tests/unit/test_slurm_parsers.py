"""Slurm argv builders and parsers, on real 22.05.8 captures (tests/data/slurm) and hand-written edge cases (the
captures of every tested version: test_slurm_versions.py)."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ntui.core.slurm.actions import (
    build_hold_argv,
    build_release_argv,
    build_requeue_argv,
    build_scancel_argv,
    cancel,
    hold,
    release,
    requeue,
)
from ntui.core.slurm.common import (
    SUBMIT_TIMEOUT,
    StateCategory,
    normalize_state,
    parse_timestamp,
    state_category,
    validate_job_id,
)
from ntui.core.slurm.durations import parse_duration
from ntui.core.slurm.runner import ControllerUnreachable, JobNotFound, SlurmError, SlurmRejected, SlurmTimeout
from ntui.core.slurm.sacct import RECORD_FIELDS, final_state, parse_sacct_records
from ntui.core.slurm.sacctmgr import build_sacctmgr_assoc_argv, parse_sacctmgr_assoc, user_associations
from ntui.core.slurm.sbatch import (
    Submission,
    build_sbatch_argv,
    parse_sbatch_parsable,
    parse_sbatch_test_only,
    submit,
    test_only,
)
from ntui.core.slurm.scontrol import (
    Partition,
    list_partitions,
    parse_gres_indices,
    parse_scontrol_jobs,
    parse_scontrol_partitions,
    show_job,
)
from ntui.core.slurm.sdiag import parse_sdiag_rpc_by_type, parse_sdiag_rpc_by_user, rpc_counts_by_user
from ntui.core.slurm.sinfo import (
    NodeState,
    build_node_states_argv,
    build_sinfo_partitions_argv,
    parse_node_states,
    parse_sinfo_partitions,
    sinfo_partitions,
)
from ntui.core.slurm.squeue import SQUEUE_FIELDS, build_squeue_argv, parse_squeue, probe_squeue_fields, query_queue
from ntui.core.slurm.version import parse_version, slurm_version
from tests.support.fakes import FakeRunner, capture, result

S = "\x1f"
#: the field list the captures were made with (= SQUEUE_FIELDS without exit_code)
CAPTURE_FIELDS = SQUEUE_FIELDS[:-1]


def squeue_line(**over: str) -> str:
    values = {
        "JobID": "100", "ArrayJobID": "100", "ArrayTaskID": "N/A", "Name": "train", "StateCompact": "R",
        "State": "RUNNING", "Reason": "None", "TimeUsed": "1:02:03", "TimeLimit": "1-00:00:00",
        "StartTime": "2026-01-02T03:04:05", "NumNodes": "2", "NodeList": "nid[001-002]",
        "tres-alloc": "cpu=8,mem=64G,node=2,billing=8,gres/gpu=8", "Partition": "gpu", "QOS": "normal",
        "WorkDir": "/home/u/run dir", "UserName": "alice", "exit_code": "0",
    }  # fmt: skip
    values.update(over)
    return "".join(values[f] + S for f in SQUEUE_FIELDS)


# ---------------------------------------------------------------- durations, timestamps, states


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0:00", 0),
        ("2:03", 123),
        ("1:02:03", 3723),
        ("02:00:00", 7200),
        ("1-02:03:04", 93784),
        ("1-02", 93600),
        ("1-02:03", 93780),
        ("30", 1800),
        ("27-00:00:00", 27 * 86400),
        ("UNLIMITED", None),
        ("INFINITE", None),
        ("INVALID", None),
        ("N/A", None),
        ("", None),
        (None, None),
        ("Partition_Limit", None),
        ("garbage", None),
        ("1:2:3:4", None),
    ],
)
def test_parse_duration(text: str | None, seconds: int | None) -> None:
    assert parse_duration(text) == seconds


@given(st.integers(0, 400), st.integers(0, 23), st.integers(0, 59), st.integers(0, 59))
def test_parse_duration_roundtrip(d: int, h: int, m: int, s: int) -> None:
    text = f"{d}-{h:02d}:{m:02d}:{s:02d}" if d else f"{h}:{m:02d}:{s:02d}"
    assert parse_duration(text) == ((d * 24 + h) * 60 + m) * 60 + s


def test_parse_timestamp() -> None:
    assert parse_timestamp("2026-11-30T04:26:43") == datetime(2026, 11, 30, 4, 26, 43)
    for null in ("N/A", "Unknown", "None", "", None, "not a time"):
        assert parse_timestamp(null) is None


@pytest.mark.parametrize(
    ("text", "state", "category"),
    [
        ("PD", "PENDING", StateCategory.PENDING),
        ("PENDING", "PENDING", StateCategory.PENDING),
        ("CF", "CONFIGURING", StateCategory.PENDING),
        ("R", "RUNNING", StateCategory.RUNNING),
        ("CG", "COMPLETING", StateCategory.COMPLETING),
        ("CD", "COMPLETED", StateCategory.DONE),
        ("F", "FAILED", StateCategory.FAILED),
        ("CANCELLED+", "CANCELLED", StateCategory.FAILED),
        ("CANCELLED by 0", "CANCELLED", StateCategory.FAILED),
        ("TO", "TIMEOUT", StateCategory.FAILED),
        ("OOM", "OUT_OF_MEMORY", StateCategory.FAILED),
        ("PR", "PREEMPTED", StateCategory.FAILED),
        ("PREEMPTED", "PREEMPTED", StateCategory.FAILED),
        ("S", "SUSPENDED", StateCategory.OTHER),
        ("RQ", "REQUEUED", StateCategory.PENDING),
        ("completed", "COMPLETED", StateCategory.DONE),
        ("WEIRD_NEW_STATE", "WEIRD_NEW_STATE", StateCategory.OTHER),
        ("", "", StateCategory.OTHER),
    ],
)
def test_states(text: str, state: str, category: StateCategory) -> None:
    assert normalize_state(text) == state
    assert state_category(text) is category


def test_category_finished() -> None:
    assert StateCategory.DONE.finished and StateCategory.FAILED.finished
    assert not StateCategory.COMPLETING.finished


# ---------------------------------------------------------------- sbatch --parsable


@pytest.mark.parametrize(
    ("stdout", "job_id", "cluster"),
    [
        ("28\n", "28", None),
        ("123;perlmutter\n", "123", "perlmutter"),
        ("Site wrapper: checking your quota...\nOK\n4567\n", "4567", None),
        ("4567\nwrapper: job recorded in db\n", "4567", None),
        ("  89;c2  \n\n", "89", "c2"),
    ],
)
def test_parse_parsable(stdout: str, job_id: str, cluster: str | None) -> None:
    sub = parse_sbatch_parsable(stdout)
    assert (sub.job_id, sub.cluster) == (job_id, cluster)


def test_parse_parsable_real_capture() -> None:
    assert parse_sbatch_parsable(capture("sbatch_parsable").stdout) == Submission("28", None)


@pytest.mark.parametrize("stdout", ["", "Submitted batch job 12\n", "abc\n", "12 on cluster x\n"])
def test_parse_parsable_rejects(stdout: str) -> None:
    with pytest.raises(ValueError):
        parse_sbatch_parsable(stdout)


def test_build_sbatch_argv() -> None:
    assert build_sbatch_argv("/r/job.sbatch", ["--hold"]) == ["sbatch", "--parsable", "--hold", "/r/job.sbatch"]


def test_submit_success_and_env_and_timeout() -> None:
    fake = FakeRunner({"sbatch": result(stdout="wrapper says hi\n77;clusterA\n")})
    sub = submit(fake, "/r/job.sh", extra_args=["--hold"], env={"SLURM_CONF": "/c"})
    assert sub == Submission("77", "clusterA")
    call = fake.history[0]
    assert call.argv == ("sbatch", "--parsable", "--hold", "/r/job.sh")
    assert call.env == {"SLURM_CONF": "/c"}
    assert call.timeout == SUBMIT_TIMEOUT


def test_submit_job_id_wins_over_stderr_noise() -> None:
    fake = FakeRunner({"sbatch": result(stdout="91\n", stderr="sbatch: error: Socket timed out on send/recv\n")})
    assert submit(fake, "j.sh").job_id == "91"


def test_submit_rejected_real_capture() -> None:
    fake = FakeRunner({"sbatch": capture("sbatch_bad_partition")})
    with pytest.raises(SlurmRejected) as info:
        submit(fake, "j.sh")
    assert info.value.reason == "Invalid partition name specified"


def test_submit_unreachable() -> None:
    stderr = "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n"
    fake = FakeRunner({"sbatch": result(returncode=1, stderr=stderr)})
    with pytest.raises(ControllerUnreachable):
        submit(fake, "j.sh")


def test_submit_without_job_id() -> None:
    fake = FakeRunner({"sbatch": result(stdout="Submitted batch job 5\n")})
    with pytest.raises(SlurmError, match="no job ID"):
        submit(fake, "j.sh")


# ---------------------------------------------------------------- sbatch --test-only


def test_test_only_ok_real_capture() -> None:
    r = parse_sbatch_test_only(capture("sbatch_test_only_ok"))
    assert r.ok
    assert r.job_id == "29"
    assert r.start == "2026-11-30T04:26:41"
    assert r.processors == 4
    assert r.nodes == "nid[001-002]"
    assert r.partition == "debug"
    assert r.reason is None
    assert r.raw.startswith("sbatch: Job 29")


def test_test_only_over_time_limit_is_ok_on_2205() -> None:
    r = parse_sbatch_test_only(capture("sbatch_test_only_time_over_limit"))
    assert r.ok and r.processors == 1 and r.nodes == "nid001"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("sbatch_test_only_gpus5", "Requested node configuration is not available"),
        ("sbatch_test_only_bad_partition", "Invalid partition name specified"),
        ("sbatch_bad_constraint", "Invalid feature specification"),
    ],
)
def test_test_only_rejections_real_capture(name: str, reason: str) -> None:
    r = parse_sbatch_test_only(capture(name))
    assert not r.ok
    assert r.reason == reason
    assert r.job_id is None


def test_test_only_other_failures() -> None:
    r = parse_sbatch_test_only(result(returncode=1, stderr="sbatch: error: Unable to open file nope.sh\n"))
    assert (r.ok, r.reason) == (False, "Unable to open file nope.sh")
    r = parse_sbatch_test_only(result(returncode=2, stderr="weird\n"))
    assert (r.ok, r.reason) == (False, "weird")


def test_test_only_runner_rejection_vs_unreachable() -> None:
    fake = FakeRunner({"sbatch --test-only": capture("sbatch_test_only_gpus5")})
    r = test_only(fake, "job.sh", extra_args=["-N", "2"])
    assert not r.ok and r.reason == "Requested node configuration is not available"
    assert fake.history[0].argv == ("sbatch", "--test-only", "-N", "2", "job.sh")
    down = result(returncode=1, stderr="allocation failure: Unable to contact slurm controller (connect failure)\n")
    with pytest.raises(ControllerUnreachable):
        test_only(FakeRunner({"sbatch": down}), "job.sh")
    with pytest.raises(SlurmTimeout):
        test_only(FakeRunner({"sbatch": SlurmTimeout("slow", timeout=1)}), "job.sh")


# ---------------------------------------------------------------- squeue


def test_build_squeue_argv_defaults() -> None:
    argv = build_squeue_argv()
    assert argv[:5] == ["squeue", "--local", "--noheader", "--array", "--me"]
    assert argv[5] == "-O"
    spec = argv[6]
    assert spec.split(",")[0] == "JobID:\x1f"
    assert [f.rstrip(S).rstrip(":") for f in spec.split(",")] == list(SQUEUE_FIELDS)
    assert "ExitCode" not in spec  # rejected by 22.05 (see squeue_mix_with_exitcode)
    assert len(argv) == 7
    assert "--local" not in build_squeue_argv(local=False)


def test_build_squeue_argv_options() -> None:
    argv = build_squeue_argv(all_users=True, array_tasks=False, job_ids=["12", "13_4"], states="pd,r")
    assert "--me" not in argv and "--array" not in argv
    assert "--jobs=12,13_4" in argv
    assert "--states=PD,R" in argv
    with pytest.raises(ValueError):
        build_squeue_argv(job_ids=["--user=bob"])
    with pytest.raises(ValueError):
        build_squeue_argv(separator="a,b")
    with pytest.raises(ValueError):
        build_squeue_argv(states="-u bob")


def test_parse_squeue_array_capture() -> None:
    jobs = parse_squeue(capture("squeue_mix_array").stdout, fields=CAPTURE_FIELDS)
    assert len(jobs) == 18
    by_id = {j.job_id: j for j in jobs}
    assert [j for j in by_id if j.startswith("36_")] == ["36_1", "36_2", "36_3", "36_0"]
    t0 = by_id["36_0"]
    assert (t0.raw_job_id, t0.array_job_id, t0.array_task_id) == ("37", "36", "0")
    assert t0.state == "RUNNING" and t0.category is StateCategory.RUNNING and t0.nodes == ("nid002",)
    assert by_id["36_1"].reason == "JobArrayTaskLimit" and by_id["36_1"].is_array
    train = by_id["34"]
    assert train.name == "train 2n"
    assert train.nodes == ("nid001", "nid002") and train.num_nodes == 2
    assert train.reason == ""  # "None"
    assert train.elapsed_s == 12 and train.time_limit_s == 3600
    assert train.start_time == datetime(2026, 11, 30, 4, 26, 43)
    assert train.tres == {"cpu": "2", "node": "2", "billing": "2"}
    assert train.qos is None  # "(null)"
    assert train.workdir == "/tmp/ntui-capture" and train.user == "root" and train.partition == "debug"
    assert train.exit_code is None  # not requested in this capture
    assert by_id["35"].name == "ünï cödé: run #1"
    pending = {j.job_id: j.reason for j in jobs if j.category is StateCategory.PENDING}
    assert pending["38"] == "Resources"
    assert pending["39"] == "Priority"
    assert pending["40"] == "JobHeldUser"
    assert pending["42"] == "BeginTime"
    assert pending["43"] == "Dependency"
    assert pending["44"] == "PartitionTimeLimit"
    assert [j.job_id for j in jobs if j.array_job_id == "41"] == [f"41_{i}" for i in range(6)]
    assert by_id["38"].start == "2026-11-30T05:26:43"  # the scheduler's estimate
    assert by_id["40"].start is None and by_id["40"].nodes == ()


def test_parse_squeue_noarray_capture() -> None:
    jobs = parse_squeue(capture("squeue_mix_noarray").stdout, fields=CAPTURE_FIELDS)
    ids = [j.job_id for j in jobs]
    assert "36_[1-3%1]" in ids and "41_[0-5]" in ids and "36_0" in ids
    assert len(jobs) == 11


def test_parse_squeue_default_fields_with_exit_code() -> None:
    jobs = parse_squeue(squeue_line() + "\n" + squeue_line(JobID="101", exit_code="2") + "\n")
    assert [j.exit_code for j in jobs] == ["0", "2"]
    j = jobs[0]
    assert j.workdir == "/home/u/run dir"
    assert j.tres["gres/gpu"] == "8"
    assert j.elapsed_s == 3723 and j.time_limit_s == 86400


def test_parse_squeue_drops_wrong_field_counts() -> None:
    good = squeue_line(JobID="1", ArrayJobID="1")
    short = S.join(["2", "2", "N/A", "x"]) + S
    extra = squeue_line(JobID="3") + "junk" + S
    text = "\n".join([good, short, extra, "", "squeue: some banner", good.replace("1", "4", 1)])
    jobs = parse_squeue(text)
    assert [j.job_id for j in jobs] == ["1", "4"]


def test_parse_squeue_tolerates_missing_trailing_separator_and_crlf_free() -> None:
    line = squeue_line()[:-1]  # no trailing separator
    assert parse_squeue(line)[0].job_id == "100"


def test_parse_squeue_non_utf8_bytes() -> None:
    raw = squeue_line(Name="PLACEHOLDER").encode().replace(b"PLACEHOLDER", b"caf\xe9 \xff run")
    jobs = parse_squeue(raw)
    assert jobs[0].name == "caf\ufffd \ufffd run"


def test_parse_squeue_state_fallbacks() -> None:
    jobs = parse_squeue(
        squeue_line(State="", StateCompact="CG")
        + "\n"
        + squeue_line(State="CANCELLED by 1000", StateCompact="CA")
        + "\n"
        + squeue_line(State="BRAND_NEW", StateCompact="BN")
        + "\n"
        + squeue_line(NodeList="(null)", StartTime="N/A", NumNodes="", QOS="(null)", Reason="(null)")
    )
    assert [j.state for j in jobs[:3]] == ["COMPLETING", "CANCELLED", "BRAND_NEW"]
    assert [j.category for j in jobs[:3]] == [StateCategory.COMPLETING, StateCategory.FAILED, StateCategory.OTHER]
    last = jobs[3]
    got = (last.nodelist, last.nodes, last.start, last.num_nodes, last.qos, last.reason)
    assert got == ("", (), None, None, None, "")


def test_parse_squeue_subset_of_fields() -> None:
    fields = ("JobID", "State", "Reason")
    jobs = parse_squeue(capture("squeue_all_states").stdout, fields=fields)
    assert len(jobs) == 50
    states = {j.state for j in jobs}
    assert states == {"CANCELLED", "COMPLETED", "FAILED", "PENDING", "RUNNING"}
    assert all(j.name == "" and j.nodes == () for j in jobs)


def test_parse_squeue_takes_10k_lines() -> None:
    """Correctness at the size of a big array; its speed is measured in bench/queue_scale.py, not asserted here."""
    lines = [
        squeue_line(JobID=str(i), ArrayJobID=str(i), Name=f"job-{i}", NodeList=f"nid[{i % 90:03d}-{i % 90 + 3:03d}]")
        for i in range(10_000)
    ]
    text = "\n".join(lines) + "\n"
    jobs = parse_squeue(text)
    assert len(jobs) == 10_000 and jobs[9999].job_id == "9999"
    assert jobs[4321].name == "job-4321" and jobs[4321].nodes == tuple(f"nid{n:03d}" for n in range(1, 5))


@given(st.lists(st.sampled_from(["a", "1", S, "\n", "_", "N/A", "é", " ", "(null)", "R", "-"]), max_size=300))
def test_parse_squeue_never_raises(tokens: list[str]) -> None:
    for job in parse_squeue("".join(tokens)):
        assert job.job_id


def test_query_queue_runs_one_squeue() -> None:
    fake = FakeRunner({"squeue": result(stdout=squeue_line())})
    jobs = query_queue(fake, timeout=4)
    assert [j.job_id for j in jobs] == ["100"]
    assert fake.calls == 1 and fake.history[0].timeout == 4
    assert fake.history[0].argv[:5] == ("squeue", "--local", "--noheader", "--array", "--me")


def test_query_queue_errors() -> None:
    fake = FakeRunner({"squeue": capture("squeue_unreachable")})
    with pytest.raises(ControllerUnreachable):
        query_queue(fake)
    timed_out = FakeRunner({"squeue": result(stderr="slurm_load_jobs error: Socket timed out on send/recv operation")})
    with pytest.raises(ControllerUnreachable):
        query_queue(timed_out)
    gone = FakeRunner({"squeue": result(returncode=1, stderr="slurm_load_jobs error: Invalid job id specified\n")})
    assert query_queue(gone, job_ids=["5"]) == ()
    with pytest.raises(JobNotFound):
        query_queue(gone)


def test_query_queue_tolerates_rejected_field_real_capture() -> None:
    """22.05.8 prints an unsupported field empty (field count kept) and exits 0 with an error on stderr."""
    fields = (*CAPTURE_FIELDS, "ExitCode")
    fake = FakeRunner({"squeue": capture("squeue_mix_with_exitcode")})
    jobs = query_queue(fake, fields=fields)
    assert len(jobs) == 18 and jobs[0].job_id == "36_1"
    # when nothing parses, the error is raised instead of showing an empty queue
    broken = FakeRunner({"squeue": result(stdout="1|2\n", stderr="squeue: error: Invalid job format specification: X")})
    with pytest.raises(SlurmRejected):
        query_queue(broken)


def test_probe_squeue_fields() -> None:
    fake = FakeRunner({"squeue": capture("squeue_mix_with_exitcode")})
    assert probe_squeue_fields(fake, (*CAPTURE_FIELDS, "ExitCode")) == ("ExitCode",)
    assert probe_squeue_fields(FakeRunner({"squeue": capture("squeue_mix_array")})) == ()
    with pytest.raises(ControllerUnreachable):
        probe_squeue_fields(FakeRunner({"squeue": capture("squeue_unreachable")}))


# ---------------------------------------------------------------- scontrol show job -d


def test_show_job_running_2node_gpu_capture() -> None:
    (job,) = parse_scontrol_jobs(capture("scontrol_show_job_running_2node_gpu").stdout)
    assert job.job_id == "34" and job.raw_job_id == "34" and job.array_job_id is None
    assert job.name == "train 2n"
    assert job.user == "root"
    assert job.state == "RUNNING" and job.category is StateCategory.RUNNING
    assert job.reason == "" and job.exit_code == "0:0"
    assert job.nodelist == "nid[001-002]" and job.nodes == ("nid001", "nid002")
    assert job.gres_by_node == {"nid001": (0, 1, 2, 3), "nid002": (0, 1, 2, 3)}
    assert job.gpus == 8
    assert job.std_out == "/tmp/ntui-capture/train 2n-34.out"  # a space in the path
    assert job.std_err == "/tmp/ntui-capture/train 2n-34.out"
    assert job.std_in == "/dev/null"
    assert job.command is None  # --wrap: Command=(null)
    assert job.work_dir == "/tmp/ntui-capture"
    assert (job.num_nodes, job.num_cpus, job.num_tasks) == (2, 2, 2)
    assert job.batch_host == "nid001"
    assert job.partition == "debug" and job.qos is None and job.account is None
    assert job.time_limit_s == 3600 and job.run_time_s == 12
    assert job.submit_time == "2026-11-30T04:26:41" and job.start_time == "2026-11-30T04:26:43"
    assert job.end_time == "2026-11-30T05:26:43"
    assert job.tres == "cpu=2,node=2,billing=2"
    assert job.raw["AllocNode:Sid"] == "localhost:3352"
    assert job.raw["ReqB:S:C:T"] == "0:0:*:*"
    assert job.raw["TresPerNode"] == "gres:gpu:4"
    assert job.raw["JOB_GRES"] == "gpu:8"
    assert job.raw["Power"] == ""


def test_show_job_pending_capture() -> None:
    (job,) = parse_scontrol_jobs(capture("scontrol_show_job_pending").stdout)
    assert job.state == "PENDING" and job.reason == "Resources"
    assert job.nodelist == "" and job.nodes == () and job.gres_by_node == {}
    assert job.raw["SchedNodeList"] == "nid001"  # "NodeList= SchedNodeList=nid001": empty value, then a key
    assert job.num_nodes == 1  # "NumNodes=1-1"


def test_show_job_array_capture() -> None:
    (task,) = parse_scontrol_jobs(capture("scontrol_show_job_array_task_running").stdout)
    assert (task.job_id, task.raw_job_id, task.array_job_id, task.array_task_id) == ("36_0", "37", "36", "0")
    assert task.gres_by_node == {"nid002": ()}  # CPU-only job: "GRES=" empty
    (held,) = parse_scontrol_jobs(capture("scontrol_show_job_held_array").stdout)
    assert held.job_id == "41_[0-5]" and held.reason == "JobHeldUser" and held.start_time is None


def test_show_job_failed_and_unicode_captures() -> None:
    (failed,) = parse_scontrol_jobs(capture("scontrol_show_job_failed").stdout)
    assert failed.state == "FAILED" and failed.exit_code == "3:0" and failed.category is StateCategory.FAILED
    (uni,) = parse_scontrol_jobs(capture("scontrol_show_job_requeued_pending").stdout)
    assert uni.name == "ünï cödé: run #1"
    assert uni.std_out == "/tmp/ntui-capture/ünï cödé: run #1-35.out"
    assert uni.restarts == 1 and uni.reason == "BeginTime"


SHOW_JOB_EDGE = """\
JobId=500 ArrayJobId=499 ArrayTaskId=1 JobName=my job=weird name
   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A
   JobState=RUNNING Reason=None Dependency=(null)
   NodeList=gpu[01-03]
   NumNodes=3 NumCPUs=24 NumTasks=3 CPUs/Task=8 ReqB:S:C:T=0:0:*:*
     Nodes=gpu[01-02] CPU_IDs=0-7 Mem=1000 GRES=gpu:a100:2(IDX:0,2),nic:1(IDX:0)
     Nodes=gpu03 CPU_IDs=0-7 Mem=1000 GRES=gpu:a100:4(IDX:0-3)
   Command=/home/alice/my runs/train.sh --lr 3e-4
   WorkDir=/home/alice/my runs
   StdOut=/home/alice/my runs/out %j.log
   Comment=uses A=B and Partition=fake

JobId=501 JobName=second
   JobState=CANCELLED Reason=None
"""


def test_show_job_edge_cases() -> None:
    first, second = parse_scontrol_jobs(SHOW_JOB_EDGE)
    assert first.job_id == "499_1" and first.raw_job_id == "500"
    assert first.name == "my job=weird name"
    assert first.user == "alice"
    assert first.gres_by_node == {"gpu01": (0, 2), "gpu02": (0, 2), "gpu03": (0, 1, 2, 3)}
    assert first.gpus == 8
    assert first.command == "/home/alice/my runs/train.sh --lr 3e-4"
    assert first.work_dir == "/home/alice/my runs"
    assert first.std_out == "/home/alice/my runs/out %j.log"
    assert first.raw["Comment"] == "uses A=B and Partition=fake"
    assert first.partition == ""  # the fake Partition= inside the comment is not a key
    assert second.job_id == "501" and second.state == "CANCELLED"


def test_one_line_output() -> None:
    line = (
        "JobId=7 JobName=a b c UserId=bob(5) JobState=PENDING Reason=Priority NodeList=(null) "
        "Command=/x y/run.sh WorkDir=/x y StdOut=/x y/o.txt Partition=p"
    )
    (job,) = parse_scontrol_jobs(line)
    assert job.name == "a b c" and job.user == "bob" and job.reason == "Priority"
    assert job.command == "/x y/run.sh" and job.work_dir == "/x y" and job.std_out == "/x y/o.txt"
    assert job.partition == "p" and job.nodelist == ""


@pytest.mark.parametrize(
    ("gres", "indices"),
    [
        ("gpu:4(IDX:0-3)", (0, 1, 2, 3)),
        ("gpu:a100:2(IDX:0,2)", (0, 2)),
        ("gpu:h100_80gb:3(IDX:1,4-5)", (1, 4, 5)),
        ("gpu:2(IDX:N/A)", ()),
        ("nic:1(IDX:0)", ()),
        ("", ()),
        ("gpu:a:1(IDX:0),gpu:b:1(IDX:3)", (0, 3)),
    ],
)
def test_parse_gres_indices(gres: str, indices: tuple[int, ...]) -> None:
    assert parse_gres_indices(gres) == indices


def test_show_job_runner() -> None:
    fake = FakeRunner({"scontrol show job": capture("scontrol_show_job_array_task_running")})
    job = show_job(fake, "36_0")
    assert job.job_id == "36_0"
    assert fake.history[0].argv == ("scontrol", "show", "job", "-d", "36_0")
    with pytest.raises(JobNotFound):
        show_job(FakeRunner({"scontrol": capture("scontrol_show_job_unknown")}), "999999")
    with pytest.raises(JobNotFound):
        show_job(FakeRunner({"scontrol": result(stdout="")}), "5")
    with pytest.raises(ValueError):
        show_job(fake, "5; rm -rf /")


# ---------------------------------------------------------------- actions


def test_action_argvs() -> None:
    assert build_scancel_argv("12") == ["scancel", "12"]
    assert build_scancel_argv(["12", "13_2"], signal="usr1", full=True) == [
        "scancel", "--signal=USR1", "--full", "12", "13_2",
    ]  # fmt: skip
    assert build_scancel_argv("12", signal=15, batch=True) == ["scancel", "--signal=15", "--batch", "12"]
    assert build_hold_argv(["1", "2"]) == ["scontrol", "uhold", "1", "2"]  # a user hold, even as root
    assert build_release_argv("3") == ["scontrol", "release", "3"]
    assert build_requeue_argv(["1", "2", "3_4"]) == ["scontrol", "requeue", "1,2,3_4"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: build_scancel_argv("12", full=True, batch=True),
        lambda: build_scancel_argv("12", signal="TERM; ls"),
        lambda: build_scancel_argv("-u"),
        lambda: build_scancel_argv([]),
        lambda: build_hold_argv("jobname=x"),
        lambda: build_requeue_argv(["1,2"]),
    ],
)
def test_action_argv_validation(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]


def test_validate_job_id() -> None:
    for ok in ("1", "123_4", "123_[1-3]", "123_[1,3-5%2]", "77+1", "88.batch", "88.0"):
        assert validate_job_id(ok) == ok
    for bad in ("", "abc", "-1", "1 2", "1;2", "--me"):
        with pytest.raises(ValueError):
            validate_job_id(bad)


def test_actions_through_runner() -> None:
    fake = FakeRunner(
        {
            "scancel": capture("scancel_unknown"),  # 22.05.8: silent, rc 0
            "scontrol uhold": capture("scontrol_hold_pending"),
            "scontrol release": capture("scontrol_release_unknown"),
            "scontrol requeue": capture("scontrol_requeue_pending"),
        }
    )
    assert cancel(fake, "999999").returncode == 0
    assert hold(fake, ["39"]).returncode == 0
    with pytest.raises(JobNotFound):
        release(fake, "999999")
    with pytest.raises(SlurmRejected, match="pending execution"):
        requeue(fake, "38")
    assert fake.argvs()[0] == ("scancel", "999999")


# ---------------------------------------------------------------- version, partitions


def test_version() -> None:
    assert parse_version(capture("sinfo_version").stdout) == (22, 5, 8)
    assert parse_version("slurm 23.11.4\n") == (23, 11, 4)
    assert parse_version("slurm 24.05") == (24, 5)
    with pytest.raises(ValueError):
        parse_version("nothing")
    fake = FakeRunner({"sinfo --version": capture("sinfo_version")})
    assert slurm_version(fake) >= (22, 5)
    with pytest.raises(SlurmError):
        slurm_version(FakeRunner({"sinfo": result(stdout="???")}))


def test_scontrol_partitions_capture() -> None:
    (p,) = parse_scontrol_partitions(capture("scontrol_show_partition").stdout)
    assert p.name == "debug" and p.default and p.up
    assert p.max_time == "02:00:00" and p.max_time_s == 7200
    assert p.default_time is None
    assert p.nodes == "nid[001-002]" and p.node_names == ("nid001", "nid002")
    assert (p.total_nodes, p.total_cpus, p.max_nodes) == (2, 4, None)
    assert p.allow_accounts is None and p.allow_qos is None and p.qos is None
    assert p.tres == "cpu=4,mem=4000M,node=2,billing=4"


def test_scontrol_partitions_multi() -> None:
    text = (
        "PartitionName=gpu AllowAccounts=a1,a2 AllowQos=normal Default=NO MaxTime=UNLIMITED Nodes=g[1-4] "
        "State=DRAIN TotalNodes=4 MaxNodes=2 QoS=gpuqos\n"
        "PartitionName=cpu Default=YES MaxTime=1-00:00:00 Nodes=c1 State=UP\n"
    )
    gpu, cpu = parse_scontrol_partitions(text)
    assert gpu.allow_accounts == ("a1", "a2") and gpu.allow_qos == ("normal",)
    assert gpu.max_time_s is None and not gpu.default and not gpu.up and gpu.max_nodes == 2 and gpu.qos == "gpuqos"
    assert cpu.default and cpu.max_time_s == 86400
    fake = FakeRunner({"scontrol show partition": result(stdout=text)})
    assert [p.name for p in list_partitions(fake)] == ["gpu", "cpu"]
    assert fake.history[0].argv == ("scontrol", "show", "partition", "-o")


def test_sinfo_partitions_capture() -> None:
    (p,) = parse_sinfo_partitions(capture("sinfo_partitions_busy").stdout, separator="|")
    assert isinstance(p, Partition)  # the same model as scontrol's, with what sinfo knows
    assert (p.name, p.default, p.state, p.max_time, p.max_time_s, p.total_nodes, p.nodes, p.node_names) == (
        "debug", True, "UP", "2:00:00", 7200, 2, "nid[001-002]", ("nid001", "nid002"),
    )  # fmt: skip
    assert p.up and (p.max_nodes, p.allow_accounts, p.allow_qos, p.total_cpus) == (None, None, None, None)
    argv = build_sinfo_partitions_argv()
    assert argv[:3] == ["sinfo", "-h", "-o"] and argv[3].split(S) == ["%P", "%a", "%l", "%D", "%T", "%N", "%G"]
    text = S.join(["gpu", "up", "infinite", "3", "mixed", "g[1-3]", "(null)"]) + "\nshort\n"
    (q,) = sinfo_partitions(FakeRunner({"sinfo": result(stdout=text)}))
    assert q.name == "gpu" and not q.default and q.max_time_s is None and q.total_nodes == 3


def test_sinfo_partition_in_several_node_states_is_one_partition() -> None:
    rows = [("debug*", "up", "idle", "1", "nid001"), ("old", "inact", "down", "1", "old1"),
            ("debug*", "up", "allocated", "3", "nid[002-004]")]
    text = "".join(S.join([name, avail, "30:00", n, state, nodes, "gpu:4"]) + "\n"
                   for name, avail, state, n, nodes in rows)
    debug, old = parse_sinfo_partitions(text)
    assert (debug.name, debug.default, debug.total_nodes, debug.nodes) == ("debug", True, 4, "nid001,nid[002-004]")
    assert debug.node_names == ("nid001", "nid002", "nid003", "nid004") and debug.max_time_s == 1800
    assert (old.name, old.default, old.state, old.up) == ("old", False, "INACTIVE", False)


# ---------------------------------------------------------------- accounts, sacct, sdiag


def test_sacctmgr_disabled_capture_is_graceful() -> None:
    fake = FakeRunner({"sacctmgr": capture("sacctmgr_users")})
    assoc = user_associations(fake, "root")
    assert not assoc.available and assoc.accounts == () and assoc.qos == ()
    assert assoc.error == "You are not running a supported accounting_storage plugin"
    assert fake.history[0].argv == (
        "sacctmgr", "-nP", "show", "users", "withassoc", "format=account,qos", "where", "user=root",
    )  # fmt: skip
    down = FakeRunner({"sacctmgr": SlurmTimeout("slow", timeout=1)})
    assert not user_associations(down, "root").available


def test_sacctmgr_parse() -> None:
    assoc = parse_sacctmgr_assoc("proj1|normal,high\nproj2|normal\n\nproj1|debug\n")
    assert assoc.available
    assert assoc.accounts == ("proj1", "proj2")
    assert assoc.qos == ("normal", "high", "debug")
    assert assoc.pairs[0] == ("proj1", ("normal", "high"))
    fake = FakeRunner({"sacctmgr": result(stdout="p|normal\n")})
    assert user_associations(fake, "bob").accounts == ("p",)
    with pytest.raises(ValueError):
        build_sacctmgr_assoc_argv("bob where")


def test_sacct_disabled_capture_is_none() -> None:
    fake = FakeRunner({"sacct": capture("sacct_no_accounting")})
    assert final_state(fake, "26") is None
    assert fake.history[0].argv == ("sacct", "-j", "26", "-X", "-P", "-n", "--format=" + ",".join(RECORD_FIELDS))


def test_sacct_parse_and_final_state() -> None:
    rest = "|None|2026-11-30T09:00:00|2026-11-30T09:00:01|2026-11-30T09:00:02"
    tail = "|nid001|acct|normal|debug|/home/u"
    text = (f"26|a|COMPLETED|0:0{rest}|00:00:01{tail}\n27|b|CANCELLED by 0|0:15{rest}|00:01:00{tail}\n"
            f"28|c|CANCELLED+|0:0{rest}|1-00:00:00{tail}\nbad\n")
    recs = parse_sacct_records(text)
    assert [(r.job_id, r.state) for r in recs] == [("26", "COMPLETED"), ("27", "CANCELLED"), ("28", "CANCELLED")]
    assert recs[1].raw_state == "CANCELLED by 0" and recs[1].category is StateCategory.FAILED
    assert recs[2].elapsed_s == 86400
    fake = FakeRunner({"sacct": result(stdout=text)})
    rec = final_state(fake, "27")
    assert rec is not None and rec.exit_code == "0:15"
    assert final_state(FakeRunner({"sacct": result(stdout="")}), "9") is None
    with pytest.raises(ControllerUnreachable):
        final_state(FakeRunner({"sacct": result(returncode=1, stderr="sacct: error: Connection refused")}), "9")


def test_sdiag_capture() -> None:
    text = capture("sdiag").stdout
    assert parse_sdiag_rpc_by_user(text) == {"root": 454}
    by_type = parse_sdiag_rpc_by_type(text)
    assert by_type["REQUEST_JOB_INFO"] == 58
    assert by_type["REQUEST_PARTITION_INFO"] == 116
    assert "root" not in by_type
    fake = FakeRunner({"sdiag": capture("sdiag")})
    assert rpc_counts_by_user(fake) == {"root": 454}


def test_sdiag_several_users() -> None:
    text = (
        "Remote Procedure Call statistics by user\n"
        "\troot            (       0) count:10     ave_time:1    total_time:10\n"
        "\talice           (    1001) count:7      ave_time:1    total_time:7\n"
        "\n"
        "Pending RPC statistics\n"
        "\tREQUEST_TERMINATE_JOB                   ( 6011) count:1\n"
    )
    assert parse_sdiag_rpc_by_user(text) == {"root": 10, "alice": 7}


# ---------------------------------------------------------------- node states (sinfo -N), for the details panel


def test_node_states_argv_and_captures() -> None:
    assert build_node_states_argv(["nid002", "nid001"]) == [
        "sinfo", "-h", "-N", "-n", "nid[001-002]", "-o", "%N\x1f%T\x1f%E"]
    with pytest.raises(ValueError):
        build_node_states_argv(["-x"])
    idle = parse_node_states(capture("sinfo_node_states_idle").stdout)
    assert [(n.node, n.state, n.reason, n.healthy) for n in idle] == [
        ("nid001", "idle", "", True), ("nid002", "idle", "", True)]
    # nid002's slurmd killed: a failed ping marks it not responding ("*"), SlurmdTimeout later it is DOWN
    (_, silent) = parse_node_states(capture("sinfo_node_states_not_responding").stdout)
    assert (silent.state, silent.responding, silent.healthy) == ("idle*", False, False)
    (_, down) = parse_node_states(capture("sinfo_node_states_down").stdout)
    assert (down.state, down.reason, down.healthy) == ("down*", "Not responding", False)
    assert parse_node_states("nid001\x1fmixed\x1fnone\nnid001\x1fmixed\x1fnone\n") == (
        NodeState("nid001", "mixed"),)  # a node in two partitions is listed once
