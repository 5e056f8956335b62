"""ellipsize: the one way text is cut to a width."""

from __future__ import annotations

import pytest

from ntui.core.textsafe import ellipsize


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("abcdef", 6, "abcdef"),  # fits: unchanged
        ("abcdef", 10, "abcdef"),
        ("abcdefg", 6, "abcde…"),  # cut: the mark takes the last cell
        ("abcdef", 1, "…"),
        ("abcdef", 0, ""),
        ("abcdef", -3, ""),
        ("", 0, ""),
    ],
)
def test_ellipsize(text: str, width: int, expected: str) -> None:
    assert ellipsize(text, width) == expected


def test_ellipsize_never_longer_than_the_width() -> None:
    text = "x" * 50
    for width in range(0, 60):
        assert len(ellipsize(text, width)) == min(max(width, 0), 50)
