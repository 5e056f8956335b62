"""Screens: one per view (compose, jobs ...), plus dialogs. Views register in ``ntui.ui.app.VIEWS``."""
