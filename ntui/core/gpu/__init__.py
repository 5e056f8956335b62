"""GPU usage: live readings of a running job and the statistics of its whole run.

nvidia-smi's fields, the watch step's argv and parser and the board of latest readings (``smi``), the overlapping
watch step (``stream``), a job's own sample files as live readings (``samples``, read by ``sampletail``), the
statistics and findings of a run (``usage``) and the heatmap of a big job (``heatmap``).
"""
