"""Every job state reason of the tested Slurm releases has its own words (ntui/core/waiting/reasons.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.waiting.reasons import Kind, reason_text, split_reason

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"
VERSIONS = ("22.05", "24.11", "26.05")


def names(version: str) -> list[str]:
    lines = (DATA / f"reasons-{version}.txt").read_text().splitlines()
    return [line for line in lines if line and not line.startswith("#")]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_reason_of_the_version_has_its_own_text(version: str) -> None:
    found = names(version)
    assert len(found) > 190  # the whole table, not a stub
    missing = [n for n in found if not reason_text(n).known]
    assert missing == []
    for name in found:
        text = reason_text(name)
        assert text.name == name and text.text and name not in ("",)
        assert not text.text.endswith("."), name  # completes a sentence ("it waits because ...")


def test_the_lists_differ_as_the_releases_do() -> None:
    old, mid, new = (set(names(v)) for v in VERSIONS)
    assert "BlockFreeAction" in old and "BlockFreeAction" not in mid  # gone after 22.05
    assert "MpiPortsBusy" in mid and "MpiPortsBusy" not in old
    assert "NvidiaImexChannels" in new and "NvidiaImexChannels" not in mid
    assert "FrontEndDown" in mid and "FrontEndDown" not in new


def test_an_unknown_name_is_said_as_it_is() -> None:
    text = reason_text("SomethingNew")
    assert not text.known and "SomethingNew" in text.text


@pytest.mark.parametrize(("name", "kind", "never", "limit", "tres"), [
    ("QOSMaxJobsPerUserLimit", Kind.QOS_LIMIT, False, "MaxJobsPerUser", ""),
    ("QOSMaxGRESPerUser", Kind.QOS_LIMIT, False, "MaxTRESPerUser", "gres/"),
    ("AssocGrpCPURunMinutesLimit", Kind.ASSOC_LIMIT, False, "GrpTRESRunMins", "cpu"),
    ("MaxNodePerAccount", Kind.QOS_LIMIT, False, "MaxTRESPerAccount", "node"),
    ("QOSMaxNodePerJobLimit", Kind.QOS_LIMIT, True, "MaxTRESPerJob", "node"),
    ("QOSMaxWallDurationPerJobLimit", Kind.QOS_LIMIT, True, "MaxWall", ""),
    ("QOSMinCpuNotSatisfied", Kind.QOS_LIMIT, True, "MinTRESPerJob", "cpu"),
    ("AssocGrpBBMinutes", Kind.ASSOC_LIMIT, False, "GrpTRESMins", "bb"),
    ("AssocMaxJobsLimit", Kind.ASSOC_LIMIT, False, "MaxJobs", ""),
    ("QOSMaxSubmitJobPerUserLimit", Kind.QOS_LIMIT, False, "MaxSubmitJobsPerUser", ""),
])
def test_limit_names_are_read_by_their_grammar(name: str, kind: Kind, never: bool, limit: str, tres: str) -> None:
    text = reason_text(name)
    assert (text.kind, text.never, text.limit, text.tres) == (kind, never, limit, tres)


def test_words_that_matter_most() -> None:
    assert "free up" in reason_text("Resources").text
    assert reason_text("DependencyNeverSatisfied").never
    assert reason_text("PartitionTimeLimit").never and "MaxTime" in reason_text("PartitionTimeLimit").text
    assert "release" in reason_text("JobHeldUser").fix
    assert "fewer" in reason_text("QOSMaxNodePerJobLimit").fix
    assert "less memory" in reason_text("QOSMaxMemoryPerJob").fix  # a mass noun


def test_split_reason_separates_the_controllers_words() -> None:
    assert split_reason("ReqNodeNotAvail, UnavailableNodes:nid[001-002]") == (
        "ReqNodeNotAvail", "UnavailableNodes:nid[001-002]")
    assert split_reason("Resources") == ("Resources", "")
    assert split_reason("(Priority)") == ("Priority", "")
    assert split_reason("None") == ("None", "")
    assert split_reason("") == ("", "")
    words = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
    assert split_reason(words) == ("", words)
    assert split_reason(words.replace(" ", "_")) == ("", words)  # scontrol's Reason= spelling
