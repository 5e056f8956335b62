"""The compose view: preset picker, job form and script preview; check (``t``) and submit (``s``).

One responsibility: the compose view's screen (layout, keys, and routing the core's answers to its widgets).

Data flow (every core call runs in a thread worker that posts a typed message):

* ``list_presets`` -> :class:`PresetsListed` -> picker; ``load_preset(name)`` -> :class:`PresetOpened`
  -> the form is built from the preset;
* each edit -> ``JobForm.Changed`` -> debounce (``DEBOUNCE_S``) -> ``load_preset(name, overrides)``,
  ``validate``, ``render`` -> :class:`PreviewRendered` -> preview, inline problems, status. The preview
  is therefore byte-identical to ``ntui render NAME --set O1 --set O2 ...``;
* cluster choices (sinfo, sacctmgr) -> :class:`ClusterInfo`; ``check_job`` -> :class:`CheckFinished`;
  ``submit_job`` -> :class:`JobSubmitted`. Before either, the job is checked against the partitions' limits
  from that sinfo (:func:`~ntui.core.compose.sitecheck.check_against_cluster`: unknown partition, too many nodes, a
  time limit Slurm would accept and never run); errors stop it there, with the reason. Failures go
  through the one worker-error handler (:class:`~ntui.ui.screens.base.NtuiScreen`), and ``worker_failed``
  shows them in the status panel.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Footer, Static
from textual.worker import Worker

from ntui.core.errors import NO_SLURM
from ntui.ui.messages import (
    CheckFinished,
    ClusterInfo,
    JobSubmitted,
    OverridesLoaded,
    PresetOpened,
    PresetSaved,
    PresetsListed,
    PreviewRendered,
    ScriptImported,
)
from ntui.ui.screens.base import NtuiScreen
from ntui.ui.widgets.job_form import JobForm
from ntui.ui.widgets.preset_picker import PresetPicker

if TYPE_CHECKING:
    from ntui.core.compose.presets import PresetInfo
    from ntui.core.compose.yamlsrc import LoadedPreset
    from ntui.core.problems import Problem
    from ntui.ui.widgets.script_preview import ScriptPreview

# The core (presets, YAML, validation, rendering, Slurm) is imported inside the workers: the first frame
# needs none of it (start-up time, see bench/startup.py).

DEBOUNCE_S = 0.15


def render_command(preset: str, overrides: tuple[str, ...]) -> str:
    """The shell command whose output the preview shows."""
    words = ["ntui", "render", preset]
    for o in overrides:
        words += ["--set", o]
    return shlex.join(words)



def sweep_listing(spec: Any) -> str:
    """A sweep's manifest under its script in the preview (comments: the script itself is what is submitted):
    where the submission writes it and task index -> values, as the preset wrote them."""
    from ntui.core.jobfiles.manifest import listing

    sweep = spec.sweep
    path = sweep.manifest_path(spec.log_dir, spec.log_stem)
    lines = [f"# ---- the sweep's manifest, written next to the script at submission: {path}",
             f"# ---- task index -> values ({sweep.size} task(s)); task i runs as array task i", *(
                 f"#   {line}" for line in listing(sweep.manifest, limit=200))]
    return "\n" + "\n".join(lines) + "\n"

class ComposeScreen(NtuiScreen):
    """Compose a job from a preset. Side by side when wide, stacked when narrow (breakpoint classes)."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    BINDINGS = [
        Binding("s", "submit", "Submit", id="ntui.submit", tooltip="Submit the job (shows the script to confirm)"),
        Binding("t", "check", "Test-only", id="ntui.check", tooltip="sbatch --test-only: Slurm's start estimate"),
        Binding("w", "what_if", "What if", id="ntui.what_if", show=False,
                tooltip="What would start sooner: a few shapes (fewer nodes, a shorter time, another QOS or "
                        "partition) asked of sbatch --test-only; Enter applies one to the form"),
        Binding("e", "edit_preset", "Edit preset", id="ntui.edit", tooltip="Edit the preset's YAML"),
        Binding("n", "save_as", "Save as", id="ntui.save_as", tooltip="New preset from the current form"),
        Binding("ctrl+r", "reset_form", "Reset form", id="ntui.reset", show=False),
        Binding("c", "next_cluster", "Cluster", id="ntui.cluster",
                tooltip="Where the job goes: the next cluster of the settings (shown with more than one)"),
        Binding("escape", "leave_field", "Leave field", id="ntui.leave_field", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        # The breakpoint class for the current width up front, so the first resize restyles nothing. Not
        # restyled now (update=False): the screen is styled when it is mounted, and a restyle here would parse
        # the whole stylesheet once more before the first frame.
        try:
            width = self.app.size.width
        except Exception:  # constructed outside a running app
            width = 120
        self.add_class(next(c for w, c in reversed(self.HORIZONTAL_BREAKPOINTS) if width >= w), update=False)
        self.preset_name: str | None = None
        self.preset_info: PresetInfo | None = None
        self.base: LoadedPreset | None = None
        self.generation = 0
        self.rendered: PreviewRendered | None = None
        self.cluster: ClusterInfo | None = None
        self.destination: str | None = None  # the cluster reached over ssh the job goes to (None: Slurm here)
        self.destinations: tuple[str | None, ...] = ()  # where it may go, once the settings are read
        self._lines: dict[str, tuple[object, Content]] = {}
        self.unplaced: list[Problem] = []
        self._timer: Timer | None = None
        self._pending_action: str | None = None
        self._busy: set[str] = set()
        self._requested: str | None = None  # the preset asked for last (open_preset), before it is loaded
        self._then_overrides: tuple[str, tuple[str, ...]] | None = None  # (preset, overrides) to fill in
        self.resubmit_of: str | None = None  # the job this form resubmits (the submission records it)
        self._after_save: Callable[[], object] | None = None

    # ------------------------------------------------------------ status lines tied to the state they describe

    def _state_key(self) -> object:
        """What the form holds now: a status line written for one state goes when it changes (another
        preset, ctrl+r, an edit that makes the form invalid)."""
        r = self.rendered
        return (self.preset_name, r.overrides if r is not None else None, self.form.local_errors
                if self.is_mounted else ())

    def _line(self, kind: str) -> Content | None:
        got = self._lines.get(kind)
        if got is None:
            return None
        if got[0] != self._state_key():
            del self._lines[kind]
            return None
        return got[1]

    def _set_line(self, kind: str, line: Content | None) -> None:
        if line is None:
            self._lines.pop(kind, None)
        else:
            self._lines[kind] = (self._state_key(), line)

    @property
    def check_line(self) -> Content | None:
        """The last ``t`` (sbatch --test-only) result, while the form is as it was checked."""
        return self._line("check")

    @check_line.setter
    def check_line(self, line: Content | None) -> None:
        self._set_line("check", line)

    @property
    def submit_line(self) -> Content | None:
        """The last submit (or refusal), while the form is as it was then."""
        return self._line("submit")

    @submit_line.setter
    def submit_line(self, line: Content | None) -> None:
        self._set_line("submit", line)

    def form_errors(self) -> list[str]:
        """The form's errors, one per field (a field's own check and the preset's validation may both flag
        it): the status line, ``s`` / ``t`` and the CLI count the same."""
        found: dict[str, str] = {}
        for key, message in self.form.local_errors:
            found.setdefault(key, f"{key}: {message}")
        problems = [*(self.rendered.problems if self.rendered else ()), *self.unplaced]
        for p in problems:
            if p.is_error:
                found.setdefault(p.field or p.message, f"{p.field}: {p.message}" if p.field else p.message)
        return list(found.values())

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        # No Header: the rows go to the form (80x24), and the first frame stays light.
        with Container(id="compose-body"):
            with Vertical(id="left-pane"):
                picker = PresetPicker(id="picker")
                picker.border_title = "Presets"
                yield picker
                form = JobForm(id="form")
                form.border_title = "Job"
                yield form
            with Vertical(id="right-pane"):
                box = Vertical(id="preview-box")
                box.border_title = "sbatch script"
                with box:
                    # The editor (and its grammar) is mounted right after the first frame.
                    yield Static("", id="preview-placeholder")
                yield Static("", id="status")
        # The Footer (the largest single item of the first frame: it builds a widget per binding) is mounted
        # right after the first frame; until then one line says where the keys are.
        yield Static("loading…  ? keys  ^p palette  q quit", id="footer-placeholder", markup=False)

    @property
    def picker(self) -> PresetPicker:
        return self.query_one("#picker", PresetPicker)

    @property
    def form(self) -> JobForm:
        return self.query_one("#form", JobForm)

    @property
    def preview(self) -> ScriptPreview:
        from ntui.ui.widgets.script_preview import ScriptPreview

        return self.query_one("#preview", ScriptPreview)

    @property
    def preview_box(self) -> Vertical:
        return self.query_one("#preview-box", Vertical)

    def on_mount(self) -> None:
        self.picker.focus()
        self._update_status()
        # Paint the frame first; presets, the form and the cluster arrive right after.
        self.call_after_refresh(self._start)

    async def _start(self) -> None:
        from ntui.ui.widgets.script_preview import ScriptPreview

        box = self.preview_box
        await box.query("#preview-placeholder").remove()
        await box.mount(ScriptPreview.create(id="preview", lazy=True))
        await self.query("#footer-placeholder").remove()
        await self.mount(Footer())
        self.refresh_bindings()  # a Footer mounted late draws its keys on the next bindings update
        self._list_presets(self.ntui_app.initial_preset)
        self._load_cluster()

    # ------------------------------------------------------------ presets

    @work(thread=True, exclusive=True, exit_on_error=False, group="presets", description="list presets")
    def _list_presets(self, select: str | None) -> None:
        from ntui.core.compose.presets import list_presets

        self.post_message(PresetsListed(tuple(list_presets()), select))

    @on(PresetsListed)
    def _presets_listed(self, message: PresetsListed) -> None:
        names = [p.name for p in message.presets]
        wanted = message.select or self.preset_name
        if wanted not in names:
            wanted = next((p.name for p in message.presets if not p.problem), names[0] if names else None)
        self.picker.set_presets(message.presets, current=self.preset_name)
        if wanted is None:
            self.notify("No presets found.", severity="error")
            return
        if message.select or (self.preset_name is None and self._requested is None):
            self.open_preset(wanted)

    def open_preset(self, name: str, overrides: tuple[str, ...] = (), *, resubmit_of: str | None = None) -> None:
        """Load ``name`` (its form replaces the current one), then fill ``overrides`` into the form;
        ``resubmit_of``: the job this resubmits (ntui/ui/screens/resubmit.py)."""
        self._requested = name
        self._then_overrides = (name, tuple(overrides)) if overrides else None
        self.resubmit_of = resubmit_of
        self._open_preset(name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="open-preset", description="load preset")
    def _open_preset(self, name: str) -> None:
        from ntui.core.compose.presets import load_preset
        from ntui.core.problems import PresetError

        try:
            base = load_preset(name)
        except PresetError as exc:
            self.post_message(PresetOpened(name, None, tuple(exc.problems)))
            return
        self.post_message(PresetOpened(name, base, ()))

    @on(PresetOpened)
    async def _preset_opened(self, message: PresetOpened) -> None:
        from ntui.core.compose.presetfiles import problem_text

        self.preset_name = message.name
        self.preset_info = self.picker.info(message.name)
        self.base = message.base
        self.picker.mark_current(message.name)
        self._lines.clear()  # another preset, or the same one reset: nothing said about the old form holds
        self.form.border_title = f"Job · {message.name}"
        if message.base is None:
            self.rendered = None
            await self.form.show_unavailable(
                f"Preset {message.name} is broken:\n" + "\n".join(problem_text(p) for p in message.problems)
                + "\n\nPress e to fix it."
            )
            self.preview.load_text("")
            self.unplaced = list(message.problems)
            self._update_status()
            return
        await self.form.load(message.base)
        self.request_render(delay=0)
        then, self._then_overrides = self._then_overrides, None
        if then is not None and then[0] == message.name:
            self._load_overrides(message.name, then[1], tuple(self.form.specs))

    @work(thread=True, exclusive=True, exit_on_error=False, group="open-preset", description="load overrides")
    def _load_overrides(self, name: str, overrides: tuple[str, ...], keys: tuple[str, ...]) -> None:
        from ntui.core.compose.presets import load_preset
        from ntui.core.problems import PresetError
        from ntui.ui.widgets.form_model import form_texts

        try:
            loaded = load_preset(name, overrides)
        except PresetError as exc:
            self.post_message(OverridesLoaded(name, {}, overrides, str(exc)))
            return
        texts, unplaced = form_texts(loaded, keys, overrides)
        self.post_message(OverridesLoaded(name, texts, unplaced, None))

    def on_overrides_loaded(self, message: OverridesLoaded) -> None:
        """A job's overrides (resubmit) go into the form's fields."""
        if message.name != self.preset_name:
            return
        for key, text in message.texts.items():
            self.form.set_text(key, text)
        if message.error or message.unplaced:
            self.notify(message.error or "no form field for: " + ", ".join(message.unplaced),
                        title="Overrides not applied", severity="warning", timeout=12)

    @on(PresetPicker.Chosen)
    def _chosen(self, message: PresetPicker.Chosen) -> None:
        if message.info.name == self.preset_name and not self.form.modified_keys:
            self.form.focus_first()
            return
        self.load_preset(message.info.name)

    def load_preset(self, name: str) -> None:
        """Open ``name`` for the user (picker, palette): edits in the form are never dropped without asking."""
        self.guard_edits(f"Loading {name}", partial(self.open_preset, name))

    def guard_edits(self, what: str, then: Callable[[], object]) -> None:
        """Run ``then`` (which replaces the form) at once when the form has no edits; else ask: save as (then
        ``then`` once saved), discard, or cancel."""
        changes = self.form.overrides if self.base is not None else ()
        if not changes:
            then()
            return
        from ntui.ui.screens.dialogs import UnsavedEditsScreen

        def answered(answer: str | None) -> None:
            if answer == "discard":
                then()
            elif answer == "save":
                self._after_save = then
                self.action_save_as()

        self.app.push_screen(UnsavedEditsScreen(self.preset_name or "the preset", changes, what), answered)

    # ------------------------------------------------------------ preview

    @on(JobForm.Changed)
    def _form_changed(self, message: JobForm.Changed) -> None:
        self.request_render()

    def request_render(self, delay: float = DEBOUNCE_S) -> None:
        """Debounced: only the last of a burst of edits is rendered (stale results are dropped)."""
        self.generation += 1
        if self._timer is not None:
            self._timer.stop()
        if delay <= 0:
            self._timer = None
            self._start_render()
        else:
            self._timer = self.set_timer(delay, self._start_render)

    def _start_render(self) -> None:
        self._timer = None
        if self.preset_name is not None and self.base is not None:
            self._render_preview(self.generation, self.preset_name, self.form.overrides)

    @work(thread=True, exclusive=True, exit_on_error=False, group="preview", description="render preview")
    def _render_preview(self, generation: int, name: str, overrides: tuple[str, ...]) -> None:
        from ntui.core.compose.presets import load_preset
        from ntui.core.compose.render import render
        from ntui.core.compose.spec import validate
        from ntui.core.problems import PresetError

        try:
            loaded = load_preset(name, overrides)
        except PresetError as exc:
            self.post_message(PreviewRendered(generation, name, overrides, None, None, None, tuple(exc.problems)))
            return
        spec, problems = validate(loaded)
        script = render(spec) if spec is not None else None
        self.post_message(PreviewRendered(generation, name, overrides, loaded, spec, script, tuple(problems)))

    @on(PreviewRendered)
    async def _rendered(self, message: PreviewRendered) -> None:
        if message.generation != self.generation or message.preset != self.preset_name:
            return  # a newer edit is on its way
        self.rendered = message
        self.unplaced = self.form.show_problems(message.problems)
        sweep = message.spec.sweep if message.spec is not None else None
        if message.script is not None:
            self.preview.show_script(message.script + sweep_listing(message.spec) if sweep else message.script)
        else:
            self.preview.mark_stale()
        self.preview_box.border_title = (
            "sbatch script" if message.script is None or sweep is None else
            f"sbatch script · sweep: {sweep.size} task(s) ({' x '.join(sweep.names)}, {sweep.kind})"
            + (f", {sweep.parallel} at once" if sweep.parallel else "") + " · its manifest below"
        ) if message.script is not None else "sbatch script · not renderable"
        self._update_status()
        action, self._pending_action = self._pending_action, None
        if action:
            await self.run_action(action)

    @property
    def up_to_date(self) -> bool:
        return self._timer is None and self.rendered is not None and self.rendered.generation == self.generation

    # ------------------------------------------------------------ cluster choices

    @work(thread=True, exclusive=True, exit_on_error=False, group="cluster", description="cluster choices")
    def _load_cluster(self) -> None:
        from ntui.core.compose.sitecheck import partition_limits
        from ntui.core.slurm.runner import SlurmError, SlurmNotInstalled
        from ntui.core.slurm.sacctmgr import user_associations
        from ntui.core.slurm.sinfo import sinfo_partitions

        app = self.ntui_app
        destinations: tuple[str | None, ...] = (*((None,) if app.local_slurm else ()), *app.shown_clusters())
        destination = self.destination if self.destination in destinations else (destinations or (None,))[0]
        runner = app.runner if destination is None else app.cluster_runner(destination)
        notes: list[str] = []
        try:
            parts = sinfo_partitions(runner)
        except SlurmNotInstalled:
            self.post_message(ClusterInfo(False, notes=(NO_SLURM,), destination=destination,
                                          destinations=destinations))
            return
        except SlurmError as exc:
            parts = ()
            notes.append(f"partitions unavailable ({exc}); free text")
        names = tuple(dict.fromkeys(p.name for p in parts))
        default = next((p.name for p in parts if p.default), None)
        assoc = user_associations(runner)
        if not assoc.available:
            notes.append(f"accounts/QOS unavailable ({assoc.error or 'sacctmgr failed'}); free text")
        self.post_message(ClusterInfo(True, names, default, assoc.accounts, assoc.qos, tuple(notes),
                                      partition_limits(parts), destination, destinations))

    @on(ClusterInfo)
    def _cluster_info(self, message: ClusterInfo) -> None:
        self.cluster = message
        self.destination, self.destinations = message.destination, message.destinations
        self.refresh_bindings()
        self.form.set_choices({"partition": message.partitions, "account": message.accounts, "qos": message.qos},
                              {"partition": message.default_partition} if message.default_partition else None)
        self._update_status()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # one place to submit to: no key (False hides it; None would show it disabled)
        return not (action == "next_cluster" and len(self.destinations) < 2)

    def action_next_cluster(self) -> None:
        """``c``: the job goes to the next cluster (its partitions, accounts and QOS are asked of it)."""
        if len(self.destinations) < 2:
            return
        i = self.destinations.index(self.destination) if self.destination in self.destinations else -1
        self.destination = self.destinations[(i + 1) % len(self.destinations)]
        self.cluster = None  # the choices of the cluster chosen, as soon as it answers
        self.check_line = None
        self._update_status()
        self._load_cluster()

    def destination_name(self, destination: str | None) -> str:
        return destination if destination is not None else self.ntui_app.local_cluster_name()

    @property
    def slurm_missing(self) -> bool:
        return self.cluster is not None and not self.cluster.slurm_installed

    # ------------------------------------------------------------ check and submit

    def _ready(self, action: str, verb: str, *, slurm: bool = False) -> bool:
        """True when the current form renders without error; otherwise says why (or waits for the render).
        ``slurm`` (check and submit): also needs the Slurm client, and a job the cluster's partitions would run
        (saving a preset needs neither)."""
        if self.base is None or self.preset_name is None:
            self.notify(f"Cannot {verb}: no valid preset loaded.", severity="error")
            return False
        if not self.up_to_date:
            self._pending_action = action
            self.request_render(delay=0)
            return False
        assert self.rendered is not None
        errors = self.form_errors()
        if errors or self.rendered.spec is None:
            first = errors[0] if errors else "the preset does not validate"
            self.notify(f"Cannot {verb}: {len(errors)} error(s) in the form. {first}", title="Fix the form first",
                        severity="error")
            line = Content.assemble((f"✗ cannot {verb}: ", "bold $text-error"), (first, "$text-error"))
            if action == "check":
                self.check_line = line
            else:
                self.submit_line = line
            self._update_status()
            return False
        if not slurm:
            return True
        if self.slurm_missing:
            self.notify(NO_SLURM, severity="error")
            line = Content.assemble((f"✗ cannot {verb}: ", "bold $text-error"), (NO_SLURM, "$text-error"))
            if action == "check":
                self.check_line = line
            else:
                self.submit_line = line
            self._update_status()
            return False
        site_errors = [p for p in self.site_problems() if p.is_error]
        if site_errors:
            worst = site_errors[0]
            text = f"{worst.field}: {worst.message}" if worst.field else worst.message
            more = f" (+{len(site_errors) - 1} more)" if len(site_errors) > 1 else ""
            self.notify(text + more, title="Not sent to Slurm: this cluster would not run it", severity="error",
                        timeout=12)
            line = Content.assemble((f"✗ not {'checked' if action == 'check' else 'submitted'}: ",
                                     "bold $text-error"), (text + more, "$text-error"))
            if action == "check":
                self.check_line = line
            else:
                self.submit_line = line
            self._update_status()
            return False
        return True

    def site_problems(self, partition: str | None = None) -> list[Problem]:
        """The rendered job against the cluster's partitions (none known: no problems)."""
        from ntui.core.compose.sitecheck import check_against_cluster

        r = self.rendered
        if r is None or r.spec is None or self.cluster is None:
            return []
        return check_against_cluster(r.spec, self.cluster.limits, partition=partition, loaded=r.loaded)

    def _remote_refused(self, what: str) -> bool:
        """What would start sooner asks sbatch --test-only of several shapes through the preset's files here:
        not over ssh yet; said, True."""
        if self.destination is None:
            return False
        self.notify(f"{what}: what would start sooner is not asked over ssh yet ({self.destination} is reached "
                    "over ssh; c chooses another cluster)", title="Not over ssh yet", severity="warning")
        return True

    def action_check(self) -> None:
        if "check" in self._busy or not self._ready("check", "check", slurm=True):
            return
        assert self.rendered is not None and self.rendered.spec is not None
        self._busy.add("check")
        self.check_line = Content.assemble(("… sbatch --test-only running", "$text-muted"))
        self._update_status()
        limits = self.cluster.limits if self.cluster is not None else ()
        self._check(self.rendered.preset, self.rendered.spec, self.rendered.loaded, limits, self.destination)

    @work(thread=True, exclusive=True, exit_on_error=False, group="slurm-check", description="sbatch --test-only")
    def _check(self, preset: str, spec: Any, loaded: Any, limits: Any, destination: str | None = None) -> None:
        from ntui.core.compose.sitecheck import check_test_only

        if destination is not None:  # the script on sbatch --test-only's standard input there
            from ntui.core.remotesubmit import test_only_there

            result, problems = test_only_there(spec, self.ntui_app.cluster_runner(destination), limits,
                                               loaded=loaded)
        else:
            result, problems = check_test_only(spec, self.ntui_app.runner, limits, loaded=loaded)
        self.post_message(CheckFinished(preset, result, tuple(problems)))

    @on(CheckFinished)
    def _checked(self, message: CheckFinished) -> None:
        self._busy.discard("check")
        r = message.result
        stamp = self.ntui_app.clock().strftime("%H:%M:%S")
        errors = [p for p in message.problems if p.is_error]
        for p in message.problems:
            if not p.is_error:
                self.notify(f"{p.field}: {p.message}", title="sbatch --test-only", severity="warning", timeout=12)
        if r.ok and errors:
            text = f"{errors[0].field}: {errors[0].message}"
            self.check_line = Content.assemble(
                (f"✗ test-only: Slurm would accept it in partition {r.partition}, but ", "bold $text-error"),
                (text, "$text-error"), (f"  ({stamp})", "$text-muted"),
            )
            self.notify(text, title="sbatch --test-only: it would never start", severity="error", timeout=12)
        elif r.ok:
            where = f" on {r.nodes}" if r.nodes else ""
            part = f" in {r.partition}" if r.partition else ""
            self.check_line = Content.assemble(
                ("✓ test-only: ", "bold $text-success"),
                (f"would start {r.start or '(no estimate)'}{where}{part}", ""),
                (f"  ({stamp})", "$text-muted"),
            )
            self.notify(f"Slurm would start it {r.start or ''}{where}".strip(), title="sbatch --test-only")
        else:
            self.check_line = Content.assemble(
                ("✗ test-only: Slurm says ", "bold $text-error"), (r.reason or "rejected", "$text-error"),
                (f"  ({stamp})", "$text-muted"),
            )
            self.notify(r.reason or "rejected", title="sbatch --test-only refused", severity="error")
        self._update_status()

    def action_what_if(self) -> None:
        """``w``: the what-if dialog on the form as it is now (ntui/ui/screens/whatif.py); the chosen shape's
        override goes into the form."""
        if self._remote_refused("w") or not self._ready("what_if", "ask what would start sooner", slurm=True):
            return
        from ntui.ui.screens.whatif import WhatIfScreen

        rendered = self.rendered
        assert rendered is not None and rendered.spec is not None
        cluster = self.cluster
        limits = cluster.limits if cluster is not None else ()
        qos = cluster.qos if cluster is not None else ()
        runner = self.ntui_app.runner
        preset, overrides, spec = rendered.preset, rendered.overrides, rendered.spec

        def plan() -> Any:
            from ntui.core.waiting.whatif import input_from_spec, plan_shapes, preset_tester

            shapes = plan_shapes(input_from_spec(spec), partitions=limits, qos_choices=qos)
            return shapes, preset_tester(runner, preset, overrides), f"preset {preset}"

        def chosen(shape: Any) -> None:
            if shape is not None:
                self.form.set_text(shape.key, shape.value)
                self.notify(f"{shape.key} = {shape.value} in the form", title="What if")

        self.app.push_screen(WhatIfScreen(preset, plan, apply="set it in the form", clock=self.ntui_app.clock),
                             chosen)

    def action_submit(self) -> None:
        if "submit" in self._busy or not self._ready("submit", "submit", slurm=True):
            return
        from ntui.ui.screens.confirm import ConfirmSubmitScreen

        rendered = self.rendered
        assert rendered is not None and rendered.spec is not None and rendered.script is not None
        assert rendered.loaded is not None
        from ntui.core.compose.rules import blocks_submit

        blocking = [p for p in rendered.problems if blocks_submit(p)]
        if blocking:  # e.g. a script that does not exist (F1)
            self.notify(str(blocking[0]), title="Not submitted", severity="error")
            return

        warnings = [p for p in self.site_problems() if not p.is_error]

        def confirmed(ok: bool | None) -> None:
            if ok:
                for p in warnings:
                    self.notify(f"{p.field}: {p.message}", title="Submitted anyway", severity="warning", timeout=12)
                self._busy.add("submit")
                self.submit_line = Content.assemble(("… submitting", "$text-muted"))
                self._update_status()
                if self.destination is not None:
                    self._submit_there(self.destination, rendered.preset, rendered.loaded, rendered.spec)
                else:
                    self._submit(rendered.preset, rendered.loaded, rendered.spec, self.resubmit_of)

        self.app.push_screen(
            ConfirmSubmitScreen(rendered.spec, rendered.script, rendered.preset, rendered.overrides,
                                destination=self.destination), confirmed
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="slurm-submit", description="sbatch")
    def _submit(self, preset: str, loaded: Any, spec: Any, resubmit_of: str | None = None) -> None:
        from ntui.core.compose.sitecheck import check_array_size, check_launcher
        from ntui.core.jobs.submission import submit_job

        refused = [p for p in check_array_size(spec, self.ntui_app.runner, loaded=loaded) if p.is_error]
        if refused:  # a sweep over the cluster's MaxArraySize (W7): one scontrol show config, cached
            raise ValueError(f"{refused[0].field}: {refused[0].message}")
        for warned in check_launcher(spec, loaded=loaded):  # E4: said, not refused (a module may provide it)
            self.app.call_from_thread(self.notify, warned.message, title="Launcher not found", severity="warning",
                                      timeout=20)
        history = self.ntui_app.open_history()
        try:
            job = submit_job(loaded, spec, self.ntui_app.runner, history, resubmit_of=resubmit_of)
        finally:
            if history is not None:
                history.close()
        self.post_message(JobSubmitted(preset, job))

    @work(thread=True, exclusive=True, exit_on_error=False, group="slurm-submit", description="sbatch over ssh")
    def _submit_there(self, cluster: str, preset: str, loaded: Any, spec: Any) -> None:
        """Submit to a cluster reached over ssh as ``ntui --cluster NAME submit`` does
        (:func:`ntui.core.remotesubmit.submit_to_cluster`: records in that cluster's history, a sweep's manifest
        written there before sbatch and its job file after, a lost answer looked for by the job's comment, never
        sent twice)."""
        from dataclasses import replace

        from ntui.core.remotesubmit import submit_to_cluster

        app = self.ntui_app
        got = submit_to_cluster(loaded, spec, app.cluster_runner(cluster), cluster,
                                lambda: app.cluster_files(cluster))
        for note in got.notes:
            self.app.call_from_thread(self.notify, note, title=f"Submitted to {cluster}", severity="warning",
                                      timeout=15)
        self.post_message(JobSubmitted(preset, replace(got.job, via=cluster)))

    @on(JobSubmitted)
    def _submitted(self, message: JobSubmitted) -> None:
        self._busy.discard("submit")
        job = message.job
        where = f" to {job.via}" if job.via else ""
        self.submit_line = Content.assemble(
            ("✓ submitted job ", "bold $text-success"), (job.job_id, "bold"), (where, "bold"),
            (f"  log {job.batch_log}" + (" there" if job.via else ""), "$text-muted"),
        )
        self.notify(f"Submitted job {job.job_id}{where} ({message.preset})", title="Submitted")
        for warning in job.warnings:
            self.notify(warning, severity="warning")
        self._update_status()
        # The message bubbles on to the app, which records it as ``last_submission`` for the jobs view.

    def worker_failed(self, worker: Worker[Any], message: str) -> None:
        from ntui.core.compose.presetfiles import PresetSaveRefused

        group = worker.group
        if group == "slurm-check":
            self._busy.discard("check")
            self.check_line = Content.assemble(("✗ test-only: ", "bold $text-error"), (message, "$text-error"))
        elif group == "slurm-submit":
            self._busy.discard("submit")
            self.submit_line = Content.assemble(("✗ not submitted: ", "bold $text-error"), (message, "$text-error"))
        if group == "save-preset":
            self._after_save = None  # not saved: what waited for it does not happen
        if group == "save-preset" and isinstance(worker.error, PresetSaveRefused):
            self.submit_line = Content.assemble(("✗ preset ", "bold $text-error"), (message, "$text-error"))
        self._update_status()

    # ------------------------------------------------------------ presets from the form, editing

    def action_save_as(self) -> None:
        if not self._ready("save_as", "save a preset from the form"):
            if self._pending_action != "save_as":  # refused (not just waiting for the render)
                self._after_save = None
            return
        from ntui.ui.screens.dialogs import SaveAsScreen

        rendered = self.rendered
        assert rendered is not None and rendered.loaded is not None and rendered.spec is not None
        source = rendered.preset

        spec = rendered.spec

        def chosen(name: str | None) -> None:
            if name:
                self._save_form_as(name, rendered.loaded, spec.script, source)
            else:  # cancelled: whatever waited for the save does not happen
                self._after_save = None

        self.app.push_screen(
            SaveAsScreen("New preset from the current form", f"{source}-custom",
                         "Saves the form's values (preset + changes) as a user preset."),
            chosen,
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="save-preset", description="save preset")
    def _save_form_as(self, name: str, loaded: Any, script: str, source: str) -> None:
        from ntui.core.compose.presetfiles import PresetSaveRefused, save_preset_text, user_preset_path
        from ntui.ui.widgets.form_model import preset_yaml

        draft = preset_yaml(loaded, name, script, source)
        target = user_preset_path(name)
        problems = save_preset_text(draft.text, target)
        if any(p.is_error for p in problems):
            raise PresetSaveRefused(target, problems)
        self.post_message(PresetSaved(name, str(target), tuple(draft.notes), draft.text))

    def action_import_script(self) -> None:
        """Ask for an sbatch script; import it into a user preset (a new name) and open that in the form."""
        from ntui.ui.screens.dialogs import ImportScriptScreen

        def chosen(path: str | None) -> None:
            if path:
                self._import_script(path)

        self.app.push_screen(ImportScriptScreen(), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="import-script", description="import script")
    def _import_script(self, script: str) -> None:
        from ntui.core.compose.presetfiles import user_preset_path
        from ntui.core.compose.presets import list_presets
        from ntui.core.compose.scriptimport import import_script
        from ntui.core.compose.scriptread import ScriptError, read_script
        from ntui.core.paths import atomic_write

        path = Path(script).expanduser()
        try:
            imported = import_script(read_script(path.read_bytes().decode("utf-8"), str(path)))
        except ScriptError as exc:
            self.post_message(ScriptImported(script, error=str(exc.problem)))
            return
        except (OSError, UnicodeDecodeError) as exc:
            self.post_message(ScriptImported(script, error=f"{path}: {getattr(exc, 'strerror', None) or exc}"))
            return
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(imported.preset["name"])).strip("-.") or "imported"
        taken = {p.name for p in list_presets()}
        name, n = stem, 1
        while name in taken or user_preset_path(name).exists():  # never replaces, nor hides, a preset
            name = f"{stem}-imported" if n == 1 else f"{stem}-imported-{n}"
            n += 1
        target = user_preset_path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, imported.yaml_text.replace(f"name: {imported.preset['name']}\n",
                                                        f"name: {target.stem}\n", 1), mode=0o644)
        self.post_message(ScriptImported(script, str(target), tuple(imported.fixes), len(imported.not_imported)))

    @on(ScriptImported)
    def _script_imported(self, message: ScriptImported) -> None:
        message.stop()
        if message.error:
            self.notify(message.error, title="Cannot import the script", severity="error", timeout=15,
                        markup=False)
            return
        fixed = f"{len(message.fixes)} fix(es)" if message.fixes else "nothing to fix"
        skipped = f", {message.not_imported} line(s) not imported (listed at the top of the preset)" \
            if message.not_imported else ""
        self.notify(f"{message.script} → {message.path}: {fixed}{skipped}", title="Script imported", markup=False)
        self._list_presets(None)
        self.load_preset(Path(message.path).stem)

    @on(PresetSaved)
    def _preset_saved(self, message: PresetSaved) -> None:
        message.stop()
        self.notify(f"Saved preset {message.name}", title="Preset saved")
        then, self._after_save = self._after_save, None
        if then is None:
            self._list_presets(message.name)
        else:  # saved on the way to something that replaces the form: do it now
            self._list_presets(None)
            then()

    def action_edit_preset(self) -> None:
        from ntui.ui.screens.editor import PresetEditorScreen

        info = self.preset_info
        if info is None:
            self.notify("No preset selected.", severity="error")
            return

        def closed(saved: str | None) -> None:
            if saved:
                self._list_presets(saved)

        self.app.push_screen(PresetEditorScreen(info.name, info.path, info.origin), closed)

    def action_reset_form(self) -> None:
        if self.preset_name:
            self.guard_edits("Resetting the form", partial(self.open_preset, self.preset_name))

    def action_leave_field(self) -> None:
        from textual.widgets import Input, Select, TextArea

        if isinstance(self.focused, (Input, TextArea, Select)) and self.focused is not self.preview:
            self.picker.focus()  # the picker takes no letters: s, t, e, n, q ... work again

    # ------------------------------------------------------------ status panel

    def _update_status(self) -> None:
        lines: list[Content] = []
        r = self.rendered
        if self.preset_name is None:
            lines.append(Content.assemble(("loading presets…", "$text-muted")))
        elif r is None and self.base is not None:
            lines.append(Content.assemble(("rendering…", "$text-muted")))
        elif r is not None or self.unplaced:
            problems = list(r.problems) if r else self.unplaced
            n_err = len(self.form_errors())
            n_warn = sum(not p.is_error for p in problems)
            site = self.site_problems()  # the cluster's partitions, once they answered (cached per start)
            site_errors = [p for p in site if p.is_error]
            n_warn += len(site) - len(site_errors)
            if n_err:
                lines.append(Content.assemble((f"✗ {n_err} error(s)", "bold $text-error"),
                                              (f", {n_warn} warning(s)" if n_warn else "", "$text-warning"),
                                              (": fix the marked fields", "$text-error")))
            elif site_errors:
                worst = site_errors[0]
                text = f"{worst.field}: {worst.message}" if worst.field else worst.message
                more = f" (+{len(site_errors) - 1} more)" if len(site_errors) > 1 else ""
                lines.append(Content.assemble(("✗ this cluster would not run it: ", "bold $text-error"),
                                              (text + more, "$text-error")))
            elif r is not None and r.spec is not None:
                s = r.spec
                per = s.ntasks_per_node if s.launcher == "srun" else s.nproc_per_node
                lines.append(Content.assemble(
                    ("✓ valid", "bold $text-success"),
                    (f" · {s.launcher} · {s.nodes} node(s) × {per} = world size {s.world_size}", ""),
                    (f" · {n_warn} warning(s)" if n_warn else "", "$text-warning"),
                ))
            if self.unplaced:
                from ntui.core.compose.presetfiles import problem_text
            for p in self.unplaced[:2]:
                style = "$text-error" if p.is_error else "$text-warning"
                lines.append(Content.assemble(("  " + problem_text(p), style)))
            if r is not None:
                lines.append(Content.assemble(("$ ", "$text-muted"), (render_command(r.preset, r.overrides), "")))
        if self.cluster is None:
            lines.append(Content.assemble(("Slurm: loading partitions…", "$text-muted")))
        elif not self.cluster.slurm_installed:
            lines.append(Content.assemble(("⚠ " + NO_SLURM, "bold $text-warning")))
        else:
            c = self.cluster
            parts = ", ".join(f"{p}*" if p == c.default_partition else p for p in c.partitions) or "?"
            who = self.ntui_app.identity
            text = (f"{who} · " if who else "") + f"Slurm: partitions {parts}"
            if any(d is not None for d in self.destinations):  # clusters reached over ssh: where the job goes
                more = f" (c: next of {len(self.destinations)})" if len(self.destinations) > 1 else ""
                over = " over ssh" if self.destination is not None else ""
                lines.append(Content.assemble(("→ submits to ", "$text-muted"),
                                              (self.destination_name(self.destination), "bold"),
                                              (over + more, "$text-muted")))
            if c.accounts:
                text += f" · accounts {', '.join(c.accounts)}"
            if c.qos:
                text += f" · QOS {', '.join(c.qos)}"
            lines.append(Content.assemble((text, "$text-muted")))
            lines.extend(Content.assemble(("  " + n, "$text-warning")) for n in c.notes)
        if self.check_line is not None:
            lines.append(self.check_line)
        if self.submit_line is not None:
            lines.append(self.submit_line)
        self.query_one("#status", Static).update(Content("\n").join(lines))
