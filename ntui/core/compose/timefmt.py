"""Slurm's time forms are :mod:`ntui.core.slurm.durations`'s. This module is empty; it stays only while the
import-linter contract of compose's layers names it."""
