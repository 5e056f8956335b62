"""YAML loading that remembers the line of every key (``yaml.safe_load`` semantics)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ntui.core.problems import PresetError, Problem, Source

KeyPath = tuple[str, ...]

MAX_PRESET_BYTES = 1_000_000


def _walk(node: yaml.Node, prefix: KeyPath, lines: dict[KeyPath, int], raw: dict[KeyPath, str]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                path = (*prefix, str(key_node.value))
                lines[path] = key_node.start_mark.line + 1
                _walk(value_node, path, lines, raw)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            path = (*prefix, str(i))
            lines[path] = item.start_mark.line + 1
            _walk(item, path, lines, raw)
    elif isinstance(node, yaml.ScalarNode):
        # The scalar exactly as written (after YAML quoting), so that `yes`, `0.10` or `1e3`
        # reach a program verbatim instead of as True, 0.1 or 1000.0.
        raw[prefix] = str(node.value)


@dataclass(frozen=True)
class YamlDoc:
    data: Any
    lines: dict[KeyPath, int]
    raw: dict[KeyPath, str]


def load_yaml_with_lines(text: str, filename: str) -> YamlDoc:
    """Parse ``text`` safely; return the data, the 1-based line of every key and raw scalars.

    Raises ``ValueError`` carrying a :class:`Problem` (file and line of the syntax error).
    """
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.AliasToken):
                # An alias is a reference; a few nested ones expand exponentially (a "billion
                # laughs" bomb). Presets don't need them: `extends` shares settings.
                raise YamlProblem(
                    Problem(Source(filename, token.start_mark.line + 1), "",
                            "YAML aliases (*name) are not allowed in presets; use extends")
                )
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        # an unclosed bracket or a key without its colon is noticed on a later line: the line at fault is
        # where the construct began ("while parsing a flow sequence" / "while scanning a simple key")
        # (not "while parsing a block mapping": its start is not the fault, the bad indentation is)
        context = getattr(exc, "context_mark", None)
        started = str(getattr(exc, "context", "") or "")
        if (context is not None and mark is not None and context.line < mark.line
                and started.startswith(("while parsing a flow", "while scanning"))):
            line = context.line + 1
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlProblem(Problem(Source(filename, line), "", f"YAML syntax error: {reason}")) from None
    lines: dict[KeyPath, int] = {}
    raw: dict[KeyPath, str] = {}
    if node is not None:
        _walk(node, (), lines, raw)
    return YamlDoc(data, lines, raw)


class YamlProblem(ValueError):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def read_preset_text(path: str) -> str:
    """Read a preset file as text, refusing huge or binary files with a clear problem."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_PRESET_BYTES + 1)
    except OSError as exc:
        raise YamlProblem(Problem(Source(path), "", f"cannot read: {exc.strerror}")) from None
    if len(raw) > MAX_PRESET_BYTES:
        raise YamlProblem(Problem(Source(path), "", f"file is larger than {MAX_PRESET_BYTES} bytes"))
    if b"\x00" in raw:
        raise YamlProblem(Problem(Source(path), "", "binary file (contains NUL bytes), not YAML"))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YamlProblem(Problem(Source(path, line), "", "not valid UTF-8 text")) from None


def load_yaml_file(path: str) -> YamlDoc:
    """A preset-like file (a preset, site.yaml) read and parsed with its lines; PresetError naming file and line."""
    try:
        return load_yaml_with_lines(read_preset_text(path), path)
    except YamlProblem as exc:
        raise PresetError([exc.problem]) from None


@dataclass
class LoadedPreset:
    """A preset after ``extends`` and overrides, before validation."""

    name: str
    path: Path | None
    data: dict[str, Any]
    sources: dict[KeyPath, Source] = field(default_factory=dict)
    raw: dict[KeyPath, str] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    site: Any = None
    """The site layer merged under it (:class:`ntui.core.compose.site.Site`), whose locks and rules validation
    checks; None without a site."""

    def source_of(self, path: KeyPath) -> Source:
        """The nearest recorded source of ``path`` (or of its closest parent)."""
        for i in range(len(path), 0, -1):
            src = self.sources.get(path[:i])
            if src is not None:
                return src
        return Source(str(self.path) if self.path else "<preset>", 0)
