"""ntui's Textual-free core: presets, validation, rendering, Slurm calls, logs, GPUs.

Nothing under this package may import ``textual`` (a test runs the imports in a fresh
interpreter and checks ``sys.modules``).
"""
