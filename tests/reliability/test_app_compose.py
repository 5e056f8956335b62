"""The compose view when Slurm says no, or is not there (scenarios F3, F5, B1 of docs/reliability.md).

F3 (dev cluster): four rejections from the form, each checked with ``t`` (sbatch --test-only) and ``s``
(submit + confirm): the reason is shown, the form keeps its overrides and script, nothing is queued. Slurm
22.05 with ``EnforcePartLimits=NO`` accepts a time over the partition's MaxTime (the job would pend forever)
and, without accounting, any account: ntui's site check (:mod:`ntui.core.compose.sitecheck`) refuses the first before
sbatch; the second is accepted by the cluster without accounting (``dev-cluster up --no-accounting``), and the
test records that; with accounting (``AccountingStorageEnforce=associations``) Slurm refuses it with its reason.
The CLI gets the same four.

F5: no Slurm client on PATH: the app still composes, renders and saves a preset (save-as), and ``s``/``t``
say it cannot submit. B1: the malformed preset corpus in the user's directory: the app starts with the others.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import render
from ntui.core.compose.spec import validate
from ntui.core.errors import NO_SLURM
from ntui.core.paths import user_presets_dir
from ntui.core.records.history import History
from ntui.core.slurm.runner import SubprocessRunner
from ntui.ui.app import make_app
from ntui.ui.screens.compose import ComposeScreen
from ntui.ui.screens.confirm import ConfirmSubmitScreen
from ntui.ui.screens.dialogs import SaveAsScreen
from ntui.ui.screens.jobs import JobsScreen
from tests.cluster.conftest import conf_has_accounting
from tests.reliability.conftest import DevCluster, dev_cluster, ntui_env, run_ntui, wait_for  # noqa: F401
from tests.support.demo import settle, type_into
from tests.support.notes import notified

PRESET = "local-torchrun"
JOB_NAME = "ntui-f3"


def compose(app: Any) -> ComposeScreen:
    screen = app.screen
    assert isinstance(screen, ComposeScreen), screen
    return screen


def notes(app: Any) -> list[str]:
    return [str(n.message) for n in notified(app)]


def status(screen: ComposeScreen) -> str:
    return str(screen.query_one("#status").render())


# case -> (form fields, how it ends, what the user is told)
CASES: dict[str, tuple[dict[str, str], str, str]] = {
    "unknown partition": ({"sbatch.partition": "nosuchpart"}, "site",
                          "no partition nosuchpart on this cluster (partitions: debug)"),
    "unknown account": (({"sbatch.account": "nosuchacct"}, "slurm",
                         "Invalid account or account/partition combination specified")
                        if conf_has_accounting() else ({"sbatch.account": "nosuchacct"}, "accepted", "")),
    "5 GPUs per node": ({"sbatch.gpus-per-node": "5", "launcher.nproc-per-node": "5"}, "slurm",
                        "Requested node configuration is not available"),
    "time over the partition limit": ({"sbatch.time": "3:00:00"}, "site",
                                      "03:00:00 is over the MaxTime of the default partition debug (02:00:00)"),
}


async def _fill(pilot: Any, screen: ComposeScreen, fields: dict[str, str], logs: Path) -> None:
    screen.open_preset(PRESET)  # a fresh form for every case
    await settle(pilot, rounds=200)
    screen.form.set_text("logs.dir", str(logs))
    screen.form.set_text("sbatch.job-name", JOB_NAME)
    for key, value in fields.items():
        await type_into(pilot, key, value)
    await pilot.press("escape")
    await settle(pilot, rounds=200)


@pytest.mark.cluster
@pytest.mark.accounting_agnostic
async def test_rejections_from_the_compose_form(dev_cluster: DevCluster, tmp_path: Path) -> None:  # noqa: F811
    history = tmp_path / "history.sqlite3"
    logs = tmp_path / "logs"
    app = make_app(runner=SubprocessRunner(), preset=PRESET, identity="", cursor_blink=False,
                   history_factory=lambda: History(history))
    results: dict[str, tuple[str, str]] = {}
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, rounds=200)
            screen = compose(app)
            assert screen.cluster is not None and screen.cluster.partitions == ("debug",)
            if dev_cluster.accounting:
                line = next(ln for ln in status(screen).splitlines() if ln.startswith("Slurm:"))
                assert "ntuidev" in line and "ntuiother" in line and "ntuilow" in line, line  # sacctmgr's answer
            else:
                assert "accounts/QOS unavailable" in status(screen)  # no accounting here: the form says so
            for case, (fields, outcome, reason) in CASES.items():
                await _fill(pilot, screen, fields, logs)
                assert not screen.form.local_errors and screen.rendered is not None and screen.rendered.spec
                before = (screen.form.overrides, screen.preview.script)
                assert all(f"{k}={v}" in before[0] for k, v in fields.items()), before[0]
                await pilot.press("t")
                await settle(pilot, rounds=400)
                check = screen.check_line.plain if screen.check_line else ""
                submitted = ""
                if outcome == "accepted":
                    assert check.startswith("✓ test-only: would start"), (case, check)
                else:
                    assert check.startswith("✗") and reason in check, (case, check)
                    assert any(reason in n for n in notes(app)), (case, notes(app))
                    await pilot.press("s")
                    await settle(pilot, rounds=200)
                    if outcome == "slurm":  # only sbatch knows: confirm, then Slurm's reason
                        assert isinstance(app.screen, ConfirmSubmitScreen), (case, app.screen)
                        await pilot.press("y")
                        await settle(pilot, rounds=400)
                    else:
                        assert app.screen is screen, (case, app.screen)  # refused before the confirmation
                    submitted = screen.submit_line.plain if screen.submit_line else ""
                    assert submitted.startswith("✗ not submitted") and reason in submitted, (case, submitted)
                assert (screen.form.overrides, screen.preview.script) == before, case  # the form is unchanged
                results[case] = (check, submitted)
        print("\nF3 (app):\n" + "\n".join(f"  {c}: t -> {r[0]!r}; s -> {r[1]!r}" for c, r in results.items()))
        h = History(history)
        try:
            statuses = [e.status for e in h.entries()]
        finally:
            h.close()
        # the sbatch refusals (5 GPUs; with accounting also the unknown account); the site check sent nothing
        assert statuses == ["failed"] * sum(1 for c in CASES.values() if c[1] == "slurm")
        assert not list(logs.glob(".*.sbatch"))  # its staging script is gone
        queued = dev_cluster.run("squeue", "-h", "-n", JOB_NAME, "-o", "%i").stdout.split()
        assert queued == [], f"a rejected job was queued: {queued}"
    finally:
        ids = dev_cluster.run("squeue", "-h", "-n", JOB_NAME, "-o", "%i").stdout.split()
        if ids:
            dev_cluster.run("scancel", *ids)


@pytest.mark.cluster
@pytest.mark.accounting_agnostic
@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][1] != "accepted"])
def test_rejections_from_the_cli(dev_cluster: DevCluster, tmp_path: Path, case: str) -> None:  # noqa: F811
    fields, outcome, reason = CASES[case]
    sets = [a for k, v in {**fields, "logs.dir": str(tmp_path / "logs"), "sbatch.job-name": JOB_NAME}.items()
            for a in ("--set", f"{k}={v}")]
    env = ntui_env(tmp_path / "home", base=dev_cluster.env)
    for args in (("check", PRESET, "--test-only"), ("submit", PRESET)):
        res = run_ntui(*args, *sets, env=env)
        err = res.stderr.decode()
        assert res.returncode == (2 if outcome == "site" else 3), (args, err)
        assert reason in err and "Traceback" not in err, (args, err)
    assert dev_cluster.run("squeue", "-h", "-n", JOB_NAME, "-o", "%i").stdout.split() == []


def _no_slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("SLURM_CONF", raising=False)


async def test_without_slurm_the_app_composes_renders_saves_and_says_it_cannot_submit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_slurm(tmp_path, monkeypatch)
    app = make_app(runner=SubprocessRunner(), preset="local-srun", identity="", cursor_blink=False,
                   history_factory=lambda: None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, rounds=200)
        screen = compose(app)
        assert screen.slurm_missing and NO_SLURM in status(screen)
        await type_into(pilot, "sbatch.nodes", "1")
        await pilot.press("escape")
        await settle(pilot)
        spec, _ = validate(load_preset("local-srun", ["sbatch.nodes=1"]))
        assert spec is not None and screen.preview.script == render(spec)  # composes and renders
        for key, verb in (("t", "check"), ("s", "submit")):
            before = len(notified(app))
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is screen, key  # no confirmation: nothing could be submitted
            assert NO_SLURM in notes(app)[before:], (key, notes(app))
            line = screen.check_line if key == "t" else screen.submit_line
            assert line is not None and line.plain == f"✗ cannot {verb}: {NO_SLURM}", line
        await pilot.press("n")  # save as: works without Slurm
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, SaveAsScreen)
        dialog.query_one("#save-as-name", Input).value = "one-node-no-slurm"
        await pilot.press("enter")
        await settle(pilot)
        saved = user_presets_dir() / "one-node-no-slurm.yaml"
        assert saved.exists() and screen.preset_name == "one-node-no-slurm"
        spec2, problems = validate(load_preset("one-node-no-slurm"))
        assert spec2 is not None and spec2.nodes == 1, problems
        await pilot.press("2")  # the jobs view: says why it has no queue, keeps working
        jobs = app.screen
        assert isinstance(jobs, JobsScreen)
        banner = jobs.query_one("#jobs-banner")
        await wait_for(pilot, "the jobs view's banner", lambda: bool(banner.display))
        assert NO_SLURM in str(banner.render())
        await pilot.press("1")
        assert app.screen is screen and app.is_running


async def test_the_app_starts_with_the_bad_preset_corpus_in_the_user_dir(tmp_path: Path) -> None:
    """B1 in the app: every malformed preset of the corpus next to the shipped ones."""
    from tests.reliability.test_bad_presets import CORPUS, LOAD_BROKEN, SHIPPED

    user = user_presets_dir()
    user.mkdir(parents=True, exist_ok=True)
    for f in CORPUS.iterdir():
        shutil.copy(f, user / f.name)
    (user / "huge.yaml").write_text("# " + "x" * 2_400_000 + "\n")
    app = make_app(runner=SubprocessRunner(), identity="", cursor_blink=False, history_factory=lambda: None)
    start = time.monotonic()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, rounds=200)
        elapsed = time.monotonic() - start
        screen = compose(app)
        infos = {name: screen.picker.info(name) for name in [*SHIPPED, *(Path(f).stem for f in os.listdir(user))]}
        assert all(infos[n] is not None and not infos[n].problem for n in SHIPPED), infos
        broken = {n for n, i in infos.items() if i is not None and i.problem}
        assert {Path(f).stem for f in LOAD_BROKEN} <= broken, broken
        assert screen.preset_name in SHIPPED and screen.rendered is not None and screen.rendered.script
        # a broken one opens as "broken", with its file:line, and the app goes on
        bad = next(iter(sorted(LOAD_BROKEN)))
        screen.open_preset(Path(bad).stem)
        await wait_for(pilot, "the broken preset opened", lambda: screen.preset_name == Path(bad).stem)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.base is None and screen.unplaced and screen.unplaced[0].source.file.endswith(bad)
        await asyncio.sleep(0)
        assert app.is_running
    print(f"\nB1 (app): started with {len(infos)} presets, {len(broken)} marked broken, settled in {elapsed:.1f} s")
