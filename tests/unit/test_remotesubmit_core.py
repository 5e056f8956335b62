"""The app's submission to a cluster reached over ssh (ntui.core.remotesubmit): the same protocol as ``ntui --cluster
NAME submit``, with fakes at the Slurm-runner edge and a recording history: the intent before sbatch, submitted or
failed after; a lost answer looked for by the job's comment, never sent twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.spec import JobSpec, validate
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.remotesubmit import SubmitRefused, SubmitUnknown, submit_to_cluster
from ntui.core.slurm.runner import SlurmError
from ntui.core.slurm.ssh import SshError
from tests.support.fakes import FakeRunner, result

ROOT = Path(__file__).resolve().parents[2]
PARTITIONS = (ROOT / "tests/data/slurm/scontrol_show_partition.stdout").read_text()


class History:
    """The cluster's history as far as a submission writes it."""

    def __init__(self, keeps: bool = True) -> None:
        self.keeps = keeps
        self.facts: list[tuple[str, str, dict[str, Any]]] = []

    def record(self, fact: str, token: str, **fields: Any) -> bool:
        self.facts.append((fact, token, fields))
        return self.keeps


def _job(tmp_path: Path) -> tuple[LoadedPreset, JobSpec]:
    loaded = load_preset(str(ROOT / "presets/local-accelerate.yaml"), [f"logs.dir={tmp_path}/logs"])
    spec, problems = validate(loaded)
    assert spec is not None, problems
    return loaded, spec


def _runner(sbatch: Any, queue: str = "") -> FakeRunner:
    return FakeRunner({("scontrol", "show", "partition"): result(stdout=PARTITIONS), "mkdir": result(),
                       "sbatch": sbatch, "squeue": result(stdout=queue), "sacct": result()}, default=result())


def _link_down() -> SshError:
    return SshError("ssh to c: the connection dropped", host="c", words="the connection dropped (ssh: EOF)")


def _sbatch(runner: FakeRunner) -> list[Any]:
    return [c for c in runner.history if c.argv[0] == "sbatch"]


def test_the_intent_then_the_job_through_sbatchs_stdin(tmp_path: Path) -> None:
    loaded, spec = _job(tmp_path)
    runner = _runner(result(stdout="4242;della\n"))
    history = History()
    got = submit_to_cluster(loaded, spec, runner, "della", lambda: history)
    assert got.job.job_id == "4242" and got.kept and got.cluster == "della"
    [call] = _sbatch(runner)
    assert call.input and "#SBATCH" in call.input  # the script rendered here, on sbatch's standard input
    comment = next(a for a in call.argv if a.startswith("--comment="))
    assert [f for f, _, _ in history.facts] == ["intent", "submitted"]
    assert comment.endswith(history.facts[0][1])
    assert history.facts[1][2] == {"job_id": "4242", "cluster": "della"}


def test_a_lost_answer_is_found_by_its_comment_and_not_sent_again(tmp_path: Path) -> None:
    loaded, spec = _job(tmp_path)
    history = History()
    sent: list[str] = []

    def lost(argv: tuple[str, ...]) -> Any:
        sent.append(next(a for a in argv if a.startswith("--comment=")).split("=", 1)[1])
        raise _link_down()

    runner = FakeRunner({("scontrol", "show", "partition"): result(stdout=PARTITIONS), "mkdir": result(),
                         "sbatch": lost, "sacct": result()}, default=result())
    runner.add("squeue", lambda argv: result(stdout=f"8000|someone's\n9001|{sent[0]}\n"))
    got = submit_to_cluster(loaded, spec, runner, "della", lambda: history)
    assert got.job.job_id == "9001"
    assert len(_sbatch(runner)) == 1  # never twice
    assert any("found in its queue by its comment" in n for n in got.notes)
    assert [f for f, _, _ in history.facts] == ["intent", "submitted"]


def test_a_lost_answer_not_found_is_said_and_the_intent_stays(tmp_path: Path) -> None:
    loaded, spec = _job(tmp_path)
    history = History()
    runner = _runner(_link_down(), queue="8000|someone's\n")
    with pytest.raises(SubmitUnknown, match="not submitted, della has no job with comment"):
        submit_to_cluster(loaded, spec, runner, "della", lambda: history)
    assert len(_sbatch(runner)) == 1
    assert [f for f, _, _ in history.facts] == ["intent"]  # not known for sure: no outcome written


def test_a_refused_login_or_sbatch_is_a_failure_recorded_there(tmp_path: Path) -> None:
    loaded, spec = _job(tmp_path)
    for error in (SshError("ssh to c: refused", host="c", words="the login was refused"),
                  SlurmError("sbatch: error: invalid account")):
        history = History()
        with pytest.raises(SlurmError):
            submit_to_cluster(loaded, spec, _runner(error), "della", lambda h=history: h)
        assert [f for f, _, _ in history.facts] == ["intent", "failed"]


def test_no_history_there_is_said_and_the_submit_goes_on(tmp_path: Path) -> None:
    loaded, spec = _job(tmp_path)
    got = submit_to_cluster(loaded, spec, _runner(result(stdout="77\n")), "della", lambda: History(keeps=False))
    assert got.job.job_id == "77" and not got.kept
    assert any("not kept in della's history (no ntui agent there)" in n for n in got.notes)


def test_the_clusters_partitions_refuse_before_sbatch(tmp_path: Path) -> None:
    loaded = load_preset(str(ROOT / "presets/local-accelerate.yaml"),
                         [f"logs.dir={tmp_path}/logs", "sbatch.partition=nosuchpart"])
    spec, _ = validate(loaded)
    assert spec is not None
    runner = _runner(result(stdout="1\n"))
    history = History()
    with pytest.raises(SubmitRefused, match="della would not run it"):
        submit_to_cluster(loaded, spec, runner, "della", lambda: history)
    assert not _sbatch(runner) and not history.facts


def test_test_only_there_gives_the_script_on_stdin_and_submits_nothing(tmp_path: Path) -> None:
    from ntui.core.compose.render import render
    from ntui.core.compose.sitecheck import cluster_limits
    from ntui.core.remotesubmit import test_only_there

    loaded, spec = _job(tmp_path)
    said = "sbatch: Job 123 to start at 2026-06-01T10:00:00 using 4 processors on nodes c1 in partition debug\n"
    runner = _runner(result(stderr=said))
    got, problems = test_only_there(spec, runner, cluster_limits(runner), loaded=loaded)
    assert got.ok and got.partition == "debug" and got.start == "2026-06-01T10:00:00"
    [call] = _sbatch(runner)
    assert call.argv == ("sbatch", "--test-only") and call.input == render(spec)
    assert not [c for c in runner.history if c.argv[0] == "mkdir"]  # nothing written there
    assert isinstance(problems, list)


class SweepFiles(History):
    """A cluster's files that also take a sweep's parts, written by the agent's own code; ``agent``: False for
    plain commands (no sweep files written there)."""

    def __init__(self, runner: FakeRunner, agent: bool = True) -> None:
        super().__init__()
        self.runner = runner
        self.agent = agent
        self.parts: list[tuple[str, int]] = []  # each part, with how many sbatch calls came before it

    def sweep(self, part: str, **fields: Any) -> dict[str, Any] | None:
        from ntui.core.remote import agent as local_agent

        self.parts.append((part, len(_sbatch(self.runner))))
        return local_agent.sweep_file({**fields, "part": part}) if self.agent else None


def _sweep(tmp_path: Path) -> tuple[LoadedPreset, JobSpec]:
    loaded = load_preset(str(ROOT / "presets/local-sweep.yaml"), [f"logs.dir={tmp_path}/logs"])
    spec, problems = validate(loaded)
    assert spec is not None and spec.sweep is not None, problems
    return loaded, spec


def test_a_sweep_sends_its_manifest_before_sbatch_and_its_job_file_after(tmp_path: Path) -> None:
    loaded, spec = _sweep(tmp_path)
    runner = _runner(result(stdout="4242\n"))
    files = SweepFiles(runner)
    got = submit_to_cluster(loaded, spec, runner, "della", lambda: files, indices=[4, 1])
    assert files.parts == [("manifest", 0), ("job", 1)]
    [call] = _sbatch(runner)
    assert "--array=1,4%2" in call.argv  # the tasks asked, with the sweep's cap
    assert got.job.tasks == (1, 4) and got.job.batch_log.endswith("4242_1.out")
    assert [f for f, _, _ in files.facts] == ["intent", "submitted"]
    assert len(list((tmp_path / "logs").glob("*.manifest"))) == 1
    assert len(list((tmp_path / "logs").glob("*-4242.sweep"))) == 1


def test_a_sweep_without_an_agent_there_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    loaded, spec = _sweep(tmp_path)
    runner = _runner(result(stdout="4242\n"))
    files = SweepFiles(runner, agent=False)
    with pytest.raises(SubmitRefused, match="manifest is written on della by ntui's agent there"):
        submit_to_cluster(loaded, spec, runner, "della", lambda: files)
    assert not _sbatch(runner) and not files.facts


def test_what_is_said_is_said_as_it_happens_in_the_words_given(tmp_path: Path) -> None:
    from ntui.core.remotesubmit import Wording

    loaded, spec = _job(tmp_path)
    said: list[tuple[str, int]] = []
    runner = _runner(_link_down(), queue="")
    words = Wording(looking="{cluster}: looking for {tag}", not_found="{cluster}: none has {tag}")
    with pytest.raises(SubmitUnknown, match=r"^della: none has ntui-submit:"):
        submit_to_cluster(loaded, spec, runner, "della", lambda: History(), wording=words,
                          say=lambda note: said.append((note, len([c for c in runner.history
                                                                   if c.argv[0] == "squeue"]))))
    assert [(n.split(" ntui-submit:")[0], looked) for n, looked in said] == [("della: looking for", 0)]
