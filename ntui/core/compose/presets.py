"""Preset discovery, loading, ``extends`` merging and ``--set`` overrides.

A preset is a YAML mapping (see README "Preset format"). Loading keeps, for every key, the
file and line it came from, and the raw text of every scalar, so that problems can name
``file:line: field`` and string values reach programs verbatim.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ntui.core.compose.rules import problem as rule_problem
from ntui.core.compose.site import Site, load_site, site_dir
from ntui.core.compose.spec import validate
from ntui.core.compose.yamlsrc import KeyPath, LoadedPreset, YamlProblem, load_yaml_file, load_yaml_with_lines
from ntui.core.paths import shipped_dir, user_presets_dir
from ntui.core.problems import PresetError, Problem, Source

PRESET_SUFFIXES = (".yaml", ".yml")
SET_SOURCE = "--set"


@dataclass(frozen=True)
class PresetInfo:
    name: str
    path: Path
    origin: str  # "user" | "site" | "shipped"
    description: str = ""
    launcher: str = ""
    problem: str = ""


def preset_dirs() -> list[tuple[str, Path]]:
    """Search order: the user's directory first, then the site's (core/compose/site.py), then the shipped ones."""
    directory = site_dir()
    site = [("site", directory / "presets")] if directory is not None else []
    return [("user", user_presets_dir()), *site, ("shipped", shipped_dir("presets"))]


def current_site() -> Site | None:
    """The site layer in effect (None: no site directory). Raises PresetError for a damaged ``site.yaml``."""
    directory = site_dir()
    return load_site(directory) if directory is not None else None


def _under_site(loaded: LoadedPreset, site: Site) -> None:
    """The site's defaults under the preset: a key the preset (or its extends chain) writes wins, unless locked,
    which validation says (site_problems)."""
    merged = deep_merge(site.defaults, loaded.data)
    loaded.sources = _prune(merged, {**site.sources, **loaded.sources})
    loaded.raw = _prune(merged, {**site.raw, **loaded.raw})
    loaded.data = merged
    loaded.site = site


def _iter_preset_files(directory: Path) -> Iterator[Path]:
    if not directory.is_dir():
        return
    for p in sorted(directory.iterdir()):
        if p.suffix in PRESET_SUFFIXES and p.is_file() and not p.name.startswith("."):
            yield p


def list_presets() -> list[PresetInfo]:
    """Every preset, user ones shadowing shipped ones of the same name; broken ones included."""
    seen: set[str] = set()
    out: list[PresetInfo] = []
    for origin, directory in preset_dirs():
        for path in _iter_preset_files(directory):
            name = path.stem
            if name in seen:
                continue
            seen.add(name)
            try:
                loaded = load_preset(str(path))
            except PresetError as exc:
                out.append(PresetInfo(name, path, origin, problem=str(exc.problems[0])))
                continue
            launcher = loaded.data.get("launcher", {})
            ltype = launcher.get("type", "") if isinstance(launcher, dict) else ""
            _, problems = validate(loaded)
            first = next((p for p in problems if p.is_error), None)
            out.append(
                PresetInfo(name, path, origin, str(loaded.data.get("description", "")), str(ltype),
                           problem=str(first) if first else "")
            )
    return out


def find_preset(ref: str, relative_to: Path | None = None) -> Path:
    """Resolve a preset name or path. Raises PresetError naming where it looked."""
    candidate = Path(ref).expanduser()
    if candidate.suffix in PRESET_SUFFIXES or "/" in ref:
        if not candidate.is_absolute() and relative_to is not None:
            sibling = relative_to / candidate
            if sibling.is_file():
                return sibling.resolve()
        if candidate.is_file():
            return candidate.resolve()
        raise PresetError([Problem(Source(ref), "", "no such preset file")])
    dirs = ([relative_to] if relative_to is not None else []) + [d for _, d in preset_dirs()]
    for directory in dirs:
        for suffix in PRESET_SUFFIXES:
            p = directory / f"{ref}{suffix}"
            if p.is_file():
                return p.resolve()
    looked = ", ".join(str(d) for d in dirs)
    raise PresetError([Problem(Source(ref), "", f"no preset named {ref!r} (looked in {looked})")])


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key; anything else (lists included) is replaced."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _exists(data: Any, path: KeyPath) -> bool:
    cur = data
    for part in path:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return False
    return True


def _prune(merged: dict[str, Any], table: dict[KeyPath, Any]) -> dict[KeyPath, Any]:
    return {k: v for k, v in table.items() if _exists(merged, k)}


class _ExtendsCycle(Exception):
    pass


def _load_chain(path: Path, chain: tuple[Path, ...]) -> LoadedPreset:
    fname = str(path)
    doc = load_yaml_file(fname)
    if doc.data is None:
        raise PresetError([Problem(Source(fname, 1), "", "empty preset (expected a YAML mapping)")])
    if not isinstance(doc.data, dict):
        raise PresetError(
            [Problem(Source(fname, 1), "", f"expected a YAML mapping, got {type(doc.data).__name__}")]
        )
    data: dict[str, Any] = {str(k): v for k, v in doc.data.items()}
    sources = {k: Source(fname, line) for k, line in doc.lines.items()}
    raw = dict(doc.raw)
    parent_ref = data.pop("extends", None)
    if parent_ref is not None:
        src = sources.get(("extends",), Source(fname))
        if not isinstance(parent_ref, str) or not parent_ref:
            raise PresetError([Problem(src, "extends", "expected the name or path of another preset")])
        try:
            parent_path = find_preset(parent_ref, relative_to=path.parent)
        except PresetError as exc:
            raise PresetError([Problem(src, "extends", str(exc.problems[0].message))]) from None
        if parent_path in (*chain, path):
            cycle_text = " -> ".join(str(p) for p in (*chain, path, parent_path))
            if not chain:
                raise PresetError([Problem(src, "extends", f"cycle in extends: {cycle_text}")])
            raise _ExtendsCycle(cycle_text)
        try:
            parent = _load_chain(parent_path, (*chain, path))
        except _ExtendsCycle as cycle:
            if chain:
                raise
            # Reported at the `extends` line of the preset the user asked for.
            raise PresetError([Problem(src, "extends", f"cycle in extends: {cycle}")]) from None
        parent.data.pop("name", None)
        merged = deep_merge(parent.data, data)
        sources = _prune(merged, {**parent.sources, **sources})
        raw = _prune(merged, {**parent.raw, **raw})
        data = merged
    return LoadedPreset(str(data.get("name") or path.stem), path, data, sources, raw)


def load_preset(ref: str, overrides: Iterable[str] = ()) -> LoadedPreset:
    """Load a preset by name or path, apply ``extends`` then ``--set`` overrides."""
    path = find_preset(ref)
    loaded = _load_chain(path, ())
    site = current_site()
    if site is not None:
        _under_site(loaded, site)
    overrides = tuple(overrides)
    if overrides:
        apply_overrides(loaded, overrides)
    return loaded


def parse_override(item: str) -> tuple[KeyPath, Any, dict[KeyPath, str]]:
    """``sbatch.nodes=4`` -> (("sbatch","nodes"), 4, raw scalars). Values are YAML."""
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise PresetError([Problem(Source(SET_SOURCE), item, "expected KEY=VALUE, e.g. sbatch.nodes=4")])
    path = tuple(p for p in key.strip().split("."))
    if any(not p for p in path):
        raise PresetError([Problem(Source(SET_SOURCE), key, "empty component in dotted key")])
    if text == "":
        return path, "", {(): ""}
    try:
        doc = load_yaml_with_lines(text, SET_SOURCE)
        value, raw = doc.data, doc.raw
    except YamlProblem:
        value, raw = text, {(): text}
    if value is None or (isinstance(value, str) and text.strip()[:1] not in ("'", '"')):
        # A plain scalar stays exactly as typed: `--set sbatch.job-name=my job #1` keeps its `#1`.
        value, raw = text, {(): text}
    return path, value, raw


def apply_overrides(loaded: LoadedPreset, overrides: Iterable[str]) -> None:
    problems: list[Problem] = []
    for item in overrides:
        try:
            path, value, raw = parse_override(item)
        except PresetError as exc:
            problems.extend(exc.problems)
            continue
        if path == ("extends",):
            problems.append(rule_problem(
                "V6", Source(SET_SOURCE), "extends",
                "extends is resolved when the preset file is read, so --set cannot change it; write a preset "
                "with `extends:` instead",
            ))
            continue
        cur: Any = loaded.data
        ok = True
        for part in path[:-1]:
            nxt = cur.get(part) if isinstance(cur, dict) else None
            if nxt is None:
                nxt = {}
                cur[part] = nxt
            if not isinstance(nxt, dict):
                problems.append(
                    Problem(Source(SET_SOURCE), ".".join(path), f"{part!r} is not a mapping")
                )
                ok = False
                break
            cur = nxt
        if not ok:
            continue
        cur[path[-1]] = value
        src = Source(f"{SET_SOURCE} {item.partition('=')[0]}")
        for k in list(loaded.sources):
            if k[: len(path)] == path:
                del loaded.sources[k]
        for k in list(loaded.raw):
            if k[: len(path)] == path:
                del loaded.raw[k]
        loaded.sources[path] = src
        for sub, text in raw.items():
            loaded.raw[path + sub] = text
        loaded.overrides = (*loaded.overrides, item)
    if problems:
        raise PresetError(problems)
