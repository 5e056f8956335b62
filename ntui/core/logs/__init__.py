"""Logs and triage: reading every rank's log without loading whole files, and naming who failed first.

Offset tails with held descriptors and budgets (``tail``), the job log watcher and its polite scheduler
(``watch``), the failure detectors (``triage``), which signals are a rank's own fault (``signals``), a failure's
verdict, Slurm's word first (``verdict``), a job's logs as a whole (``joblogs``) and the log pane's rank table
(``ranktable``).
"""
