"""Every Slurm interaction ntui makes: pure argv builders, pure parsers, thin typed runners.

Each interaction is three pieces:

* ``build_*_argv(...) -> list[str]``: the exact command (no shell, values validated so that nothing a user
  typed can turn into an option);
* ``parse_*(...)``: a pure function from Slurm's text to frozen dataclasses (tested on real captures from
  Slurm 22.05.8 in ``tests/data/slurm/``);
* a function taking a :class:`~ntui.core.slurm.runner.CommandRunner` that runs both with a timeout and raises the
  typed errors of :mod:`ntui.core.slurm.runner`.

RPC cost (each Slurm client call is at least one slurmctld RPC): ``query_queue`` 1, ``show_job`` 1 (call it
for the selected job only, and cache), actions 1 each, ``slurm_version`` 0 (local), ``list_partitions`` 1,
``user_associations`` / ``final_state`` go to slurmdbd instead.

One module per command (import from it directly; this package re-exports nothing, so a command loads only
the clients it uses): :mod:`~ntui.core.slurm.runner` (the one way to run a command: argv, timeout, typed errors),
:mod:`~ntui.core.slurm.common` (timeouts, durations, timestamps, job states, job IDs),
:mod:`~ntui.core.slurm.version` (the installed release, what differs by it), :mod:`~ntui.core.slurm.sbatch`
(submit, ``--test-only``), :mod:`~ntui.core.slurm.squeue` (the queue, start estimates),
:mod:`~ntui.core.slurm.scontrol` (job details, a job's dependencies, partitions, configuration, key=value records),
:mod:`~ntui.core.slurm.actions` (``scancel``, ``scontrol hold|release|requeue``), :mod:`~ntui.core.slurm.srun`
(overlapping steps), :mod:`~ntui.core.slurm.sinfo` (partitions, node states), :mod:`~ntui.core.slurm.sprio`
(priority factors), :mod:`~ntui.core.slurm.sacctmgr` (accounts, QOS, limits), :mod:`~ntui.core.slurm.sacct`
(final states, step usage), :mod:`~ntui.core.slurm.sdiag` (RPC counts).
"""
