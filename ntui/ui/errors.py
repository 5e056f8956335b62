"""The UI's error wording is the core's: :func:`ntui.core.errors.describe_error`, which the app, views and panes import
directly. This module is empty; it stays only while the import-linter contract of the UI's layers names it."""
