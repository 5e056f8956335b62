"""Writing to the terminal past Textual's frames: the bell and desktop notifications (OSC 9 / 777) that
:mod:`ntui.core.waiting.notify` spells.

Through the app's driver, as Textual itself writes its own OSC sequences (``App.copy_to_clipboard``'s OSC 52, the
bell of ``App.bell``): never ``print()`` while the app runs. Nothing is written by a headless app (tests and
screenshots); a test sets :data:`CAPTURE` on the app (``app.terminal_capture = list``) to see the bytes.
"""

from __future__ import annotations

import os
from typing import Any

from ntui.core.config import NotifySettings
from ntui.core.waiting.notify import Notice, terminal_bytes, wanted

__all__ = ["CAPTURE", "announce"]

#: The app attribute a test sets to a list to receive what would be written.
CAPTURE = "terminal_capture"


def write(app: Any, text: str) -> None:
    """Write ``text`` to the app's terminal (see the module docstring)."""
    if not text:
        return
    capture = getattr(app, CAPTURE, None)
    if isinstance(capture, list):
        capture.append(text)
        return
    driver = getattr(app, "_driver", None)
    if driver is None or app.is_headless:
        return
    driver.write(text)
    driver.flush()


def announce(app: Any, notice: Notice, settings: NotifySettings) -> bool:
    """Tell ``notice`` (when ``settings.states`` want it): a toast in the app, and the bell and desktop
    notification as set. True when it was told."""
    if not wanted(notice, settings.states):
        return False
    severity = ("information" if notice.event == "started" or notice.state == "COMPLETED"
                else "warning" if notice.event == "requeued" else "error")
    app.notify(notice.body or notice.title, title=notice.title.removeprefix("ntui: "), severity=severity,
               timeout=10)
    write(app, terminal_bytes(notice, bell_on=settings.bell, desktop=settings.desktop, environ=os.environ))
    return True
