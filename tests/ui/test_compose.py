"""Pilot tests of the compose view: form -> overrides -> preview, validation, check, submit."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Select, TextArea

from ntui.cli import run as cli_run
from ntui.core.slurm.runner import SlurmNotInstalled
from ntui.ui.messages import JobSubmitted
from ntui.ui.screens.compose import ComposeScreen
from ntui.ui.screens.confirm import ConfirmSubmitScreen
from ntui.ui.screens.jobs import JobsScreen
from tests.support.demo import demo_runner, settle, type_into
from tests.support.notes import notified
from tests.support.screenshots_jobs import wait_until
from tests.ui.conftest import AppFactory


def cli_render(preset: str, overrides: tuple[str, ...]) -> str:
    """What ``ntui render PRESET --set ...`` prints (run in-process, with the fixture preset dirs)."""
    argv = ["render", preset]
    for o in overrides:
        argv += ["--set", o]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert cli_run(argv) == 0, err.getvalue()
    return out.getvalue()


def compose(pilot: Pilot[Any]) -> ComposeScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ComposeScreen)
    return screen


def notifications(pilot: Pilot[Any]) -> list[str]:
    return [n.message for n in notified(pilot.app)]


async def test_editing_a_field_updates_the_preview_to_the_renderer_output(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        assert screen.preview.script == cli_render("demo-torchrun", ())
        await type_into(pilot, "sbatch.nodes", "1")
        await type_into(pilot, "sbatch.time", "45")
        await settle(pilot)
        assert screen.form.overrides == ("sbatch.nodes=1", "sbatch.time=45")
        text = screen.preview.script
        assert text == cli_render("demo-torchrun", screen.form.overrides)
        assert "#SBATCH --nodes=1\n" in text and "#SBATCH --time=00:45:00\n" in text
        assert screen.form.rows["sbatch.nodes"].has_class("-modified")
        assert not screen.form.rows["sbatch.gpus-per-node"].has_class("-modified")
        # Back to the preset's value: no override, no marker.
        await type_into(pilot, "sbatch.nodes", "2")
        await settle(pilot)
        assert screen.form.overrides == ("sbatch.time=45",)
        assert not screen.form.rows["sbatch.nodes"].has_class("-modified")
        assert screen.preview.script == cli_render("demo-torchrun", ("sbatch.time=45",))


async def test_every_kind_of_field_renders_like_the_cli(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        form = compose(pilot).form
        form.control("sbatch.job-name").value = "yes"  # text YAML would read as a bool
        form.control("sbatch.qos").value = ""  # cleared optional option: left out
        form.control("args").value = "--lr '1e-3' --name 'two words'"
        area = form.control("env")
        assert isinstance(area, TextArea)
        area.load_text("OMP_NUM_THREADS=4\nWANDB_MODE=offline")
        area2 = form.control("setup")
        assert isinstance(area2, TextArea)
        area2.load_text('module load pytorch\necho "ready $SLURM_JOB_ID"')
        select = form.control("container.runtime")
        assert isinstance(select, Select)
        select.value = "none"
        box = form.control("nccl.debug")
        assert isinstance(box, Checkbox)
        box.value = True
        await settle(pilot)
        screen = compose(pilot)
        overrides = screen.form.overrides
        assert 'sbatch.job-name="yes"' in overrides and "sbatch.qos=false" in overrides
        assert "container.runtime=none" in overrides and "nccl.debug=true" in overrides
        text = screen.preview.script
        assert text == cli_render("demo-torchrun", overrides)
        assert "#SBATCH --job-name=yes" in text and "--qos" not in text
        assert "'two words'" in text and "export WANDB_MODE=offline" in text and "NCCL_DEBUG=INFO" in text
        assert 'echo "ready $SLURM_JOB_ID"' in text


async def test_invalid_value_shows_inline_and_blocks_submit(app_factory: AppFactory) -> None:
    runner = demo_runner()
    app = app_factory(runner=runner)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        good = screen.preview.script
        await type_into(pilot, "sbatch.nodes", "two")
        await settle(pilot)
        messages = screen.form.field_messages()
        assert 'expected a positive integer, got "two"' in messages["sbatch.nodes"]
        assert screen.form.rows["sbatch.nodes"].has_class("-error")
        assert screen.preview.has_class("-stale") and screen.preview.script == good
        await pilot.press("escape", "s")
        await settle(pilot)
        assert not isinstance(pilot.app.screen, ConfirmSubmitScreen)
        assert any("Cannot submit" in m and "sbatch.nodes" in m for m in notifications(pilot))
        await pilot.press("t")
        await settle(pilot)
        assert not any(argv[0] == "sbatch" for argv in runner.argvs())


async def test_cross_field_rule_shows_next_to_its_field(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        await type_into(pilot, "sbatch.ntasks-per-node", "4")
        await settle(pilot)
        assert "(G2)" in screen.form.field_messages()["sbatch.ntasks-per-node"]
        await type_into(pilot, "sbatch.time", "90 min")
        inp = screen.form.control("sbatch.time")
        assert isinstance(inp, Input)
        assert "expected a Slurm time" in screen.form.field_messages()["sbatch.time"]  # before the debounce
        await settle(pilot)
        assert screen.rendered is not None and screen.rendered.spec is None


async def test_check_shows_the_estimate(app_factory: AppFactory) -> None:
    runner = demo_runner()
    app = app_factory(runner=runner)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        screen = compose(pilot)
        assert screen.check_line is not None
        assert "would start 2026-06-01T09:41:12 on nid[001-002]" in screen.check_line.plain
        assert any(argv[:2] == ("sbatch", "--test-only") for argv in runner.argvs())


async def test_check_shows_slurms_reason(app_factory: AppFactory) -> None:
    app = app_factory(runner=demo_runner(reject="Requested node configuration is not available"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        line = compose(pilot).check_line
        assert line is not None and "Requested node configuration is not available" in line.plain


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_submit_confirms_then_notifies_the_job_id(app_factory: AppFactory, tmp_path: Any) -> None:
    runner = demo_runner(job_id="777")
    app = app_factory(runner=runner)
    seen: list[Any] = []
    async with app.run_test(size=(120, 36), notifications=True, message_hook=seen.append) as pilot:
        await settle(pilot)
        compose_screen(pilot).form.set_text("logs.dir", str(tmp_path / "logs"))
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        dialog = pilot.app.screen
        assert isinstance(dialog, ConfirmSubmitScreen)
        assert dialog.script == compose_screen(pilot).rendered.script  # type: ignore[union-attr]
        await pilot.press("y")
        await settle(pilot)
        assert any(isinstance(m, JobSubmitted) and m.job.job_id == "777" for m in seen)
        assert pilot.app.last_submission is not None and pilot.app.last_submission.job_id == "777"  # type: ignore[attr-defined]
        assert any("Submitted job 777" in str(n.message) for n in notified(app))
        assert [a for a in runner.argvs() if a[:2] == ("sbatch", "--parsable")]
        assert (tmp_path / "logs" / "demo-torchrun-777.sbatch").read_text() == dialog.script


def compose_screen(pilot: Pilot[Any]) -> ComposeScreen:
    return next(s for s in pilot.app.screen_stack if isinstance(s, ComposeScreen))


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_cancel_in_the_dialog_submits_nothing(app_factory: AppFactory) -> None:
    runner = demo_runner()
    app = app_factory(runner=runner)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmSubmitScreen)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ComposeScreen)
        assert not [a for a in runner.argvs() if a[:2] == ("sbatch", "--parsable")]


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_rejected_submission_shows_the_reason_and_keeps_the_form(app_factory: AppFactory, tmp_path: Any) -> None:
    reason = "Invalid account or account/partition combination specified"
    app = app_factory(runner=demo_runner(reject=reason))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        compose_screen(pilot).form.set_text("logs.dir", str(tmp_path / "logs"))
        await type_into(pilot, "sbatch.nodes", "3")
        await pilot.press("escape")
        await settle(pilot)
        overrides, script = screen.form.overrides, screen.preview.script
        texts = {k: screen.form.text_of(k) for k in screen.form.rows}
        await pilot.press("s")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ComposeScreen)
        assert screen.submit_line is not None and reason in screen.submit_line.plain
        assert any(reason in m for m in notifications(pilot))
        assert screen.form.overrides == overrides and screen.preview.script == script
        assert {k: screen.form.text_of(k) for k in screen.form.rows} == texts
        assert pilot.app.last_submission is None  # type: ignore[attr-defined]


async def test_without_slurm_the_app_composes_and_says_it_cannot_submit(app_factory: AppFactory) -> None:
    from tests.support.fakes import FakeRunner

    def missing(argv: tuple[str, ...]) -> Any:
        raise SlurmNotInstalled(f"{argv[0]} not found on PATH: is the Slurm client installed?", argv=argv)

    runner = FakeRunner(handler=missing)
    app = app_factory(runner=runner)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        assert screen.slurm_missing
        assert "Slurm client not found" in str(screen.query_one("#status").content)
        assert screen.preview.script == cli_render("demo-torchrun", ())
        await type_into(pilot, "sbatch.nodes", "1")
        await settle(pilot)
        assert screen.preview.script == cli_render("demo-torchrun", ("sbatch.nodes=1",))
        await pilot.press("escape", "s")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ComposeScreen)
        assert any("cannot check or submit" in m for m in notifications(pilot))


async def test_cluster_choices_are_offered_and_free_text_stays(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        assert screen.form.choices["partition"] == ("debug", "regular", "shared")
        assert screen.form.choices["qos"] == ("debug", "premium", "regular", "shared")
        partition = screen.form.control("sbatch.partition")
        assert isinstance(partition, Input) and partition.suggester is not None
        await type_into(pilot, "sbatch.partition", "nosuch")
        await settle(pilot)
        assert "not a partition on this cluster" in screen.form.field_messages()["sbatch.partition"]
        assert "#SBATCH --partition=nosuch" in screen.preview.script  # a warning, not a block


async def test_other_presets_load_from_the_picker(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        names = [p.name for p in screen.picker.presets]
        assert names == ["my-experiment", "demo-accelerate", "demo-local", "demo-torchrun"]  # user first
        screen.picker.focus()
        screen.picker.highlighted = names.index("demo-accelerate")
        await pilot.press("enter")
        await settle(pilot)
        assert screen.preset_name == "demo-accelerate"
        assert screen.preview.script == cli_render("demo-accelerate", ())
        assert screen.form.rows["launcher.mixed-precision"].display  # accelerate-only fields shown
        screen.picker.highlighted = names.index("demo-local")
        await pilot.press("enter")
        await settle(pilot)
        assert not screen.form.rows["launcher.mixed-precision"].display


async def test_layout_side_by_side_when_wide_and_stacked_when_narrow(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        assert screen.has_class("-wide")
        assert screen.preview.region.x > screen.form.region.right - 1
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert screen.has_class("-narrow")
        assert screen.preview.region.y >= screen.form.region.bottom
        assert screen.preview.region.height >= 4 and screen.form.region.height >= 4


async def test_help_lists_every_binding(app_factory: AppFactory) -> None:
    from ntui.ui.screens.editor import PresetEditorScreen
    from ntui.ui.screens.help import HelpScreen

    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = pilot.app.screen
        assert isinstance(help_screen, HelpScreen)
        text = str(help_screen.query_one("#help-table").content)
        for binding in [*type(pilot.app).BINDINGS, *ComposeScreen.BINDINGS, *PresetEditorScreen.BINDINGS,
                        *ConfirmSubmitScreen.BINDINGS]:
            assert binding.id and binding.id in text, binding
        for command in ("Load preset …", "Submit", "Check", "Save preset as …"):
            assert command in text
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, ComposeScreen)


async def test_footer_bindings_have_ids(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        shown = {b.binding.id for b in pilot.app.active_bindings.values() if b.binding.show}
        assert {"ntui.submit", "ntui.check", "ntui.edit", "ntui.save_as", "ntui.quit", "ntui.help"} <= shown


async def _palette_search(pilot: Pilot[Any], text: str, pick: str) -> None:
    """Type ``text`` into the command palette and wait until its search is over with ``pick`` highlighted: the
    palette gathers its hits in a worker, and an enter before they are listed selects nothing (a fixed pause of
    0.5 s, under load)."""
    from textual.command import CommandList, CommandPalette

    await wait_until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    palette = pilot.app.screen
    await pilot.press(*text)
    hits = palette.query_one(CommandList)

    def listed() -> bool:
        gathering = any(w.node is palette and not w.is_finished for w in pilot.app.workers)
        shown = hits.highlighted is not None and pick in str(hits.get_option_at_index(hits.highlighted).prompt)
        return palette.query_one(Input).value == text and not gathering and shown

    while True:  # the same answer on two looks, a pause apart: the last keystroke's search had its turn
        await wait_until(pilot, listed)
        await pilot.pause()
        if listed():
            return


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_palette_loads_a_preset_and_runs_commands(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await _palette_search(pilot, "load preset: demo-local", "demo-local")
        await pilot.press("enter")
        await settle(pilot)
        assert compose(pilot).preset_name == "demo-local"
        await pilot.press("ctrl+p")
        await _palette_search(pilot, "Submit", "Submit")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmSubmitScreen)


async def test_views_switch_with_number_keys(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await pilot.pause()
        assert isinstance(pilot.app.screen, JobsScreen)
        await pilot.press("1")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ComposeScreen)


async def test_quit(app_factory: AppFactory) -> None:
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_submit_refuses_a_script_that_does_not_exist(app_factory: AppFactory) -> None:
    """F1: the fixture preset's script is not on this host: `s` says so and opens no dialog."""
    runner = demo_runner()
    app = app_factory(runner=runner)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ComposeScreen)
        assert any("does not exist on this host" in m and "(F1)" in m for m in notifications(pilot))
        assert not [a for a in runner.argvs() if a[:2] == ("sbatch", "--parsable")]


async def test_the_preview_shows_the_job_first_and_f_shows_ntuis_lines(app_factory: AppFactory) -> None:
    """The preview folds ntui's machinery into marked lines (the journal: one line, not 87); the job's directives
    and launch line are on the first screen; ``f`` shows the whole script and folds it again."""
    from ntui.core.jobfiles.machinery import MARK, fold_machinery

    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = compose(pilot)
        script = screen.preview.script
        assert script == cli_render("demo-torchrun", ())
        shown = screen.preview.text
        assert shown == fold_machinery(script).text and len(shown.splitlines()) < len(script.splitlines()) - 50
        rows = screen.preview.scrollable_content_region.height  # the lines the first screen of the preview shows
        first_screen = shown.splitlines()[:rows]
        assert screen.preview.scroll_offset.y == 0 and rows < len(shown.splitlines())
        assert any(ln.startswith("#SBATCH --nodes=") for ln in first_screen)
        assert any(ln.startswith(MARK + "The job's event journal") for ln in first_screen)
        assert any(ln.startswith("srun ") for ln in first_screen), (rows, shown)  # the launch line
        screen.preview.focus()
        await pilot.press("f")
        assert screen.preview.text == script
        await pilot.press("f")
        assert screen.preview.text == shown


async def test_a_script_imported_from_the_palette_opens_as_a_new_user_preset(app_factory: AppFactory) -> None:
    """The palette's "Import a script …": the script's path, then its preset saved among the user's presets under
    a new name (imported again: another one, the first neither replaced nor hidden) and open in the form."""
    from pathlib import Path

    from ntui.core.paths import user_presets_dir

    script = Path(__file__).resolve().parents[1] / "data" / "scripts" / "perlmutter-torchrun.sh"
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = compose(pilot)

        async def import_(path: Path) -> None:
            screen.action_import_script()
            await pilot.pause()
            pilot.app.screen.query_one("#import-path", Input).value = str(path)
            await pilot.press("enter")
            await settle(pilot)

        await import_(script)
        first = user_presets_dir() / "perlmutter-torchrun.yaml"
        assert first.read_text().startswith(f"# Imported by ntui from {script}.")
        assert screen.preset_name == "perlmutter-torchrun"
        assert "#SBATCH --account=m4242_g" in screen.preview.script
        assert any(str(first) in n and "1 fix(es)" in n for n in notifications(pilot)), notifications(pilot)
        before = first.read_text()
        await import_(script)
        assert first.read_text() == before
        assert screen.preset_name == "perlmutter-torchrun-imported"
        assert (user_presets_dir() / "perlmutter-torchrun-imported.yaml").exists()
        await import_(script.with_name("no-launch.sh"))
        assert any("no launch line" in n for n in notifications(pilot))
        assert screen.preset_name == "perlmutter-torchrun-imported"  # the form is kept


async def test_site_values_are_marked_and_a_locked_one_refuses_a_change(
        app_factory: AppFactory, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A site layer (core/compose/site.py): its defaults fill the form, marked as the site's (the tooltip names the
    file and line), and changing a key it locks is refused under the field, as any rule would be."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "site.yaml").write_text("name: Example Centre\ndefaults:\n  sbatch:\n    account: m1234\n"
                                    "    constraint: gpu\nlocked: [sbatch.constraint]\n")
    monkeypatch.setenv("NTUI_SITE_DIR", str(site))
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        form = compose(pilot).form
        assert form.text_of("sbatch.account") == "m1234"
        assert str(form.rows["sbatch.account"].label.content).endswith("Account ·site")
        assert str(form.rows["sbatch.constraint"].label.content).endswith("·site·lock")
        assert f"{site / 'site.yaml'}:4" in str(form.control("sbatch.account").tooltip)
        assert "sbatch.constraint" not in form.field_messages()  # the preset writes the site's value
        await type_into(pilot, "sbatch.constraint", "cpu")
        await settle(pilot)
        assert "locked by the site" in form.field_messages()["sbatch.constraint"]
        assert compose(pilot).rendered is not None and compose(pilot).rendered.spec is None
