"""The job form as data: which fields a preset gets, their text, and the ``--set`` overrides they produce.

Textual-free on purpose (unit-testable, importable without a terminal). The form is a set of
``KEY=VALUE`` overrides on top of the selected preset, exactly what ``ntui render PRESET --set ...``
takes: a field whose value equals the preset's produces no override, so the preview is always
``render(validate(load_preset(preset, overrides)))``.

Encoding rules (each checked by ``parse_override`` round trips in the tests):

* numbers, times, choices and free YAML scalars go through as typed (``sbatch.time=1:30:00``);
* text fields go through as typed when YAML would read them back as the same string, otherwise as a
  double-quoted YAML string (``sbatch.job-name="yes"``), so ``yes`` stays text;
* clearing an optional sbatch option writes ``=false``, the preset syntax for "leave the option out";
* lists (args, setup, extra launcher args) and the env mapping become one YAML flow value with
  double-quoted scalars, e.g. ``args=["--epochs", "3"]``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from ntui.core.compose.gpureq import parse_gpu_request
from ntui.core.compose.presets import parse_override
from ntui.core.compose.rules import MONITOR_INTERVAL_MAX, MONITOR_INTERVAL_MIN
from ntui.core.compose.spec import LAUNCHERS, MIXED_PRECISION, RUNTIMES
from ntui.core.compose.yamlsrc import KeyPath, LoadedPreset
from ntui.core.jobfiles.samplefiles import DEFAULT_INTERVAL_S
from ntui.core.problems import PresetError, Problem
from ntui.core.slurm.durations import parse_time_limit

FieldKind = Literal[
    "int", "gpus", "time", "text", "scalar", "choice", "flag", "tristate", "words", "lines", "env"
]

#: Sections in display order.
SECTIONS = ("Slurm", "Launcher", "Program", "Environment", "Container", "Logs and NCCL", "Monitoring")


@dataclass(frozen=True)
class FieldSpec:
    """One form field, bound to one dotted preset key."""

    key: str
    """The dotted preset key; also the ``--set`` key."""
    label: str
    kind: FieldKind
    section: str
    help: str = ""
    """One line shown as the tooltip."""
    choices: tuple[str, ...] = ()
    """For ``choice`` fields."""
    source: str | None = None
    """Cluster-fed suggestions: ``partition``, ``account`` or ``qos``."""
    only_for: tuple[str, ...] = ()
    """Launcher types for which the field is shown (empty: always)."""
    default: str = ""
    """What the core assumes when the key is absent (shown as the placeholder)."""

    @property
    def path(self) -> KeyPath:
        return tuple(self.key.split("."))

    @property
    def optional_option(self) -> bool:
        """An sbatch option that can be left out (clearing it writes ``=false``)."""
        return self.key.startswith("sbatch.") and self.kind in ("text", "scalar", "time", "gpus")


_S = "Slurm"
_L = "Launcher"
_ACC = ("accelerate",)
_TR_ACC = ("torchrun", "accelerate")

#: The fields every preset gets, in order. sbatch keys the preset has beyond these are added as
#: ``scalar`` fields after ``sbatch.job-name``.
STANDARD_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("sbatch.nodes", "Nodes", "int", _S, "--nodes: number of nodes", default="1"),
    FieldSpec("sbatch.ntasks-per-node", "Tasks per node", "int", _S,
              "--ntasks-per-node: srun = one per GPU; torchrun/accelerate = 1 (one launcher per node)"),
    FieldSpec("sbatch.gpus-per-node", "GPUs per node", "gpus", _S,
              "--gpus-per-node: COUNT or TYPE:COUNT, e.g. 4 or a100:4 (0 or empty = CPU only)"),
    FieldSpec("sbatch.cpus-per-task", "CPUs per task", "int", _S, "--cpus-per-task", default="1"),
    FieldSpec("sbatch.time", "Time limit", "time", _S,
              "--time: min, min:sec, h:m:s, d-h, d-h:m or d-h:m:s"),
    FieldSpec("sbatch.partition", "Partition", "text", _S, "--partition (empty: the cluster's default)",
              source="partition"),
    FieldSpec("sbatch.account", "Account", "text", _S, "--account (empty: your default account)",
              source="account"),
    FieldSpec("sbatch.qos", "QOS", "text", _S, "--qos (empty: the default QOS)", source="qos"),
    FieldSpec("sbatch.constraint", "Constraint", "text", _S, "--constraint, e.g. gpu or cpu"),
    FieldSpec("sbatch.job-name", "Job name", "text", _S, "--job-name (empty: the preset's name)"),
    FieldSpec("launcher.type", "Launcher", "choice", _L, "how ranks are started", choices=LAUNCHERS),
    FieldSpec("launcher.nproc-per-node", "Processes/node", "int", _L,
              "processes each torchrun/accelerate starts (= GPUs per node)", only_for=_TR_ACC),
    FieldSpec("launcher.master-port", "Master port", "scalar", _L,
              "auto (derived from the job id) or a port 1024-65535", default="auto"),
    FieldSpec("launcher.python", "Python", "text", _L, "the interpreter each rank runs", default="python"),
    FieldSpec("launcher.kill-on-bad-exit", "Kill on failure", "flag", _L,
              "srun --kill-on-bad-exit=1: one failed rank ends the step", default="true"),
    FieldSpec("launcher.extra-args", "Launcher args", "words", _L,
              "extra launcher arguments, shell words"),
    FieldSpec("launcher.mixed-precision", "Mixed precision", "choice", _L, "accelerate --mixed_precision",
              choices=MIXED_PRECISION, only_for=_ACC, default="no"),
    FieldSpec("launcher.multi-gpu", "Multi-GPU", "tristate", _L, "accelerate --multi_gpu", only_for=_ACC,
              default="auto"),
    FieldSpec("launcher.cpu", "CPU only", "tristate", _L, "accelerate --cpu (one process per machine)",
              only_for=_ACC, default="auto"),
    FieldSpec("launcher.dynamo-backend", "Dynamo backend", "text", _L, "accelerate --dynamo_backend",
              only_for=_ACC, default="no"),
    FieldSpec("script", "Script", "text", "Program", "the program each rank runs (relative: to the preset)"),
    FieldSpec("args", "Arguments", "words", "Program", "its arguments, shell words, passed verbatim"),
    FieldSpec("env", "Env (K=V lines)", "env", "Environment", "exported before launch, one KEY=VALUE a line"),
    FieldSpec("setup", "Setup lines", "lines", "Environment", "shell lines run before launch (module load ...)"),
    FieldSpec("container.runtime", "Runtime", "choice", "Container", "container runtime", choices=RUNTIMES,
              default="none"),
    FieldSpec("container.image", "Image", "text", "Container",
              "the image every rank runs in: a registry name, a .sif or .sqsh file, an image directory"),
    FieldSpec("container.mounts", "Mounts", "words", "Container",
              "SRC[:DST[:FLAGS]] words; the logs and the program's folder are mounted by ntui"),
    FieldSpec("container.workdir", "Workdir", "text", "Container", "the ranks' working directory in the image"),
    FieldSpec("container.options", "Runtime options", "words", "Container",
              "the runtime's own options, shell words, after ntui's"),
    FieldSpec("sbatch.image", "Shifter image", "text", "Container",
              "#SBATCH --image (Shifter only), e.g. nersc/pytorch:25.02.01"),
    FieldSpec("sbatch.module", "Modules", "text", "Container", "--module (Shifter), e.g. gpu,nccl-plugin"),
    # Slurm's own word when no ntui runs (the app's notices need it open): sent by the site's MailProg
    FieldSpec("sbatch.mail-type", "Mail on", "text", "Mail from Slurm",
              "--mail-type: BEGIN,END,FAIL,REQUEUE,TIME_LIMIT_80 (ALL, NONE); where the site sends Slurm's mail"),
    FieldSpec("sbatch.mail-user", "Mail to", "text", "Mail from Slurm", "--mail-user (empty: your cluster user)"),
    FieldSpec("logs.dir", "Log directory", "text", "Logs and NCCL", "batch and per-rank logs"),
    FieldSpec("nccl.debug", "NCCL_DEBUG=INFO", "flag", "Logs and NCCL", "debugging only", default="false"),
    FieldSpec("nccl.slingshot", "Slingshot env", "flag", "Logs and NCCL", "HPE Slingshot NCCL/libfabric profile",
              default="false"),
    FieldSpec("monitor.gpu", "GPU sampling", "tristate", "Monitoring",
              "in-job nvidia-smi per node for `ntui report`; auto = on when the job asks for GPUs", default="auto"),
    FieldSpec("monitor.interval", "Sample every (s)", "int", "Monitoring",
              f"seconds between GPU samples, {MONITOR_INTERVAL_MIN}-{MONITOR_INTERVAL_MAX}",
              default=str(DEFAULT_INTERVAL_S)),
    # A run longer than one allocation (run:, T1-T10): any of these fields adds the section.
    FieldSpec("run.continue", "Continue by", "text", "Long run",
              "after the checkpoint signal: requeue | chain | none (empty: no run section)"),
    FieldSpec("run.checkpoint-signal", "Checkpoint signal", "text", "Long run",
              "sent to every rank before the time limit (USR2; not USR1: NCCL catches it)", default="USR2"),
    FieldSpec("run.warning", "Warning (s)", "int", "Long run",
              "seconds before the time limit (Slurm may send it up to 60 s earlier)", default="300"),
    FieldSpec("run.grace", "Grace (s)", "int", "Long run",
              "seconds the ranks get to save and exit after the signal (below the warning)", default="240"),
    FieldSpec("run.max-restarts", "Max restarts", "int", "Long run",
              "allocations after the first that a time limit may start (preemptions do not count)", default="5"),
)
_STANDARD_KEYS = {f.key for f in STANDARD_FIELDS}


def fields_for(data: Mapping[str, Any]) -> tuple[FieldSpec, ...]:
    """The standard fields plus one ``scalar`` field per other sbatch key of the preset."""
    sbatch = data.get("sbatch")
    extra: list[FieldSpec] = []
    if isinstance(sbatch, dict):
        for key in sbatch:
            dotted = f"sbatch.{key}"
            if dotted not in _STANDARD_KEYS:
                extra.append(FieldSpec(dotted, str(key), "scalar", _S, f"--{key} (YAML value; false omits it)"))
    out: list[FieldSpec] = []
    for f in STANDARD_FIELDS:
        out.append(f)
        if f.key == "sbatch.job-name":
            out.extend(extra)
    return tuple(out)


# ---------------------------------------------------------------- values


def get_path(data: Any, path: KeyPath) -> tuple[bool, Any]:
    cur = data
    for part in path:
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def _scalar_text(value: Any, raw: str | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if raw is not None and not isinstance(value, (dict, list)):
        return raw
    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _list_of_text(loaded: LoadedPreset, path: KeyPath, value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [loaded.raw.get((*path, str(i)), str(v)) for i, v in enumerate(value)]


def field_text(f: FieldSpec, loaded: LoadedPreset) -> str:
    """The text a widget shows for ``f`` (``""`` when the preset does not set it)."""
    present, value = get_path(loaded.data, f.path)
    if not present:
        return f.default if f.kind == "flag" else ""
    if f.kind in ("words",):
        return shlex.join(_list_of_text(loaded, f.path, value)) if isinstance(value, list) else str(value)
    if f.kind == "lines":
        return "\n".join(_list_of_text(loaded, f.path, value)) if isinstance(value, list) else str(value)
    if f.kind == "env":
        if not isinstance(value, dict):
            return ""
        return "\n".join(
            f"{k}={loaded.raw.get((*f.path, str(k)), _scalar_text(v, None))}" for k, v in value.items()
        )
    if f.kind == "tristate":
        return _scalar_text(value, None) if isinstance(value, bool) else str(value)
    return _scalar_text(value, loaded.raw.get(f.path))


def parse_env_lines(text: str) -> tuple[dict[str, str], str | None]:
    """``KEY=VALUE`` lines to a mapping; blank lines are skipped. Returns (mapping, error)."""
    env: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            return env, f"line {n}: expected KEY=VALUE, got {line!r}"
        env[key.strip()] = value
    return env, None


def parse_words(text: str) -> tuple[list[str], str | None]:
    try:
        return shlex.split(text), None
    except ValueError as exc:
        return [], f"cannot split into shell words: {exc}"


def parse_lines(text: str) -> list[str]:
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _structured(f: FieldSpec, text: str) -> tuple[Any, str | None]:
    if f.kind == "words":
        return parse_words(text)
    if f.kind == "lines":
        return parse_lines(text), None
    if f.kind == "env":
        return parse_env_lines(text)
    return text, None


def yaml_quote(text: str) -> str:
    """A YAML double-quoted scalar that reads back as exactly ``text`` (controls and line breaks escaped)."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif o < 0x20 or 0x7F <= o <= 0x9F or ch in "\u2028\u2029\ufeff" or o in (0xFFFE, 0xFFFF):
            out.append(f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def yaml_flow(value: Any) -> str:
    """A list of strings or a str->str mapping as one YAML flow value (every scalar double-quoted)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_quote(str(k))}: {yaml_quote(str(v))}" for k, v in value.items()) + "}"
    return "[" + ", ".join(yaml_quote(str(v)) for v in value) + "]"


def _text_override(key: str, text: str) -> str:
    """``KEY=TEXT`` if YAML reads TEXT back as that same string, else a double-quoted YAML string."""
    plain = f"{key}={text}"
    try:
        _, value, _ = parse_override(plain)
    except PresetError:
        value = None
    if isinstance(value, str) and value == text:
        return plain
    return f"{key}={yaml_quote(text)}"


@dataclass(frozen=True)
class FieldState:
    """What one field produces: its override (None = equal to the preset) or a local error."""

    spec: FieldSpec
    override: str | None
    error: str | None = None

    @property
    def modified(self) -> bool:
        return self.override is not None or self.error is not None


def field_state(f: FieldSpec, initial: str, text: str) -> FieldState:
    """Compare ``text`` with the preset's ``initial`` and encode the difference as one ``--set``."""
    if f.kind in ("words", "lines", "env"):
        value, error = _structured(f, text)
        if error:
            return FieldState(f, None, error)
        initial_value, _ = _structured(f, initial)
        if value == initial_value:
            return FieldState(f, None)
        return FieldState(f, f"{f.key}={yaml_flow(value)}")
    if text == initial:
        return FieldState(f, None)
    if f.kind == "text":
        if text == "" and f.optional_option:
            return FieldState(f, f"{f.key}=false")
        return FieldState(f, _text_override(f.key, text))
    if text == "" and f.optional_option:
        return FieldState(f, f"{f.key}=false")
    return FieldState(f, f"{f.key}={text}")


# ---------------------------------------------------------------- per-field quick checks (as you type)


def check_positive_int(text: str) -> str | None:
    t = text.strip()
    if t == "":
        return None
    if not t.isdigit():
        return f'expected a positive integer, got "{text}"'
    return None


def check_time(text: str) -> str | None:
    if text.strip() == "":
        return None
    try:
        parse_time_limit(text)
    except ValueError as exc:
        return str(exc)
    return None


def check_gpu_count(text: str) -> str | None:
    t = text.strip()
    if t == "" or parse_gpu_request("gpus-per-node", t) is not None:
        return None
    return f'expected COUNT or TYPE:COUNT (e.g. 4 or a100:4), got "{text}"'


#: Per-kind checks run on every keystroke (the full cross-field validation follows, debounced).
QUICK_CHECKS = {"int": check_positive_int, "gpus": check_gpu_count, "time": check_time}


# ---------------------------------------------------------------- problems -> fields


def problem_field_key(problem: Problem, keys: Iterable[str]) -> str | None:
    """The form field a problem belongs to: exact key, a child of it (``env.X``, ``args.2``), or none."""
    name = problem.field.partition("=")[0]
    best: str | None = None
    for key in keys:
        if (name == key or name.startswith(key + ".")) and (best is None or len(key) > len(best)):
            best = key
    return best


def choice_warning(value: str, choices: Sequence[str], what: str) -> str | None:
    """A non-blocking note when a cluster-fed value is not among the cluster's choices."""
    if not value or not choices or value in choices:
        return None
    shown = ", ".join(choices[:6]) + (" ..." if len(choices) > 6 else "")
    return f"not a {what} on this cluster (known: {shown})"


# ---------------------------------------------------------------- presets from the form


_TOP_ORDER = ("name", "description", "launcher", "sbatch", "container", "env", "setup", "script", "args", "logs",
              "nccl", "monitor", "run")


def _restore_raw(value: Any, path: KeyPath, raw: Mapping[KeyPath, str]) -> Any:
    """Numbers whose YAML text differs from their value (``00:20:00`` read as 1200) go back to text."""
    if isinstance(value, dict):
        return {k: _restore_raw(v, (*path, str(k)), raw) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore_raw(v, (*path, str(i)), raw) for i, v in enumerate(value)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = raw.get(path)
        if text is not None and text != str(value):
            return text
    return value


@dataclass
class PresetDraft:
    """A preset built from the current form: YAML text ready for the save pipeline."""

    name: str
    text: str
    notes: list[str] = field(default_factory=list)


def relocation(data: Mapping[str, Any], name: str, resolved_script: str | None) -> tuple[dict[str, str], list[str]]:
    """What changes when a preset is saved under ``name`` into the user's directory (save-as ``n`` from the form
    and the editor's save as alike): its ``name``, and a relative ``script`` made absolute (``resolved_script``:
    it was relative to the old preset's directory). Returns the new top-level values and notes for the user."""
    changes = {"name": name}
    notes: list[str] = []
    script = data.get("script")
    if resolved_script and isinstance(script, str) and script != resolved_script and not script.startswith("/"):
        changes["script"] = resolved_script
        notes.append(f"script made absolute: {resolved_script}")
    return changes, notes


def relocate_text(text: str, changes: Mapping[str, str]) -> str:
    """``text`` (a preset's YAML, comments kept) with the top-level scalars in ``changes`` replaced (or, for a
    key not there, added at the top). Values are written as JSON strings, which YAML reads back verbatim."""
    lines = text.splitlines(keepends=True)
    todo = dict(changes)
    for i, line in enumerate(lines):
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:(\s|$)", line)
        if m and m.group(1) in todo:
            end = "\n" if line.endswith("\n") else ""
            lines[i] = f"{m.group(1)}: {json.dumps(todo.pop(m.group(1)), ensure_ascii=False)}{end}"
    head = [f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in todo.items()]
    return "".join(head + lines)


def preset_yaml(loaded: LoadedPreset, name: str, resolved_script: str | None, source_name: str) -> PresetDraft:
    """The YAML of a new preset equal to ``loaded`` (a preset with the form's overrides applied).

    ``name`` replaces the preset name; a relative script path is replaced by ``resolved_script`` (it was
    relative to the old preset's directory). Scalars keep their YAML text (``00:20:00`` stays a time).
    """
    data = dict(_restore_raw(loaded.data, (), loaded.raw))
    changes, notes = relocation(data, name, resolved_script)
    data.update(changes)
    ordered = {k: data[k] for k in _TOP_ORDER if k in data}
    ordered.update({k: v for k, v in data.items() if k not in ordered})
    body = yaml.safe_dump(ordered, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)
    header = [f"# Saved by ntui from preset {source_name!r}" + (" with:" if loaded.overrides else ".")]
    header += ["#   --set " + o.replace("\r", "\\r").replace("\n", "\\n") for o in loaded.overrides]
    return PresetDraft(name, "\n".join(header) + "\n" + body, notes)


def form_texts(loaded: LoadedPreset, keys: Iterable[str], overrides: Sequence[str]) -> tuple[
    dict[str, str], tuple[str, ...]
]:
    """The text each form field shows for ``loaded`` (a preset with ``overrides`` applied), for the fields
    ``overrides`` touch (an override of ``env.X`` fills the ``env`` field), and the overrides no field of the
    form (``keys``) holds."""
    specs = {s.key: s for s in fields_for(loaded.data)}
    paths = {k: tuple(k.split(".")) for k in keys}
    texts: dict[str, str] = {}
    unplaced: list[str] = []
    for item in overrides:
        try:
            path, _, _ = parse_override(item)
        except PresetError:
            unplaced.append(item)
            continue
        key = next((k for k, p in paths.items() if path[: len(p)] == p), None)
        if key is None or key not in specs:
            unplaced.append(item)
            continue
        texts[key] = field_text(specs[key], loaded)
    return texts, tuple(unplaced)
