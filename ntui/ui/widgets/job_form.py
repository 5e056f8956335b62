"""The job form: one row per preset field, built from the preset; edits become ``--set`` overrides.

Rows show the field's label (``●`` when it differs from the preset), the control, and below it the
field's problems: first the quick per-keystroke check (core rules through :mod:`validators`), then the
full validation's problems for that key (cross-field rules included) once the screen has rendered them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select, Static

if TYPE_CHECKING:
    from textual.widgets import TextArea

    from ntui.core.compose.yamlsrc import LoadedPreset
    from ntui.core.problems import Problem
    from ntui.ui.widgets.form_model import FieldSpec, FieldState

# TextArea (used for env and setup lines) is imported where used: it costs ~5 ms at start-up.

# The form model (and with it the core and YAML) is imported when the first preset arrives, after the
# first frame (start-up time).

_SOURCE_NAMES = {"partition": "partition", "account": "account", "qos": "QOS"}


def _dom_id(key: str) -> str:
    return "field-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in key)


class FieldRow(Vertical):
    """Label + control on one line, messages below."""

    DEFAULT_CSS = """
    FieldRow { height: auto; }
    FieldRow > Horizontal { height: auto; }
    FieldRow .field-label {
        width: 18; padding-right: 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis;
    }
    FieldRow.-modified .field-label { color: $text-warning; text-style: bold; }
    FieldRow .field-control { width: 1fr; }
    FieldRow TextArea.field-control { height: auto; max-height: 6; }
    FieldRow .field-message { display: none; padding-left: 18; }
    FieldRow .field-message.-shown { display: block; }
    FieldRow.-error .field-label { color: $text-error; }
    """

    def __init__(self, spec: FieldSpec, control: Widget, origin: str = "") -> None:
        super().__init__(id=_dom_id(spec.key))
        self.spec = spec
        self.control = control
        self.origin = origin  # "site" / "site, locked": the site layer's value (core/compose/site.py)
        self.origin_note = ""  # the tooltip's line saying so
        self.label = Label(self._label_text(False), classes="field-label")
        self.message = Static("", classes="field-message")
        self._shown: tuple[Content | None, bool] = (None, False)

    def _label_text(self, modified: bool) -> Content:
        mark = ("● " if modified else "  ", "bold $text-warning")
        if self.origin.startswith("site"):  # the site's value: said beside the name (a lock with a padlock word)
            return Content.assemble(mark, self.spec.label, (" ·site" + ("·lock" if "locked" in self.origin else ""),
                                                            "$text-accent"))
        return Content.assemble(mark, self.spec.label)

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield self.label
            yield self.control
        yield self.message

    def set_modified(self, modified: bool) -> None:
        if modified == self.has_class("-modified"):
            return
        self.set_class(modified, "-modified")
        self.label.update(self._label_text(modified))

    def set_message(self, content: Content | None, error: bool) -> None:
        """Show ``content`` under the field (None hides it); no-op when nothing changed."""
        if (content, error) == self._shown:
            return
        self._shown = (content, error)
        self.message.update(content or "")
        self.message.set_class(content is not None, "-shown")
        self.set_class(error, "-error")


class JobForm(VerticalScroll):
    """Fields for the current preset. Posts :class:`JobForm.Changed` with the full overrides list on each edit."""

    DEFAULT_CSS = """
    JobForm { height: 1fr; padding: 0 1; }
    JobForm .form-section { color: $text-primary; text-style: bold; margin-top: 1; }
    JobForm .form-section.-first { margin-top: 0; }
    JobForm .form-empty { color: $text-muted; padding: 1; }
    """

    can_focus = False  # tab goes straight from the picker to the first field

    @dataclass
    class Changed(Message):
        """The overrides the form produces now (and fields with a local, per-keystroke error)."""

        form: JobForm
        overrides: tuple[str, ...]
        local_errors: tuple[tuple[str, str], ...]

        @property
        def control(self) -> JobForm:
            return self.form

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self.base: LoadedPreset | None = None
        self.specs: dict[str, FieldSpec] = {}
        self.initial: dict[str, str] = {}
        self.rows: dict[str, FieldRow] = {}
        self.states: dict[str, FieldState] = {}
        self.problems: dict[str, list[Problem]] = {}
        self.quick_errors: dict[str, str] = {}
        self.choices: dict[str, tuple[str, ...]] = {}
        self.choice_defaults: dict[str, str] = {}
        self._loading = False

    # ------------------------------------------------------------ building

    def _blink(self) -> bool:
        return not self.app.is_headless and bool(getattr(self.app, "cursor_blink_enabled", True))

    def _control(self, spec: FieldSpec, text: str) -> Widget:
        from ntui.ui.widgets.form_model import QUICK_CHECKS
        from ntui.ui.widgets.validators import CoreCheck

        name = spec.key
        kind = spec.kind
        if kind == "flag":
            return Checkbox("", value=text == "true", name=name, classes="field-control", compact=True)
        if kind in ("choice", "tristate"):
            values = list(spec.choices) if kind == "choice" else ["true", "false"]
            if text and text not in values:
                values.append(text)  # an invalid preset value stays visible (and gets its error)
            prompt = f"auto ({spec.default})" if spec.default else "default"
            if kind == "tristate":
                prompt = "auto"
            return Select(
                [(v, v) for v in values],
                value=text if text else Select.NULL,
                allow_blank=text == "",
                prompt=prompt,
                name=name,
                classes="field-control",
                compact=True,
            )
        if kind in ("lines", "env"):
            from textual.widgets import TextArea

            area = TextArea(
                text, soft_wrap=False, tab_behavior="focus", show_line_numbers=False, name=name,
                classes="field-control", compact=True,
            )
            area.cursor_blink = self._blink()
            return area
        check = QUICK_CHECKS.get(kind)
        placeholder = self._placeholder(spec)
        inp = Input(
            text,
            placeholder=placeholder,
            name=name,
            classes="field-control",
            compact=True,
            validators=[CoreCheck(check)] if check else None,
            validate_on=["changed"] if check else None,
            tooltip=spec.help or None,
        )
        inp.cursor_blink = self._blink()
        return inp

    async def load(self, base: LoadedPreset) -> None:
        """Rebuild every row for ``base`` (a preset without overrides)."""
        from ntui.core.compose.site import value_origin
        from ntui.ui.widgets.form_model import field_text, fields_for

        self._loading = True
        self.base = base
        specs = fields_for(base.data)
        self.specs = {s.key: s for s in specs}
        self.initial = {s.key: field_text(s, base) for s in specs}
        self.states = {}
        self.problems = {}
        self.quick_errors = {}
        self.rows = {}
        widgets: list[Widget] = []
        section = ""
        for spec in specs:
            if spec.section != section:
                section = spec.section
                widgets.append(Static(section, classes="form-section" + ("" if widgets else " -first")))
            origin = value_origin(base.site, base.sources, spec.path)
            row = FieldRow(spec, self._control(spec, self.initial[spec.key]), origin)
            if origin.startswith("site") and base.site is not None:
                src = base.site.locked.get(spec.path) or base.sources.get(spec.path)
                where = f"{base.site.name} ({base.site.file}:{src.line if src else '?'})"
                row.origin_note = f"\nFrom the site: {where}" + (
                    "; locked: the site does not let a preset change it" if "locked" in origin else "")
                row.control.tooltip = f"{spec.help}{row.origin_note}"
            self.rows[spec.key] = row
            widgets.append(row)
        with self.app.batch_update():
            await self.remove_children()
            await self.mount_all(widgets)
        self.scroll_home(animate=False)
        self._apply_choices()
        self._update_visibility()
        self._recompute(post=False)
        self._loading = False

    async def show_unavailable(self, message: str) -> None:
        self.base = None
        self.specs, self.rows, self.initial, self.states = {}, {}, {}, {}
        await self.remove_children()
        await self.mount(Static(message, classes="form-empty"))
        self.border_subtitle = ""

    def focus_first(self) -> None:
        for row in self.rows.values():
            if row.display and row.control.focusable:
                row.control.focus()
                return

    # ------------------------------------------------------------ values

    def control(self, key: str) -> Widget:
        return self.rows[key].control

    def text_of(self, key: str) -> str:
        from textual.widgets import TextArea

        control = self.control(key)
        if isinstance(control, Input):
            return control.value
        if isinstance(control, Checkbox):
            return "true" if control.value else "false"
        if isinstance(control, Select):
            return "" if control.is_blank() else str(control.value)
        if isinstance(control, TextArea):
            return control.text
        raise TypeError(type(control))

    def set_text(self, key: str, text: str) -> None:
        """Set a field programmatically (tests, the palette); posts Changed like a user edit."""
        from textual.widgets import TextArea

        control = self.control(key)
        if isinstance(control, Input):
            control.value = text
        elif isinstance(control, Checkbox):
            control.value = text == "true"
        elif isinstance(control, Select):
            control.value = text if text else Select.NULL
        elif isinstance(control, TextArea):
            control.load_text(text)
            self._edited(key)

    @property
    def overrides(self) -> tuple[str, ...]:
        return tuple(s.override for s in self.states.values() if s.override is not None)

    @property
    def modified_keys(self) -> tuple[str, ...]:
        return tuple(k for k, s in self.states.items() if s.override is not None)

    @property
    def local_errors(self) -> tuple[tuple[str, str], ...]:
        out = {k: s.error for k, s in self.states.items() if s.error}
        out.update(self.quick_errors)
        return tuple((k, v) for k, v in out.items() if v)

    # ------------------------------------------------------------ events

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        key = event.input.name or ""
        if key not in self.rows:
            return
        result = event.validation_result
        if result is not None and not result.is_valid:
            self.quick_errors[key] = result.failure_descriptions[0]
        else:
            self.quick_errors.pop(key, None)
        self._edited(key)

    @on(Select.Changed)
    @on(Checkbox.Changed)
    def _choice_changed(self, event: Select.Changed | Checkbox.Changed) -> None:
        event.stop()
        key = event.control.name or ""
        if key in self.rows:
            self._edited(key)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        """A handler by name, so that TextArea need not be imported at start-up."""
        event.stop()
        key = event.text_area.name or ""
        if key in self.rows:
            self._edited(key)

    def _edited(self, key: str) -> None:
        if self._loading:
            return
        if key == "launcher.type":
            self._update_visibility()
        self._recompute(post=True)

    def _recompute(self, *, post: bool) -> None:
        from ntui.ui.widgets.form_model import field_state

        self.states = {k: field_state(self.specs[k], self.initial[k], self.text_of(k)) for k in self.rows}
        for key, row in self.rows.items():
            row.set_modified(self.states[key].modified)
        self._show_messages()
        n = len(self.modified_keys)
        self.border_subtitle = f"{n} changed" if n else ""
        if post:
            self.post_message(self.Changed(self, self.overrides, self.local_errors))

    def _update_visibility(self) -> None:
        ltype = self.text_of("launcher.type") if "launcher.type" in self.rows else ""
        for key, row in self.rows.items():
            spec = row.spec
            row.display = not spec.only_for or ltype in spec.only_for or self.initial.get(key, "") != ""

    # ------------------------------------------------------------ problems and cluster choices

    def show_problems(self, problems: Iterable[Problem]) -> list[Problem]:
        """Attach problems to their fields; returns the ones that belong to no field."""
        from ntui.ui.widgets.form_model import problem_field_key

        self.problems = {}
        unplaced: list[Problem] = []
        for p in problems:
            key = problem_field_key(p, self.rows)
            if key is None:
                unplaced.append(p)
            else:
                self.problems.setdefault(key, []).append(p)
        self._show_messages()
        return unplaced

    def _show_messages(self) -> None:
        from ntui.ui.widgets.form_model import choice_warning

        for key, row in self.rows.items():
            local = self.quick_errors.get(key) or (self.states[key].error if key in self.states else None)
            if local:
                row.set_message(Content.assemble(("✗ ", "bold $text-error"), (local, "$text-error")), True)
                continue
            found = self.problems.get(key, [])
            if found:
                parts: list[Content] = []
                for p in found:
                    tag, style = ("✗ ", "$text-error") if p.is_error else ("! ", "$text-warning")
                    sub = p.field[len(key) + 1:] if p.field.startswith(key + ".") else ""
                    parts.append(Content.assemble((tag, f"bold {style}"), (f"{sub}: " if sub else "", style),
                                                  (p.message, style)))
                row.set_message(Content("\n").join(parts), any(p.is_error for p in found))
                continue
            note = None
            spec = row.spec
            if spec.source and spec.source in self.choices:
                note = choice_warning(self.text_of(key), self.choices[spec.source], _SOURCE_NAMES[spec.source])
            if note:
                row.set_message(Content.assemble(("! ", "bold $text-warning"), (note, "$text-warning")), False)
            else:
                row.set_message(None, False)

    def _placeholder(self, spec: FieldSpec) -> str:
        """What an empty field means, in words: the value the job gets without it."""
        if spec.key == "sbatch.job-name" and self.base is not None:
            return f"default: {self.base.data.get('name') or self.base.name} (the preset's name)"
        if spec.key == "launcher.nproc-per-node":
            return "default: GPUs per node (1 without GPUs)"
        if spec.key == "logs.dir":
            from ntui.core.compose.spec import default_log_dir

            return f"default: {default_log_dir()}"
        if spec.default:
            return f"default: {spec.default}"
        return "not set: Slurm's default" if spec.key.startswith("sbatch.") else ""

    def set_choices(self, choices: Mapping[str, Sequence[str]], defaults: Mapping[str, str] | None = None) -> None:
        """Cluster-fed values (``partition``/``account``/``qos``): offered as completions, free text stays.
        ``defaults``: what Slurm uses when the field is empty (the default partition)."""
        self.choices = {k: tuple(v) for k, v in choices.items() if v}
        self.choice_defaults = dict(defaults or {})
        self._apply_choices()
        self._show_messages()

    def _apply_choices(self) -> None:
        from textual.suggester import SuggestFromList

        for row in self.rows.values():
            source = row.spec.source
            if source and isinstance(row.control, Input):
                values = self.choices.get(source, ())
                row.control.suggester = SuggestFromList(values, case_sensitive=True) if values else None
                if values:
                    default = self.choice_defaults.get(source)
                    others = [v for v in values if v != default]
                    shown = ", ".join(others[:3]) + (" …" if len(others) > 3 else "")
                    row.control.placeholder = (f"default: {default}" + (f" (also {shown})" if shown else "")
                                               if default else f"not set: Slurm's default ({shown})")
                    row.control.tooltip = f"{row.spec.help}\nOn this cluster: {', '.join(values)}{row.origin_note}"

    def error_keys(self) -> tuple[str, ...]:
        """Fields that show an error now."""
        return tuple(k for k, r in self.rows.items() if r.has_class("-error"))

    def field_messages(self) -> dict[str, Any]:
        """Field key -> the message shown under it (tests)."""
        return {k: str(r.message.content) for k, r in self.rows.items() if r.message.has_class("-shown")}
