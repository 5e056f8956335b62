"""``x`` on a job of a cluster reached over ssh (issue #45): the app steps aside and runs the step ``ntui --cluster NAME
attach`` runs, ``ssh -t`` over that cluster's master, then comes back. The cluster's runner answers Slurm from a real
job's captures (``tests/data/stacks/torchrun-stuck``); under it an :class:`~ntui.core.slurm.ssh.SshRunner` whose
``ssh`` is a stand-in that records its argv (the terminal's edge: no login here); the app's terminal hand-over is a
stand-in too (a headless app cannot suspend)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ntui.core.remote.files import LocalFiles
from ntui.core.slurm.ssh import SshRunner, SshTarget
from ntui.ui.screens.jobs import JobsScreen
from tests.support.fakes import FakeRunner, result
from tests.support.notes import notified
from tests.support.screenshots_clusters import clusters_app, job_line, show_job
from tests.support.screenshots_jobs import settle_jobs, wait_until
from tests.support.screenshots_stacks import CAPTURE, JOB

SIZE = (150, 40)
#: The stand-in ssh: each call's argv appended as a JSON line to the file named by its own name's sibling
#: ``calls.jsonl``; ``-O check`` answers that the master runs; a terminal (``-t``) ends with the shell's status 7.
FAKE_SSH = """#!{python}
import json, pathlib, sys
pathlib.Path({log!r}).open("a").write(json.dumps(sys.argv[1:]) + "\\n")
sys.exit(7 if "-t" in sys.argv[1:] else 0)
"""


class _NoRecords(LocalFiles):
    """A cluster's files for the other tabs: no history there (its agent is not what this test looks at)."""

    def job(self, job_id: str, cluster: str | None = None) -> dict[str, Any] | None:
        return None

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        return []


class _Cluster(FakeRunner):
    """A cluster's runner: Slurm's answers canned; its ssh runner under it as ``inner`` (as a TimeoutRunner holds
    it), which the shell's step goes through."""

    inner: SshRunner


def _ssh(tmp_path: Path, host: str) -> tuple[SshRunner, Path]:
    log = tmp_path / f"{host}-calls.jsonl"
    program = tmp_path / f"ssh-{host}"
    program.write_text(FAKE_SSH.format(python=sys.executable, log=str(log)))
    program.chmod(0o755)
    target = SshTarget(host=host, control_dir=tmp_path / f"ctl-{host}", ssh=str(program))
    return SshRunner(target, name=host), log


def _alpha(tmp_path: Path) -> tuple[_Cluster, Path]:
    def text(name: str) -> str:
        return (CAPTURE / name).read_text()

    runner = _Cluster({"squeue": result(stdout=text("squeue.stdout")),
                       ("scontrol", "show", "job"): result(stdout=text("show_job.stdout"))}, default=result())
    runner.inner, log = _ssh(tmp_path, "alpha")
    return runner, log


def _beta(tmp_path: Path) -> tuple[_Cluster, Path]:
    """beta: a pending job."""
    runner = _Cluster({"squeue": result(stdout=job_line("5", "tokenize", reason="Priority") + "\n")},
                      default=result())
    runner.add(("scontrol", "show", "job", "-d", "5"), result(stdout=show_job("5", "tokenize")))
    runner.inner, log = _ssh(tmp_path, "beta")
    return runner, log


def _calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _terminals(log: Path) -> list[list[str]]:
    return [c for c in _calls(log) if "-t" in c]


def _screen(app: Any) -> JobsScreen:
    screen = next(s for s in app.screen_stack if isinstance(s, JobsScreen))
    assert isinstance(screen, JobsScreen)
    return screen


def _suspendable(app: Any) -> list[str]:
    """The app's terminal hand-over stood in for: each hand-over recorded."""
    handed: list[str] = []

    @contextlib.contextmanager
    def suspend() -> Iterator[None]:
        handed.append("suspended")
        yield
        handed.append("resumed")

    app.suspend = suspend
    return handed


def _cli_attach(runner: FakeRunner, monkeypatch: pytest.MonkeyPatch, node: str) -> int:
    """``ntui --cluster alpha attach JOB --node NODE`` through the same cluster runner."""
    from ntui.cli import waiting
    from ntui.core.config import Settings

    monkeypatch.setattr(waiting, "cli_settings", lambda: Settings())
    monkeypatch.setattr(waiting, "cli_runner", lambda settings=None: runner)
    return waiting.cmd_attach(argparse.Namespace(job_id=JOB, node=node))


async def test_x_runs_the_clis_attach_step_over_the_clusters_master(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (alpha, alpha_log), (beta, beta_log) = _alpha(tmp_path), _beta(tmp_path)
    app = clusters_app(local=None, clusters={"alpha": alpha, "beta": beta}, user="root")
    app.cluster_files = lambda name: _NoRecords()  # type: ignore[method-assign]
    handed = _suspendable(app)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle_jobs(pilot)
        screen = _screen(app)
        await wait_until(pilot, lambda: {f"alpha/{JOB}", "beta/5"} <= set(screen.table.rows))
        screen.table.move_cursor(key=f"alpha/{JOB}")
        await settle_jobs(pilot)
        await pilot.press("x")
        await wait_until(pilot, lambda: any("back from the shell" in n.message for n in notified(app)))
        assert handed == ["suspended", "resumed"]
        (app_argv,) = _terminals(alpha_log)
        assert [c for c in _calls(alpha_log) if "-t" not in c] == [
            ["-o", f"ControlPath={tmp_path / 'ctl-alpha'}/%C", "-o", "BatchMode=yes", "-O", "check", "alpha"]]
        assert any("exit 7" in n.message and "nid001" in n.message for n in notified(app))
        assert _calls(beta_log) == [] and not any(a[0] == "srun" for a in alpha.argvs())  # never srun here

        screen.table.move_cursor(key="beta/5")  # beta's job is pending: refused, nothing handed over
        await settle_jobs(pilot)
        await pilot.press("x")
        await wait_until(pilot, lambda: any("a shell needs a running job" in n.message for n in notified(app)))
        assert handed == ["suspended", "resumed"] and _terminals(beta_log) == []

    assert _cli_attach(alpha, monkeypatch, "nid001") == 7  # the shell's status
    cli_argv = _terminals(alpha_log)[-1]
    assert app_argv == cli_argv  # one step, one argv builder
    host_at = app_argv.index("alpha")
    assert app_argv[host_at - 1] == "-t" and app_argv[host_at + 1] == "--"
    assert app_argv[-1] == f"srun --jobid={JOB} --overlap --pty -N 1 -n 1 -w nid001 bash"
    assert any(f"ControlPath={tmp_path / 'ctl-alpha'}/%C" == w for w in app_argv)  # over the cluster's master
