"""The site layer: what a centre's admins ship between ntui's defaults and the user's presets.

A site directory is ``$NTUI_SITE_DIR``, else the first ``ntui`` folder of ``$XDG_CONFIG_DIRS`` (default ``/etc/xdg``)
that exists, as an environment module would set either. It holds:

* ``site.yaml``::

      name: NERSC Perlmutter              # shown with every site value's origin
      defaults:                           # a preset fragment under every preset: shipped < site < preset < --set
        sbatch: {account: m1234, qos: regular, constraint: gpu}
        container: {runtime: shifter}
      locked: [sbatch.constraint]         # keys a preset or --set may not change
      rules:                              # checked like the built-in rules, reported with their id
        - id: NERSC-DEBUG-NODES
          key: sbatch.nodes
          max: 8                          # also: min, one-of: [...], forbid: [...], required: true
          when: {sbatch.qos: debug}       # only where every key named has that value
          severity: error                 # or warning
          message: the debug QOS allows at most 8 nodes
        - id: NERSC-GPUS
          key: job.gpus-per-node          # a value ntui works out (JOB_KEYS), however the preset wrote it
          max: 4
          when: {sbatch.qos: [regular, debug], sbatch.account: null}   # a list: any of them; null: not set
          message: "{value} GPUs per node: a node has 4"   # {value}, {job.NAME}: the values judged

A rule's ``key`` is a dotted preset key, or one of :data:`JOB_KEYS`: a value ntui works out from the whole preset
(GPUs per node however they were asked for, tasks and CPUs per node), judged only where ntui knows it and reported
at the preset key it came from. In ``when`` a list means any of its values and ``null`` a key the preset does not
set (or sets to false). A ``message`` may say ``{value}`` (the value judged) and ``{job.NAME}`` (a job value);
``{{`` and ``}}`` are braces.

* ``presets/``: the site's presets, listed with their origin and read-only (saving one writes a user preset).

A damaged ``site.yaml`` gets the errors a damaged preset gets (file, line, field); the job is checked against
nothing the file does not say. Pure but for reading the directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ntui.core.compose.yamlsrc import KeyPath, LoadedPreset, load_yaml_file
from ntui.core.problems import PresetError, Problem, Severity, Source

SITE_ENV = "NTUI_SITE_DIR"
SITE_FILE = "site.yaml"
SITE_KEYS = ("name", "defaults", "locked", "rules")
RULE_KEYS = ("id", "key", "max", "min", "one-of", "forbid", "required", "when", "severity", "message")
#: The values a site rule may judge that no one preset key holds: ntui works them out from the whole preset
#: (``Draft.job_values`` in core/compose/rules.py), whichever way the preset wrote them.
JOB_KEYS: Mapping[str, str] = {
    "job.nodes": "the job's nodes (1 where the preset says none)",
    "job.tasks-per-node": "tasks per node (srun: one a GPU unless said; torchrun and accelerate: one a node)",
    "job.gpus-per-node": "GPUs a node gets, however asked for (gpus-per-node, gres, gpus-per-task times the tasks "
                         "per node, gpus over the nodes; 0: none asked for)",
    "job.cpus-per-task": "sbatch.cpus-per-task (1 where the preset says none)",
    "job.cpus-per-node": "tasks per node times CPUs per task",
}
#: What ntui worked out of one preset: a job value's name -> (the value, the preset key a finding is reported at).
JobValues = Mapping[str, tuple[int, KeyPath]]
#: A message's placeholders (``{value}``, ``{job.NAME}``), its doubled braces, and a lone brace.
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


@dataclass(frozen=True)
class SiteRule:
    id: str
    key: KeyPath
    message: str
    severity: Severity = Severity.ERROR
    max: float | None = None
    min: float | None = None
    one_of: tuple[str, ...] | None = None
    forbid: tuple[str, ...] = ()
    required: bool = False
    when: tuple[tuple[KeyPath, tuple[str | None, ...]], ...] = ()
    """Each key with the values it may have for the rule to apply (None: the preset does not set it)."""


@dataclass(frozen=True)
class Site:
    directory: Path
    name: str
    defaults: dict[str, Any] = field(default_factory=dict)
    sources: dict[KeyPath, Source] = field(default_factory=dict)
    raw: dict[KeyPath, str] = field(default_factory=dict)
    locked: dict[KeyPath, Source] = field(default_factory=dict)
    rules: tuple[SiteRule, ...] = ()

    @property
    def presets_dir(self) -> Path:
        return self.directory / "presets"

    @property
    def file(self) -> Path:
        return self.directory / SITE_FILE


def site_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The site directory in effect (module docstring), or None."""
    env = os.environ if environ is None else environ
    explicit = env.get(SITE_ENV)
    if explicit:
        return Path(explicit)
    for entry in (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":"):
        if entry and os.path.isabs(entry) and (Path(entry) / "ntui").is_dir():
            return Path(entry) / "ntui"
    return None


def load_site(directory: Path) -> Site:
    """The site in ``directory`` (no ``site.yaml``: a site of presets only). Raises PresetError, every problem at
    once, each with the file, line and field."""
    path = directory / SITE_FILE
    if not path.exists():
        return Site(directory, directory.name)
    fname = str(path)
    doc = load_yaml_file(fname)
    if doc.data is None:
        return Site(directory, directory.name)
    sources = {k: Source(fname, line) for k, line in doc.lines.items()}

    def at(*key: str) -> Source:
        for i in range(len(key), 0, -1):
            if key[:i] in sources:
                return sources[key[:i]]
        return Source(fname, 1)

    if not isinstance(doc.data, dict):
        raise PresetError([Problem(Source(fname, 1), "", "expected a YAML mapping (name, defaults, locked, rules)")])
    data: dict[str, Any] = doc.data
    problems = [Problem(at(str(k)), str(k), f"unknown key (expected one of {', '.join(SITE_KEYS)})")
                for k in data if k not in SITE_KEYS]
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        problems.append(Problem(at("defaults"), "defaults", "expected a mapping: preset sections (sbatch, ...)"))
        defaults = {}
    locked: dict[KeyPath, Source] = {}
    for i, key in enumerate(_list(data, "locked", problems, at)):
        if not isinstance(key, str) or not key:
            problems.append(Problem(at("locked", str(i)), f"locked.{i}", "expected a dotted key, e.g. sbatch.qos"))
            continue
        locked[tuple(key.split("."))] = at("locked", str(i))
    rules = []
    for i, item in enumerate(_list(data, "rules", problems, at)):
        rule = _rule(item, f"rules.{i}", at, problems)
        if rule is not None:
            rules.append(rule)
    if problems:
        raise PresetError(problems)
    return Site(
        directory, str(data.get("name") or directory.name), {str(k): v for k, v in defaults.items()},
        {k[1:]: v for k, v in sources.items() if k[:1] == ("defaults",) and len(k) > 1},
        {k[1:]: v for k, v in doc.raw.items() if k[:1] == ("defaults",) and len(k) > 1},
        locked, tuple(rules),
    )


def _list(data: dict[str, Any], key: str, problems: list[Problem], at: Any) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(Problem(at(key), key, "expected a list"))
        return []
    return value


def _rule(item: Any, where: str, at: Any, problems: list[Problem]) -> SiteRule | None:
    parts = tuple(where.split("."))
    if not isinstance(item, dict):
        problems.append(Problem(at(*parts), where, "expected a mapping with id, key, message and a check"))
        return None
    bad = len(problems)
    for k in item:
        if k not in RULE_KEYS:
            problems.append(Problem(at(*parts, str(k)), f"{where}.{k}", f"unknown key (expected one of "
                                    f"{', '.join(RULE_KEYS)})"))
    for k in ("id", "key", "message"):
        if not isinstance(item.get(k), str) or not item[k]:
            problems.append(Problem(at(*parts, k), f"{where}.{k}", "missing: a string"))
    key = item.get("key")
    if isinstance(key, str) and key.startswith("job.") and key not in JOB_KEYS:
        problems.append(Problem(at(*parts, "key"), f"{where}.key", f"{key} is not a value ntui works out "
                                f"(one of {', '.join(JOB_KEYS)}; or a preset key, e.g. sbatch.nodes)"))
    elif isinstance(key, str) and key in JOB_KEYS and "required" in item:
        problems.append(Problem(at(*parts, "required"), f"{where}.required", f"{key} is judged only where ntui "
                                "knows it: give max, min, one-of or forbid"))
    if isinstance(item.get("message"), str) and (bad_text := _placeholder_problem(item["message"])):
        problems.append(Problem(at(*parts, "message"), f"{where}.message", bad_text))
    if not any(k in item for k in ("max", "min", "one-of", "forbid", "required")):
        problems.append(Problem(at(*parts), where, "no check: give max, min, one-of, forbid or required"))
    numbers: dict[str, float] = {}
    for k in ("max", "min"):
        if k in item:
            if isinstance(item[k], bool) or not isinstance(item[k], (int, float)):
                problems.append(Problem(at(*parts, k), f"{where}.{k}", "expected a number"))
            else:
                numbers[k] = float(item[k])
    lists: dict[str, tuple[str, ...]] = {}
    for k in ("one-of", "forbid"):
        if k in item:
            if not isinstance(item[k], list):
                problems.append(Problem(at(*parts, k), f"{where}.{k}", "expected a list of values"))
            else:
                lists[k] = tuple(_text(v) for v in item[k])
    severity = item.get("severity", "error")
    if severity not in ("error", "warning"):
        problems.append(Problem(at(*parts, "severity"), f"{where}.severity", "expected error or warning"))
    when = item.get("when") or {}
    if not isinstance(when, dict):
        problems.append(Problem(at(*parts, "when"), f"{where}.when", "expected a mapping of dotted keys to values"))
        when = {}
    wanted: list[tuple[KeyPath, tuple[str | None, ...]]] = []
    for k, v in when.items():
        values = v if isinstance(v, list) else [v]
        if not values or any(isinstance(x, (dict, list)) for x in values):
            problems.append(Problem(at(*parts, "when", str(k)), f"{where}.when.{k}", "expected a value, a list of "
                                    "values (any of them) or null (not set)"))
            continue
        wanted.append((tuple(str(k).split(".")), tuple(None if x is None else _text(x) for x in values)))
    if len(problems) > bad:
        return None
    return SiteRule(
        id=item["id"], key=tuple(item["key"].split(".")), message=item["message"],
        severity=Severity.ERROR if severity == "error" else Severity.WARNING,
        max=numbers.get("max"), min=numbers.get("min"), one_of=lists.get("one-of"), forbid=lists.get("forbid", ()),
        required=item.get("required") is True, when=tuple(wanted),
    )


def _placeholder_problem(message: str) -> str | None:
    """What is wrong with a message's placeholders (None: nothing)."""
    for m in _PLACEHOLDER.finditer(message):
        name = m.group(1)
        if m.group(0) in ("{{", "}}") or name == "value" or name in JOB_KEYS:
            continue
        if name is None:
            return "a lone { or }: write {{ or }} for a brace"
        known = ", ".join("{" + k + "}" for k in JOB_KEYS)
        return f"{{{name}}} is not a placeholder: write {{value}} (the value judged) or a job value ({known})"
    return None


def _say(message: str, values: Mapping[str, str]) -> str:
    """``message`` with its placeholders filled (a job value ntui does not know: ``?``)."""
    def fill(m: re.Match[str]) -> str:
        text = m.group(0)
        return text[0] if text in ("{{", "}}") else values.get(m.group(1) or "", "?")

    return _PLACEHOLDER.sub(fill, message)


def _applies(got: Any, wanted: tuple[str | None, ...]) -> bool:
    """A ``when`` condition: the preset's value is one of those wanted (absent or false: null)."""
    if got is None or got is False:
        return None in wanted or (got is False and "false" in wanted)
    return _text(got) in wanted


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _value(data: Any, key: KeyPath) -> Any:
    cur = data
    for part in key:
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def site_problems(site: Site, loaded: LoadedPreset, job: JobValues | None = None) -> list[Problem]:
    """What the site says of a preset (its site defaults merged): every locked key changed, every site rule broken.
    Each problem sits where the value was written and ends with the site's rule id (locks: ``site``). ``job``: the
    values ntui worked out of the preset (:data:`JOB_KEYS`); a rule on one it does not hold is not judged."""
    data = loaded.data
    job = job or {}
    out: list[Problem] = []
    for key, lock_src in site.locked.items():
        wanted, got = _value(site.defaults, key), _value(data, key)
        if _text(got) != _text(wanted) or (got is None) != (wanted is None):
            where = loaded.source_of(key)
            shown = "nothing" if wanted is None else repr(_text(wanted))
            out.append(Problem(where, ".".join(key), f"locked by the site at {lock_src.file}:{lock_src.line}: "
                               f"must be {shown} (site)"))
    said = {name: str(value) for name, (value, _) in job.items()}
    for rule in site.rules:
        if not all(_applies(_value(data, k), v) for k, v in rule.when):
            continue
        name = ".".join(rule.key)
        if name in JOB_KEYS:
            if name not in job:
                continue
            value, at_key = job[name]
        else:
            value, at_key = _value(data, rule.key), rule.key
        if _breaks(rule, value):
            message = _say(rule.message, {**said, "value": "" if value is None else _text(value)})
            out.append(Problem(loaded.source_of(at_key), ".".join(at_key), f"{message} ({rule.id})", rule.severity,
                               rule=rule.id))
    return out


def _breaks(rule: SiteRule, value: Any) -> bool:
    if value is None or value is False:
        return rule.required
    text = _text(value)
    if rule.forbid and text in rule.forbid:
        return True
    if rule.one_of is not None and text not in rule.one_of:
        return True
    if rule.max is not None or rule.min is not None:
        try:
            n = float(text)
        except ValueError:
            return False  # not a number: the preset's own checks say so
        return (rule.max is not None and n > rule.max) or (rule.min is not None and n < rule.min)
    return False


def value_origin(site: Site | None, sources: Mapping[KeyPath, Source], key: KeyPath) -> str:
    """Where a preset's value for ``key`` comes from: ``site`` (its site.yaml; ``site, locked`` when the site locks
    it), ``--set``, ``preset`` (the preset file or one it extends), or ``default`` (nothing sets it: ntui's own)."""
    if site is not None and key in site.locked:
        return "site, locked"
    src = sources.get(key)
    if src is None:
        return "default"
    if site is not None and src.file == str(site.file):
        return "site"
    if src.file.startswith("--set"):
        return "--set"
    return "preset"
