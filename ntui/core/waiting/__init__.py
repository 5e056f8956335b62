"""Waiting: between a job's submission and its result.

Why a pending job waits, in words, with its start estimate and what the reason needs (``why``; Slurm's reasons
in words: ``reasons``), what shape of it would start sooner (``whatif``: a few ``sbatch --test-only`` of the real
script with one change each), a word when one of the user's jobs starts or ends (``notify``: the transitions and
the terminal's bell and OSC 9/777 notifications), and following jobs to their end without the app (``follow``).
"""
