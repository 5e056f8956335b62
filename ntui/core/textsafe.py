"""Making text from elsewhere safe to show in a terminal (log lines, job names, reasons, paths).

:func:`clean_line` turns the bytes of one log line into display text: no escape sequence or control
character survives (nothing can move the cursor or set the terminal title), ``\\r`` progress bars keep
their last state, lines are capped for display (``… [+N bytes]``). :class:`LineAccumulator` builds one line
across read chunks keeping only its head, so a 10 MB line costs ``cap`` bytes. :func:`inert` does the same
for a one-line value that is already text; :func:`without_escapes` takes off the sequences only.
:func:`ellipsize` is the one way text is cut to a width: the cut is marked with ``…``.
"""

from __future__ import annotations

import re

__all__ = ["DISPLAY_CAP", "LineAccumulator", "clean_line", "ellipsize", "inert", "without_escapes"]

DISPLAY_CAP = 64 * 1024

_SEQUENCES = (
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI (also unterminated)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC (title, hyperlinks ...) to BEL / ST / end
    r"|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # 8-bit OSC
    r"|\x1b[PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # DCS, SOS, PM, APC
    r"|[\x90\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # 8-bit DCS, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]?"  # any other ESC sequence (or a lone ESC)
)
_ESC_RE = re.compile(
    _SEQUENCES
    + r"|[\x00-\x08\x0a-\x1f\x7f-\x9f]"  # remaining C0 (tab kept) and C1 controls, DEL
)
_SEQ_RE = re.compile(_SEQUENCES)


def clean_line(raw: bytes, *, max_bytes: int = DISPLAY_CAP, dropped: int = 0) -> str:
    """Bytes of one line (newline optional) -> safe display text.

    UTF-8 with ``errors="replace"``; one trailing ``\\r`` (CRLF) is dropped, then only the text after the
    last ``\\r`` is kept (progress bars); lines longer than ``max_bytes`` are cut with ``… [+N bytes]``
    (``dropped`` is added to N: bytes the caller already left out); escape sequences (CSI, OSC incl.
    ``ESC ] 0 ; title BEL``, DCS ...) and control characters other than tab are removed.
    """
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    cr = raw.rfind(b"\r")
    if cr >= 0:
        raw = raw[cr + 1 :]
    extra = dropped
    if len(raw) > max_bytes:
        extra += len(raw) - max_bytes
        raw = raw[:max_bytes]
    text = _ESC_RE.sub("", raw.decode("utf-8", errors="replace"))
    if extra:
        text += f" … [+{extra} bytes]"
    return text


def inert(text: str) -> str:
    """Text from elsewhere (job names, reasons, paths) made safe to print on one line: no escape
    sequence or control character (newlines included) survives."""
    return _ESC_RE.sub("", text)


def without_escapes(text: str) -> str:
    """``text`` without its terminal escape sequences (colours, cursor moves, titles), the sequences
    :func:`inert` takes off, its control characters kept (a reader that splits at ``\\r`` after this)."""
    return _SEQ_RE.sub("", text)


def ellipsize(text: str, width: int) -> str:
    """``text`` if it fits in ``width`` characters, else its head and ``…``, ``width`` characters in all
    (nothing for a width under one)."""
    if len(text) <= width:
        return text
    return text[: width - 1] + "…" if width > 0 else ""


class LineAccumulator:
    """Accumulates one line's bytes across chunks: keeps the head after the last ``\\r`` up to a cap."""

    __slots__ = ("cap", "dropped", "head", "pending_cr")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.dropped = 0
        self.pending_cr = False

    def feed(self, data: bytes) -> None:
        if not data:
            return
        if self.pending_cr:  # that \r was not the end of the line: a real carriage return
            self.head.clear()
            self.dropped = 0
            self.pending_cr = False
        if data[-1] == 0x0D:
            data = data[:-1]
            self.pending_cr = True
        cr = data.rfind(b"\r")
        if cr >= 0:
            self.head.clear()
            self.dropped = 0
            data = data[cr + 1 :]
        room = self.cap - len(self.head)
        if room >= len(data):
            self.head += data
        else:
            if room > 0:
                self.head += data[:room]
            self.dropped += len(data) - max(room, 0)

    def text(self) -> str:
        return clean_line(bytes(self.head), max_bytes=self.cap, dropped=self.dropped)

    def take(self) -> str:
        out = self.text()
        self.head = bytearray()
        self.dropped = 0
        self.pending_cr = False
        return out

    def empty(self) -> bool:
        return not self.head and not self.dropped


