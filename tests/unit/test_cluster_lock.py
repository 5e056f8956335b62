"""The cluster tests' disruption lock (tests/cluster/conftest.py): a test that stops a cluster's daemons holds it
exclusively, a test of another lane that borrows the cluster holds it shared, and neither meets the other mid-way.
Checked here with the lock's own file and a second process, no cluster needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.conftest import DISRUPTION_LOCK, DevCluster, cluster_lock, require_disruption_lock

#: A second process that tries the lock without waiting: prints "free" or "held".
PROBE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
try:
    fcntl.flock(fd, (fcntl.LOCK_EX if sys.argv[2] == "ex" else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    print("free")
except BlockingIOError:
    print("held")
"""


def _cluster(tmp_path: Path) -> DevCluster:
    return DevCluster(slurm_conf=tmp_path / "etc" / "slurm.conf", state_dir=tmp_path, env={})


def _probe(tmp_path: Path, mode: str) -> str:
    res = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / DISRUPTION_LOCK), mode], capture_output=True,
                         text=True, timeout=60, check=True)
    return res.stdout.strip()


def test_an_exclusive_holder_keeps_out_a_borrower_until_it_ends(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    with cluster_lock(cluster, exclusive=True):
        assert _probe(tmp_path, "sh") == "held"
        require_disruption_lock(cluster, "stop-controller")  # allowed: this process holds it
    assert _probe(tmp_path, "sh") == "free"


def test_a_borrower_keeps_out_a_disruption_but_not_another_borrower(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    with cluster_lock(cluster, exclusive=False):
        assert _probe(tmp_path, "ex") == "held"
        assert _probe(tmp_path, "sh") == "free"
    assert _probe(tmp_path, "ex") == "free"


@pytest.mark.parametrize("command", ["stop-controller", "kill-node", "start-node"])
def test_stopping_a_daemon_without_the_lock_fails_the_test(tmp_path: Path, command: str) -> None:
    cluster = _cluster(tmp_path)
    with pytest.raises(pytest.fail.Exception, match="disrupts_cluster"):
        require_disruption_lock(cluster, command)
    with cluster_lock(cluster, exclusive=False), pytest.raises(pytest.fail.Exception):
        require_disruption_lock(cluster, command)  # a shared hold is a borrower's, not a disruption's
    require_disruption_lock(cluster, "status")  # a command that stops nothing needs no lock


def test_the_lock_is_seen_by_another_copy_of_the_conftest_module(tmp_path: Path) -> None:
    """pytest imports tests/cluster/conftest.py as ``cluster.conftest`` (tests/ is no package) while the tests import
    ``tests.cluster.conftest``: two copies of one module. The hold taken through one is seen through the other."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("copy_of_cluster_conftest",
                                                  Path(__file__).resolve().parents[1] / "cluster" / "conftest.py")
    assert spec is not None and spec.loader is not None
    other = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = other  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(other)
    finally:
        del sys.modules[spec.name]
    cluster = _cluster(tmp_path)
    with other.cluster_lock(other.DevCluster(slurm_conf=cluster.slurm_conf, state_dir=tmp_path, env={}),
                            exclusive=True):
        require_disruption_lock(cluster, "kill-node")  # this module's copy sees the other's hold
    with pytest.raises(pytest.fail.Exception):
        require_disruption_lock(cluster, "kill-node")
