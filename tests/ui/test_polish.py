"""Issue 15 ([polish]): keys that work the same everywhere, status that tells the truth, no edit lost.

Each test here failed on the code before the issue's change (the docstrings say what it did then)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from textual.color import Color
from textual.dom import DOMNode
from textual.widgets import Checkbox, Input, Select, TabbedContent
from textual.widgets._tabbed_content import ContentTabs

import ntui.ui.screens
import ntui.ui.widgets
from ntui.core.config import QueueSettings, Settings
from ntui.ui.screens.help import HelpScreen, own_bindings
from ntui.ui.screens.jobs import JobsScreen
from tests.support.notes import notified
from tests.support.screenshots_jobs import QUIET, demo_jobs_runner, jobs_app, settle_jobs
from tests.ui.conftest import AppFactory, settle

# no start/end notices in these scenes (a toast over the status line): tests/ui/test_waiting.py has them
HOUR = Settings(queue=QueueSettings(active_interval=3600, idle_interval=3600, max_backoff=3600), notify=QUIET.notify)


def jobs_screen(app: Any) -> JobsScreen:
    screen = app.screen
    assert isinstance(screen, JobsScreen)
    return screen


# ---------------------------------------------------------------- keys and focus


@pytest.mark.parametrize("focus", ["#jobs-table", "#lp-ranks", "#lp-log"])
async def test_view_keys_work_from_every_pane(focus: str) -> None:
    """Before: with the focus in the log pane, `d` and `g` did nothing (the focus moved to the pane's next
    widget, which re-activated the Logs tab)."""
    app = jobs_app(runner=demo_jobs_runner(), settings=HOUR)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        tabs = screen.query_one("#jobs-tabs", TabbedContent)
        for key, tab in (("d", "tab-details"), ("g", "tab-gpus"), ("d", "tab-details"), ("l", "tab-logs")):
            await pilot.press("l")
            await pilot.pause()
            screen.query_one(focus).focus()
            await pilot.pause()
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == tab, (focus, key)
        screen.query_one(focus).focus()
        await pilot.pause()
        before = screen.all_users
        await pilot.press("a")
        await settle_jobs(pilot)
        assert screen.all_users is not before


async def test_tab_bar_is_no_tab_stop() -> None:
    """Before: Tab from the queue landed on the invisible "Details GPUs Logs" bar, which swallowed Up, Down
    and Home."""
    app = jobs_app(runner=demo_jobs_runner(), settings=HOUR)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        assert not any(isinstance(w, ContentTabs) for w in screen.focus_chain)
        await pilot.press("tab")
        await pilot.pause()
        assert not isinstance(app.focused, ContentTabs)


async def test_slash_says_what_it_searches() -> None:
    """Before: `/` was "Filter" in the queue and "Search" in the log pane, the footer said neither what."""
    app = jobs_app(runner=demo_jobs_runner(), settings=HOUR)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        assert app.active_bindings["slash"].binding.description == "Filter jobs"
        await pilot.press("l")
        screen.query_one("#lp-log").focus()
        await pilot.pause()
        assert app.active_bindings["slash"].binding.description == "Search log"


def _ntui_classes_with_keys() -> list[type[DOMNode]]:
    """Every screen and widget class of ntui's UI that defines keys of its own."""
    for package in (ntui.ui.screens, ntui.ui.widgets):
        for mod in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{mod.name}")
    found: list[type[DOMNode]] = []
    todo: list[type[DOMNode]] = [DOMNode]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("ntui.ui.") and "BINDINGS" in vars(cls) and vars(cls)["BINDINGS"]:
            found.append(cls)
    return found


def _help_text(app: Any) -> tuple[str, list[str]]:
    screen = app.screen
    assert isinstance(screen, HelpScreen)
    return str(screen.query_one("#help-table").content), [title for title, _ in screen.sections]


async def test_help_lists_every_binding_of_every_screen_and_widget_current_view_first(
        app_factory: AppFactory) -> None:
    """Before: help omitted the log pane's keys (m, /, n, N, End, space) and, opened from the jobs view, started
    with the compose section."""
    classes = _ntui_classes_with_keys()
    assert {c.__name__ for c in classes} >= {"JobsScreen", "ComposeScreen", "LogPane", "VirtualTable",
                                             "ConfirmRequeueScreen", "PresetEditorScreen"}
    app = app_factory(settings=HOUR)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        text, titles = _help_text(app)
        assert titles[0] == "Compose view"
        await pilot.press("escape", "2")
        await settle_jobs(pilot)
        await pilot.press("l", "question_mark")
        await pilot.pause()
        text, titles = _help_text(app)
        assert titles[:3] == ["Jobs view", "Jobs view · Queue table", "Jobs view · Log pane"], titles
        assert titles.index("Compose view") > titles.index("Everywhere")
        for cls in classes:
            for b in own_bindings(cls):
                assert (b.id or b.description) in text, (cls.__name__, b)
        for b in app.BINDINGS:
            assert b.id in text  # type: ignore[union-attr]


async def test_help_fits_80x24(app_factory: AppFactory) -> None:
    """Before: at 80×24 the help dialog (96 wide) lost its right border."""
    app = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        dialog = app.screen.query_one("#help-dialog")
        assert dialog.region.right <= 80 and dialog.region.bottom <= 24
        table = app.screen.query_one("#help-table")
        assert table.virtual_size.width <= table.parent.content_region.width  # type: ignore[union-attr]


def _luminance(c: Color) -> float:
    def ch(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

    return 0.2126 * ch(c.r) + 0.7152 * ch(c.g) + 0.0722 * ch(c.b)


def _contrast(a: Color, b: Color) -> float:
    """WCAG contrast ratio of two opaque colours (1 = the same)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _look(w: Any) -> tuple[Color, Color]:
    """The background and the left border colour as drawn (tints and alpha applied over the parent)."""
    base, bg = w.background_colors
    border = w.styles.border_left[1]
    return bg, base + border if border.a < 1 else border


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_focus_is_unmistakable_on_every_form_widget(app_factory: AppFactory, theme: str) -> None:
    """Before: focus on a Select or a Checkbox was a one-step background change (contrast ~1.1)."""
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        app.theme = theme
        await settle(pilot)
        for kind in (Select, Checkbox, Input):
            widgets = list(app.screen.query(kind))
            assert len(widgets) >= 2, kind
            focused, other = widgets[0], widgets[1]
            focused.focus()
            await pilot.pause()
            target = focused.query_one("SelectCurrent") if kind is Select else focused
            peer = other.query_one("SelectCurrent") if kind is Select else other
            (bg1, b1), (bg2, b2) = _look(target), _look(peer)
            bg, border = _contrast(bg1, bg2), _contrast(b1, b2)
            print(theme, kind.__name__, round(bg, 2), round(border, 2))
            assert max(bg, border) >= 1.5, (theme, kind.__name__, bg, border)


# ---------------------------------------------------------------- status that tells the truth


async def test_missing_slurm_conf_is_reported_in_slurms_words_and_no_empty_queue_is_claimed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: "controller unreachable … squeue did not answer within 15 s", and the empty table said "no jobs
    in the queue" though squeue never answered."""
    from ntui.core.slurm.runner import SubprocessRunner
    from ntui.ui.widgets.queue_table import QueueTable

    monkeypatch.setenv("SLURM_CONF", "/nonexistent")
    app = jobs_app(runner=SubprocessRunner(), settings=HOUR)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        screen._tick()
        banner = str(screen.query_one("#jobs-banner").content)  # type: ignore[attr-defined]
        assert "cannot stat file /nonexistent" in banner
        assert "unreachable" not in banner and "did not answer" not in banner
        table = screen.query_one(QueueTable)
        assert "no jobs" not in table.empty_text and "cannot stat file" in table.empty_text
        status = str(screen.query_one("#jobs-status").content)  # type: ignore[attr-defined]
        assert "none queued" not in status and "no data yet" in status


def _status(screen: Any) -> str:
    return str(screen.query_one("#status").content)


@pytest.mark.usefixtures("fixture_scripts_exist")
async def test_status_lines_go_when_the_state_they_describe_changes(app_factory: AppFactory) -> None:
    """Before: "✓ test-only: would start…" stayed after the form became invalid, "✗ cannot check…" after
    ctrl+r, "✓ submitted job …" after switching presets."""
    from tests.support.demo import type_into

    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("escape", "t")
        await settle(pilot)
        assert "✓ test-only" in _status(screen)
        await type_into(pilot, "sbatch.nodes", "0")
        await settle(pilot)
        assert "test-only" not in _status(screen)
        await pilot.press("escape", "t")
        await settle(pilot)
        assert "✗ cannot check" in _status(screen)
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("d")  # the form has edits: ctrl+r asks; discard them
        await settle(pilot)
        assert "cannot check" not in _status(screen) and "✓ valid" in _status(screen)
        await pilot.press("s")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert "✓ submitted job" in _status(screen)
        others = [p for p in screen.picker.presets if p.name != screen.preset_name]  # type: ignore[attr-defined]
        screen.open_preset(others[0].name)  # type: ignore[attr-defined]
        await settle(pilot)
        assert "submitted job" not in _status(screen)


async def test_the_form_counts_errors_like_the_cli_and_runs_the_cluster_checks_live(app_factory: AppFactory) -> None:
    """Before: "Cannot check: 2 error(s)" where the form and the CLI count 1 (the field's own check and the
    preset's validation were both counted); and "✓ valid" for more nodes than the partition has."""
    import contextlib
    import io

    from ntui.cli import run as cli_run
    from tests.support.demo import type_into

    app = app_factory()
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        await type_into(pilot, "sbatch.nodes", "two")
        await settle(pilot)
        await pilot.press("escape", "t")
        await settle(pilot)
        notes = [n.message for n in notified(app)]
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            cli_run(["check", "demo-torchrun", "--set", "sbatch.nodes=two"])
        cli_count = next(line for line in err.getvalue().splitlines() if line.endswith("error(s)"))
        assert cli_count == "1 error(s)"
        assert any(n.startswith("Cannot check: 1 error(s)") for n in notes), notes
        assert "✗ 1 error(s)" in _status(screen)
        await type_into(pilot, "sbatch.nodes", "100000")
        await settle(pilot)
        assert "✓ valid" not in _status(screen)
        assert "this cluster would not run it: sbatch.nodes: 100000 nodes" in _status(screen)


# ---------------------------------------------------------------- no edit lost


async def _edited(pilot: Any) -> Any:
    from tests.support.demo import type_into

    await settle(pilot)
    await type_into(pilot, "sbatch.nodes", "1")
    await settle(pilot)
    screen = pilot.app.screen
    assert screen.form.overrides == ("sbatch.nodes=1",)
    return screen


async def test_what_replaces_the_form_asks_first(app_factory: AppFactory) -> None:
    """Before: another preset, the palette's "load", ctrl+r and q discarded the form's edits without asking."""
    from ntui.ui.screens.dialogs import UnsavedEditsScreen

    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _edited(pilot)
        for trigger in ("load", "ctrl+r", "q"):
            if trigger == "load":
                screen.load_preset("demo-local")  # the picker's choice and the palette's "Load preset: X"
            else:
                await pilot.press("escape", trigger)
            await pilot.pause()
            assert isinstance(app.screen, UnsavedEditsScreen), trigger
            await pilot.press("escape")  # cancel: nothing happens
            await settle(pilot)
            assert app.screen is screen and app.is_running
            assert screen.preset_name == "demo-torchrun" and screen.form.overrides == ("sbatch.nodes=1",)
        screen.load_preset("demo-local")
        await pilot.pause()
        await pilot.press("d")  # discard
        await settle(pilot)
        assert screen.preset_name == "demo-local" and screen.form.overrides == ()


async def test_save_as_from_the_question_saves_then_goes_on(app_factory: AppFactory, ui_presets: Any) -> None:
    from textual.widgets import Input

    from ntui.ui.screens.dialogs import SaveAsScreen

    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _edited(pilot)
        screen.load_preset("demo-local")
        await pilot.pause()
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, SaveAsScreen)
        app.screen.query_one("#save-as-name", Input).value = "torch-one-node"
        await pilot.press("enter")
        await settle(pilot)
        assert (ui_presets / "torch-one-node.yaml").exists()
        assert "nodes: 1" in (ui_presets / "torch-one-node.yaml").read_text()
        assert screen.preset_name == "demo-local"


async def test_editor_save_as_rewrites_name_and_relative_script(app_factory: AppFactory, ui_presets: Any,
                                                                tmp_path: Any) -> None:
    """Before: `e` on a shipped preset, ctrl+s → "my-x" kept `name: x` and `../examples/train.py`, which then
    resolved against the user's directory."""
    from ntui.core.compose.presets import load_preset
    from ntui.core.compose.spec import validate
    from ntui.ui.screens.dialogs import SaveAsScreen
    from ntui.ui.screens.editor import PresetEditorScreen

    (tmp_path / "examples").mkdir()
    train = tmp_path / "examples" / "train.py"
    train.write_text("print('hi')\n")
    (tmp_path / "presets").mkdir()
    shipped = tmp_path / "presets" / "x.yaml"
    shipped.write_text("# a shipped preset\nname: x\nlauncher: {type: srun}\nscript: ../examples/train.py\n"
                       "sbatch: {nodes: 1, time: '00:10:00'}\n")
    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        app.push_screen(PresetEditorScreen("x", shipped, "shipped"))
        await settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SaveAsScreen)
        await pilot.press("enter")  # "my-x"
        await settle(pilot)
    text = (ui_presets / "my-x.yaml").read_text()
    assert text.startswith("# a shipped preset\n") and 'name: "my-x"' in text
    assert f'script: "{train}"' in text
    spec, problems = validate(load_preset("my-x"))
    assert spec is not None and spec.name == "my-x" and spec.script == str(train), problems


def test_a_yaml_error_is_reported_on_the_line_at_fault() -> None:
    """Before: an unclosed bracket on line 2 was reported on line 3 (where the parser noticed)."""
    from ntui.core.compose.yamlsrc import YamlProblem, load_yaml_with_lines

    for text in ("a: 1\nb: [1, 2\nc: 3\n", "a: 1\nfoo\nc: 3\n"):
        with pytest.raises(YamlProblem) as got:
            load_yaml_with_lines(text, "x.yaml")
        assert got.value.problem.source.line == 2, text


# ---------------------------------------------------------------- layout


async def test_queue_takes_its_rows_and_the_lower_pane_the_rest_at_80x24_and_z_zooms() -> None:
    """Before: at 80×24 the log pane kept 5 lines of text (queue box 10 rows, fixed 1fr split); no zoom key."""
    app = jobs_app(runner=demo_jobs_runner(), settings=HOUR)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        queue = screen.query_one("#jobs-queue")
        assert 6 <= queue.region.height <= 24 * 0.4
        await pilot.press("l")
        await pilot.pause()
        log = screen.query_one("#lp-log")
        assert log.region.height >= 7, log.region
        # `l` moved the focus into the log (issue #29: before, it stayed in the queue and `z` zoomed the queue)
        assert screen.focused is not None and screen.query_one("#jobs-tabs") in screen.focused.ancestors
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.query_one("#jobs-tabs") and log.region.height >= 14
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        screen.table.focus()
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is queue and queue.region.height >= 22


async def test_one_header_convention_and_placeholders_that_say_the_default(app_factory: AppFactory) -> None:
    """Before: the jobs view had a header bar and the compose view none; "Partition (not set) debug …" and
    "Job name (not set)" though the script uses the preset's name."""
    from textual.widgets import Header

    app = app_factory()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        form = screen.form  # type: ignore[attr-defined]
        assert form.control("sbatch.partition").placeholder.startswith("default: debug")
        assert form.control("sbatch.job-name").placeholder.startswith("default: demo-torchrun")
        assert not screen.query(Header)
        await pilot.press("escape", "2")
        await settle_jobs(pilot)
        assert isinstance(app.screen, JobsScreen) and not app.screen.query(Header)


# ---------------------------------------------------------------- snapshots (120×36 and 80×24)


def _jobs_snapshot_app() -> Any:
    from tests.support.fakes import capture
    from tests.ui.test_jobs_view import MIX, mix_without, runner

    r = runner([MIX, mix_without("42")], scontrol_show_job=capture("scontrol_show_job_running_2node_gpu"),
               sacct=capture("sacct_no_accounting"))
    r.add(("scontrol", "show", "job", "-d", "42"), capture("scontrol_show_job_unknown"))
    return jobs_app(runner=r, settings=HOUR, user="alice")


async def _jobs_ready(pilot: Any) -> None:
    await settle_jobs(pilot)
    screen = jobs_screen(pilot.app)
    screen.refresh_now()
    await settle_jobs(pilot)
    screen.table.move_cursor(key="34")
    await settle_jobs(pilot)
    screen._tick()
    await pilot.pause()


def test_jobs_view_snapshot_80x24(snap_compare: Any) -> None:
    """The queue sized to its rows (at most ~40 %), the details below with the rest, no header bar."""
    assert snap_compare(_jobs_snapshot_app(), terminal_size=(80, 24), run_before=_jobs_ready)


def test_help_snapshot_80x24_from_the_jobs_view(snap_compare: Any) -> None:
    """The jobs view's keys first (view, queue, log pane), the whole border on screen."""

    async def run_before(pilot: Any) -> None:
        await _jobs_ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(_jobs_snapshot_app(), terminal_size=(80, 24), run_before=run_before)


def test_unsaved_edits_question_snapshot(snap_compare: Any, app_factory: AppFactory) -> None:
    async def run_before(pilot: Any) -> None:
        screen = await _edited(pilot)
        screen.load_preset("demo-local")
        await pilot.pause()

    assert snap_compare(app_factory(), terminal_size=(80, 24), run_before=run_before)


async def test_elapsed_ticks_between_polls() -> None:
    """Before: Elapsed stayed at squeue's value until the next poll."""
    from datetime import timedelta

    from tests.support.demo import FROZEN_NOW
    from tests.ui.test_jobs_view import runner

    now = [FROZEN_NOW]
    app = jobs_app(runner=runner(), settings=HOUR, clock=lambda: now[0])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        assert screen.table.get_cell("34", "elapsed") == "0:12"  # RUNNING, as squeue said
        pending = screen.table.get_cell("38", "elapsed")
        now[0] = FROZEN_NOW + timedelta(seconds=95)
        screen._tick()
        await pilot.pause()
        assert screen.table.get_cell("34", "elapsed") == "1:47"
        assert screen.table.get_cell("38", "elapsed") == pending  # a pending job's clock does not run


def test_format_elapsed_is_squeues_style() -> None:
    from ntui.core.jobs.queue import format_elapsed

    assert [format_elapsed(s) for s in (0, 95, 3600, 90061)] == ["0:00", "1:35", "1:00:00", "1-01:01:01"]


async def test_a_job_submitted_from_the_cli_that_ended_between_polls_is_listed() -> None:
    """Before: a job submitted from the CLI that started and failed between two polls never appeared (the
    status said "N ended" but listed nothing): ntui's own jobs now come from its history too."""
    import time as time_mod

    from ntui.core.jobs.queue import ENDED
    from ntui.core.records.history import HistoryEntry
    from tests.ui.test_jobs_view import runner

    entry = HistoryEntry(token="t", job_id="77", cluster=None, preset="local-srun", preset_path=None, overrides=(),
                         job_name="quick-fail", launcher="srun", nodes=2, world_size=4, log_dir="/tmp/x",
                         log_stem="quick-fail", script="", script_path=None, created_at=time_mod.time() + 1,
                         submitted_at=time_mod.time() + 1, status="submitted")

    class CliHistory:
        def get(self, job_id: str) -> HistoryEntry | None:
            return entry if job_id == "77" else None

        def entries(self, limit: int | None = None) -> list[HistoryEntry]:
            return [entry]

        def close(self) -> None:
            pass

    app = jobs_app(runner=runner(), settings=HOUR, history_factory=CliHistory)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle_jobs(pilot)
        screen = jobs_screen(app)
        for _ in range(2):
            screen.refresh_now()
            await settle_jobs(pilot)
        assert "77" in screen.table and screen.table.row_tag("77") == ENDED
        assert screen.table.get_cell("77", "name") == "quick-fail"
