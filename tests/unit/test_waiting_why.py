"""Why a pending job waits (ntui/core/waiting/why.py): the words, from captured details, and what each reason
fetches (and costs)."""

from __future__ import annotations

from datetime import datetime

from ntui.core.records.outcome import Outcome
from ntui.core.slurm.scontrol import JobDetails, parse_dependency, parse_scontrol_jobs
from ntui.core.slurm.squeue import parse_squeue
from ntui.core.waiting.why import (
    DependState,
    Extras,
    SiteMemo,
    WaitFacts,
    WhyBook,
    explain,
    facts_of,
    fetch_extras,
    format_start,
)
from tests.support.fakes import FakeRunner, capture, result

NOW = datetime(2026, 12, 1, 10, 4, 0)


def details(name: str) -> JobDetails:
    (d,) = parse_scontrol_jobs(capture(name).stdout)
    return d


def test_waiting_for_resources_with_the_estimate() -> None:
    d = details("scontrol_show_job_pending_resources")
    why = explain(facts_of(d.job_id, d, None), None, NOW)  # type: ignore[arg-type]
    assert why.headline == "waiting for resources — 1 node to free up; estimated start 10:09 (in 5 min) on nid001"
    assert not why.never and why.start == datetime(2026, 12, 1, 10, 9, 18)


def test_format_start() -> None:
    assert format_start(datetime(2026, 12, 1, 14, 20), datetime(2026, 12, 1, 11, 10)) == "14:20 (in 3 h 10 min)"
    assert format_start(datetime(2026, 12, 2, 14, 20), datetime(2026, 12, 1, 11, 20)) == "Wed 2 Dec 14:20 (in 1 d 3 h)"
    assert format_start(datetime(2026, 12, 1, 11, 10, 30), datetime(2026, 12, 1, 11, 10)) == "now"


def test_a_dependency_on_a_failed_job_never_starts() -> None:
    d = details("scontrol_show_job_dependency_never")
    facts = facts_of(d.job_id, d, None)
    assert facts is not None
    dep = parse_dependency(facts.dependency).items[0]
    extras = Extras(d.job_id, facts.reason, depends=(DependState(dep, Outcome("118", "FAILED", "3:0", "sacct",
                                                                                 True)),))
    why = explain(facts, extras, NOW)
    assert why.never
    assert why.headline == ("waiting for job 118 to end OK (COMPLETED, exit code 0) — it FAILED, so this one will "
                            "never start: cancel it or change its dependency")
    assert any("scontrol update JobId=119 Dependency=" in line for line in why.lines)
    # without the look-up Slurm's "(failed)" still says it
    assert explain(facts, None, NOW).never


def test_dependency_extras_one_squeue_then_sacct_for_the_gone() -> None:
    d = details("scontrol_show_job_dependency_never")
    facts = facts_of(d.job_id, d, None)
    assert facts is not None
    sacct = "118|wait-fail|FAILED|3:0|None|2026-12-01T10:04:40|2026-12-01T10:04:41|2026-12-01T10:04:41|00:00:00|" \
            "nid001|ntuidev|normal|debug|/tmp\n"
    runner = FakeRunner({"squeue": result(stdout=""), "sacct": result(stdout=sacct)})
    extras = fetch_extras(runner, d.job_id, facts)
    assert [a[0] for a in runner.argvs()] == ["squeue", "sacct"] and extras.calls == 2
    assert extras.depends[0].outcome is not None and extras.depends[0].outcome.state == "FAILED"


def test_a_running_dependency_is_said() -> None:
    d = details("scontrol_show_job_dependency_or")
    facts = facts_of(d.job_id, d, None)
    assert facts is not None
    line = "120\x1f\x1f\x1fwait-target\x1fR\x1fRUNNING\x1fNone\x1f0:05\x1f5:00\x1fN/A\x1f1\x1fnid001\x1f\x1fdebug" \
           "\x1fnormal\x1f/tmp\x1froot\x1f\n"
    runner = FakeRunner({"squeue": result(stdout=line)})
    why = explain(facts, fetch_extras(runner, d.job_id, facts), NOW)
    assert why.headline == "waiting for job 120 to end OK (COMPLETED, exit code 0) (it is RUNNING)"
    assert not why.never and runner.calls == 1


def test_priority_on_a_basic_site_is_said_and_asked_once_per_session() -> None:
    d = details("scontrol_show_job_pending_resources")
    facts = facts_of(d.job_id, d, None)
    assert facts is not None
    runner = FakeRunner({"sprio": capture("sprio_job_fields")})
    memo = SiteMemo()
    first = fetch_extras(runner, d.job_id, facts, memo=memo)
    again = fetch_extras(runner, "114", facts, memo=memo)
    assert runner.calls == 1 and first.calls == 1 and again.calls == 0
    why = explain(facts, again, NOW)
    assert any("does not rank jobs by priority factors" in line for line in why.lines)


def test_priority_breakdown_on_multifactor() -> None:
    facts = WaitFacts("1", "PENDING", "Priority", num_nodes=1)
    runner = FakeRunner({"sprio": capture("sprio_multifactor_fields")})
    why = explain(facts, fetch_extras(runner, "1", facts), NOW)
    assert why.headline.startswith("waiting in line: jobs with a higher priority are ahead of it")
    assert "no start estimate yet" in why.headline
    assert "priority 1037 (job size 38, partition 1000) in partition debug" in why.lines


def test_a_qos_limit_with_its_value() -> None:
    facts = WaitFacts("7", "PENDING", "QOSMaxJobsPerUserLimit", qos="gpu_regular")
    line = "gpu_regular|4|||||||||||||||\n"
    runner = FakeRunner({"sacctmgr": result(stdout=line)})
    extras = fetch_extras(runner, "7", facts)
    why = explain(facts, extras, NOW)
    assert why.headline == "held by a limit: you already have as many running jobs as its QOS allows (MaxJobs)"
    assert "QOS gpu_regular: MaxJobsPerUser=4" in why.lines
    assert runner.argvs()[0][:6] == ("sacctmgr", "-nP", "show", "qos", "where", "name=gpu_regular")


def test_a_limit_it_never_fits() -> None:
    facts = WaitFacts("7", "PENDING", "QOSMaxNodePerJobLimit", qos="debug")
    why = explain(facts, Extras("7", "QOSMaxNodePerJobLimit", limits=()), NOW)
    assert why.never and why.headline.startswith("it will never start as it is: it asks for more nodes")


def test_controller_words_in_the_reason_column() -> None:
    jobs = parse_squeue(capture("squeue_reason_state_desc").stdout, fields=("JobID", "State", "Reason"))
    words = [explain(facts_of(j.job_id, None, j), None, NOW) for j in jobs]  # type: ignore[arg-type]
    assert words[0].reason == "ReqNodeNotAvail" and "UnavailableNodes:prio[001-002]" in " ".join(words[0].lines)
    assert words[1].reason == "ReqNodeNotAvail"  # "Nodes required for job are DOWN, ..." stands for it
    assert words[1].headline.startswith("a node it needs is down")


def test_held_and_begin() -> None:
    held = explain(WaitFacts("5", "PENDING", "JobHeldUser"), None, NOW)
    assert held.headline == "it is held by its user" and "ntui release 5" in held.lines[-1]
    begin = WaitFacts("5", "PENDING", "BeginTime", eligible=datetime(2026, 12, 1, 11, 4))
    assert explain(begin, None, NOW).headline.endswith("eligible from 11:04 (in 1 h)")


def test_the_book_fetches_once_per_job_and_reason() -> None:
    clock = [0.0]
    book = WhyBook(monotonic=lambda: clock[0])
    d = details("scontrol_show_job_pending_resources")
    assert book.request(d.job_id, None, None) is None  # the details first (dependency, QOS, account)
    request = book.request(d.job_id, d, None)
    assert request is not None and book.request(d.job_id, d, None) is None  # one at a time
    runner = FakeRunner({"sprio": capture("sprio_job_fields")})
    book.stored(book.fetch(runner, request))
    assert book.request(d.job_id, d, None) is None  # cached
    clock[0] = 301.0
    assert book.request(d.job_id, d, None) is not None  # older than MAX_AGE_S: once more
    book.failed()
    running = details("scontrol_show_job_running_2node_gpu")
    assert book.request(running.job_id, running, None) is None  # not pending: nothing to fetch
    assert book.why(running.job_id, running, None, NOW) is None
    why = book.why(d.job_id, d, None, NOW)
    assert why is not None and why.reason == "Resources"
