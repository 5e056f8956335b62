"""A rank killed by a signal, named right on the real dev cluster: every launcher, SIGABRT and SIGSEGV, 2 nodes.

One rank of ``examples/ddp_check.py`` kills itself (``NTUI_CHECK_FAIL_HOW``: ``os.abort()``, a NULL read) while
the other three wait in a barrier; ``ntui logs JOBID --triage`` must name that rank, the node its header says
and the signal, with the others as consequences, never "the launcher on ... (srun task N)". The six jobs are
submitted at once (each takes the whole dev cluster, so they run one after another with no gap); the verdict
reads only the logs, so the tests hold with or without accounting.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ntui.core.jobfiles.lognames import LogPaths, node_of
from tests.cluster.conftest import DevCluster
from tests.cluster.test_e2e import ntui

pytestmark = [pytest.mark.cluster, pytest.mark.accounting_agnostic]

LAUNCHERS = ("srun", "torchrun", "accelerate")
#: NTUI_CHECK_FAIL_HOW -> (the rank that dies, its signal)
CASES = {"abort": (3, "SIGABRT"), "segv": (1, "SIGSEGV")}
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", ""}


def _state(cluster: DevCluster, job_id: str) -> str:
    out = cluster.run("squeue", "-h", "-j", job_id, "-o", "%T", timeout=30).stdout.strip()
    if out:
        return out
    show = cluster.run("scontrol", "show", "job", "-o", job_id, timeout=30).stdout
    return next((w.split("=", 1)[1] for w in show.split() if w.startswith("JobState=")), "")


@pytest.fixture(scope="module")
def signal_jobs(dev_cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[dict[tuple[str, str], tuple[str, Path]]]:
    jobs: dict[tuple[str, str], tuple[str, Path]] = {}
    try:
        for launcher in LAUNCHERS:
            for how, (rank, _) in CASES.items():
                log_dir = tmp_path_factory.mktemp(f"signal-{how}-{launcher}")
                res = ntui(dev_cluster, "submit", f"local-{launcher}", "--set", f"logs.dir={log_dir}",
                           "--set", f"env.NTUI_CHECK_FAIL_RANK={rank}", "--set", f"env.NTUI_CHECK_FAIL_HOW={how}",
                           timeout=60)
                assert res.returncode == 0, res.stdout + res.stderr
                jobs[(launcher, how)] = (res.stdout.strip().splitlines()[0], log_dir)
        yield jobs
    finally:
        if jobs:  # only this module's own jobs, should a test have failed before they ended
            dev_cluster.run("scancel", *(job_id for job_id, _ in jobs.values()), timeout=30)


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_rank_killed_by_a_signal_is_named_live(dev_cluster: DevCluster,
                                               signal_jobs: dict[tuple[str, str], tuple[str, Path]],
                                               launcher: str) -> None:
    for how, (rank, sig) in CASES.items():
        job_id, log_dir = signal_jobs[(launcher, how)]
        deadline = time.monotonic() + 150
        while (state := _state(dev_cluster, job_id)) not in ENDED:
            assert time.monotonic() < deadline, f"job {job_id} ({how}, {launcher}) still {state}"
            time.sleep(1)
        assert state in ("FAILED", ""), f"job {job_id}: {state}"
        node = node_of(LogPaths(str(log_dir), f"local-{launcher}").rank(job_id, rank))
        assert node in ("nid001", "nid002")
        out = ntui(dev_cluster, "logs", job_id, "--triage", timeout=60)
        line = out.stdout.strip()
        assert out.returncode == 1, out.stdout + out.stderr
        assert line.startswith(f"rank {rank} on {node} was killed by {sig} ("), (how, line)
        # its local rank, where the launcher's report of it is in the log: on a loaded machine srun may stop that
        # launcher first (the other node's ended first); the rank's own faulthandler line still names the signal (D3)
        assert " (local rank " not in line or f" (local rank {rank % 2}" in line, (how, line)
        # the others as consequences: those whose log says the peer went away. Which do depends on timing (on a
        # loaded machine the launcher may stop a waiting rank before its error reaches its log: seen once with
        # accelerate, "then ranks 0, 2"), so each named one is another rank, and at least one is named.
        said = re.search(r" · then ranks? (?P<ranks>\d+(?:, \d+)*) as a consequence$", line)
        assert said is not None, (how, line)
        named = {int(r) for r in said["ranks"].split(", ")}
        assert named and named <= {0, 1, 2, 3} - {rank}, (how, line)
        assert "the launcher on" not in line, (how, line)
