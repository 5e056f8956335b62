"""Widgets of the compose view. ``form_model`` and ``preset_files`` are Textual-free helpers."""
