"""Every notification an app under test made, in order: Textual's own list (``App._notifications``) drops one once its
time is up (5 s by default), and a loaded machine's settling can outlast that, so a test that read it could miss a
notification that was made. ``tests/conftest.py`` records each one as the app receives it."""

from __future__ import annotations

from typing import Any

from textual.notifications import Notification

#: the attribute the recording keeps them in (on the app instance)
ATTR = "_ntui_test_notified"


def notified(app: Any) -> list[Notification]:
    """The app's notifications so far, expired ones included."""
    return list(getattr(app, ATTR, ()))
