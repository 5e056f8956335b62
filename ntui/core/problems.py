"""Problems found in presets and overrides, each naming its file, line and field."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Source:
    """Where a value came from: a file and a 1-based line (0 when unknown)."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class Problem:
    """One problem with a preset value.

    ``str(problem)`` reads ``presets/x.yaml:12: sbatch.nodes: expected a positive integer, got "two"``.
    """

    source: Source
    field: str
    message: str
    severity: Severity = Severity.ERROR
    rule: str = ""
    """The id of the rule (``ntui.core.compose.rules``) that found it; empty for plain type/syntax problems."""

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source.file else ""
        what = f"{self.field}: " if self.field else ""
        set_key = self.source.file.removeprefix("--set ") if self.source.file.startswith("--set ") else None
        if set_key is not None and self.field and (self.field == set_key or self.field.startswith(set_key + ".")):
            # the field is named once: "--set sbatch.nodes: 3 nodes ...", "--set launcher.extra-args.0: ..."
            where, what = f"--set {self.field}: ", ""
        tag = "warning: " if self.severity is Severity.WARNING else ""
        return f"{where}{tag}{what}{self.message}"

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


class PresetError(Exception):
    """Raised with every problem at once, never just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.is_error]
