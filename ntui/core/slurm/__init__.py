"""Every Slurm interaction ntui makes: pure argv builders, pure parsers, thin typed runners.

Each interaction is three pieces:

* ``build_*_argv(...) -> list[str]``: the exact command (no shell, values validated so that nothing a user
  typed can turn into an option);
* ``parse_*(...)``: a pure function from Slurm's text to frozen dataclasses (tested on real captures from
  Slurm 22.05.8 in ``tests/data/slurm/``);
* a function taking a :class:`~ntui.core.runner.CommandRunner` that runs both with a timeout and raises the
  typed errors of :mod:`ntui.core.runner`.

RPC cost (each Slurm client call is at least one slurmctld RPC): ``query_queue`` 1, ``show_job`` 1 (call it
for the selected job only, and cache), actions 1 each, ``slurm_version`` 0 (local), ``list_partitions`` 1,
``user_associations`` / ``final_state`` go to slurmdbd instead.

One module per command; this package re-exports every public name, so ``from ntui.core.slurm import X`` and
``slurm.X`` work for all of them: :mod:`~ntui.core.slurm.common` (timeouts, durations, timestamps, job states,
job IDs), :mod:`~ntui.core.slurm.sbatch` (submit, ``--test-only``), :mod:`~ntui.core.slurm.squeue` (the queue),
:mod:`~ntui.core.slurm.scontrol` (job details, partitions, key=value records), :mod:`~ntui.core.slurm.actions`
(``scancel``, ``scontrol hold|release|requeue``), :mod:`~ntui.core.slurm.sinfo` (version, partitions, node
states), :mod:`~ntui.core.slurm.sacctmgr` (accounts, QOS), :mod:`~ntui.core.slurm.sacct` (final state),
:mod:`~ntui.core.slurm.sdiag` (RPC counts).
"""

from __future__ import annotations

from ntui.core.slurm.actions import (
    build_hold_argv,
    build_release_argv,
    build_requeue_argv,
    build_scancel_argv,
    cancel,
    hold,
    release,
    requeue,
)
from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    STATE_CODES,
    SUBMIT_TIMEOUT,
    StateCategory,
    normalize_state,
    parse_duration,
    parse_timestamp,
    state_category,
    validate_job_id,
)
from ntui.core.slurm.sacct import (
    RECORD_FIELDS,
    AccountingRecord,
    SacctRecord,
    SacctUnavailable,
    accounting_disabled,
    build_sacct_jobs_argv,
    build_sacct_since_argv,
    final_state,
    parse_sacct_records,
    sacct_jobs,
    sacct_since,
)
from ntui.core.slurm.sacctmgr import (
    Associations,
    build_sacctmgr_assoc_argv,
    parse_sacctmgr_assoc,
    user_associations,
)
from ntui.core.slurm.sbatch import (
    Submission,
    TestOnlyResult,
    build_sbatch_argv,
    build_test_only_argv,
    parse_sbatch_parsable,
    parse_sbatch_test_only,
    submit,
    test_only,
)
from ntui.core.slurm.scontrol import (
    FREE_TEXT_KEYS,
    KNOWN_KEYS,
    JobDetails,
    Partition,
    build_scontrol_partitions_argv,
    build_show_job_argv,
    list_partitions,
    parse_gres_indices,
    parse_key_values,
    parse_scontrol_jobs,
    parse_scontrol_partitions,
    show_job,
)
from ntui.core.slurm.sdiag import (
    build_sdiag_argv,
    parse_sdiag_rpc_by_type,
    parse_sdiag_rpc_by_user,
    rpc_counts_by_user,
)
from ntui.core.slurm.sinfo import (
    NODE_STATE_SEPARATOR,
    SINFO_SEPARATOR,
    NodeState,
    build_node_states_argv,
    build_sinfo_partitions_argv,
    build_version_argv,
    node_states,
    parse_node_states,
    parse_sinfo_partitions,
    parse_version,
    sinfo_partitions,
    slurm_version,
)
from ntui.core.slurm.squeue import (
    SQUEUE_FIELDS,
    SQUEUE_SEPARATOR,
    QueueJob,
    build_squeue_argv,
    parse_squeue,
    parse_tres,
    probe_squeue_fields,
    query_queue,
    run_squeue,
)

#: The old name of the sinfo partition record; sinfo and scontrol now give the same :class:`Partition`.
SinfoPartition = Partition

__all__ = [
    "AccountingRecord",
    "Associations",
    "DEFAULT_TIMEOUT",
    "FREE_TEXT_KEYS",
    "JobDetails",
    "KNOWN_KEYS",
    "NODE_STATE_SEPARATOR",
    "NodeState",
    "Partition",
    "QueueJob",
    "SINFO_SEPARATOR",
    "SQUEUE_FIELDS",
    "SQUEUE_SEPARATOR",
    "STATE_CODES",
    "SUBMIT_TIMEOUT",
    "SinfoPartition",
    "StateCategory",
    "Submission",
    "TestOnlyResult",
    "build_hold_argv",
    "build_node_states_argv",
    "build_release_argv",
    "build_requeue_argv",
    "build_sacct_jobs_argv",
    "build_sacct_since_argv",
    "RECORD_FIELDS",
    "SacctRecord",
    "SacctUnavailable",
    "accounting_disabled",
    "sacct_jobs",
    "sacct_since",
    "build_sacctmgr_assoc_argv",
    "build_sbatch_argv",
    "build_scancel_argv",
    "build_scontrol_partitions_argv",
    "build_sdiag_argv",
    "build_show_job_argv",
    "build_sinfo_partitions_argv",
    "build_squeue_argv",
    "build_test_only_argv",
    "build_version_argv",
    "cancel",
    "final_state",
    "hold",
    "list_partitions",
    "node_states",
    "normalize_state",
    "parse_duration",
    "parse_gres_indices",
    "parse_key_values",
    "parse_node_states",
    "parse_sacct_records",
    "parse_sacctmgr_assoc",
    "parse_sbatch_parsable",
    "parse_sbatch_test_only",
    "parse_scontrol_jobs",
    "parse_scontrol_partitions",
    "parse_sdiag_rpc_by_type",
    "parse_sdiag_rpc_by_user",
    "parse_sinfo_partitions",
    "parse_squeue",
    "parse_timestamp",
    "parse_tres",
    "parse_version",
    "probe_squeue_fields",
    "query_queue",
    "release",
    "requeue",
    "rpc_counts_by_user",
    "run_squeue",
    "show_job",
    "sinfo_partitions",
    "slurm_version",
    "state_category",
    "submit",
    "test_only",
    "user_associations",
    "validate_job_id",
]
