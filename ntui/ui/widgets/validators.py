"""The one adapter from the core's plain checks to Textual validators.

The core's rules are plain callables (``str -> message | None``); subclassing ``Validator`` in the core
would bind Textual at import time, so the binding happens here (harlequin's pattern).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.validation import ValidationResult, Validator


class CoreCheck(Validator):
    """Wrap ``check(text) -> error message or None`` as a Textual validator."""

    def __init__(self, check: Callable[[str], str | None], description: str | None = None) -> None:
        super().__init__(failure_description=description)
        self.check = check

    def validate(self, value: str) -> ValidationResult:
        message = self.check(value)
        return self.success() if message is None else self.failure(message)
