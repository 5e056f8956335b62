"""Fixtures for tests that need the real dev cluster (``scripts/dev-cluster up``).

Every test in this directory is skipped, with the reason, unless ``SLURM_CONF`` is set and the controller
answers ``scontrol ping``. Start the cluster with::

    scripts/dev-cluster up && eval "$(scripts/dev-cluster env)"
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from tests.support.waits import WAIT_BOUND_S

REPO = Path(__file__).resolve().parents[2]
DEV_CLUSTER = REPO / "scripts" / "dev-cluster"
#: slurm.conf's line when the dev cluster runs with slurmdbd (``scripts/dev-cluster up``, not ``--no-accounting``).
ACCOUNTING_LINE = "AccountingStorageType=accounting_storage/slurmdbd"


def conf_has_accounting(conf: str | os.PathLike[str] | None = None) -> bool:
    """Whether the dev cluster's slurm.conf (default: ``$SLURM_CONF``) enables accounting; False if unreadable."""
    path = conf or os.environ.get("SLURM_CONF")
    if not path:
        return False
    try:
        return ACCOUNTING_LINE in Path(path).read_text().splitlines()
    except OSError:
        return False


@dataclass(frozen=True)
class DevCluster:
    slurm_conf: Path
    state_dir: Path
    env: dict[str, str]
    script: Path = DEV_CLUSTER

    @property
    def accounting(self) -> bool:
        """True when this cluster runs with slurmdbd (sacct, sacctmgr, enforced associations)."""
        return conf_has_accounting(self.slurm_conf)

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run a command with this cluster's environment; never raises on a non-zero exit."""
        return subprocess.run(
            list(args), env=self.env, capture_output=True, text=True, errors="replace", timeout=timeout
        )


def _skip(reason: str) -> NoReturn:
    """Skip, unless the run requires the cluster (CI sets NTUI_REQUIRE_CLUSTER=1): then fail."""
    if os.environ.get("NTUI_REQUIRE_CLUSTER") == "1":
        pytest.fail(f"the dev cluster is required (NTUI_REQUIRE_CLUSTER=1): {reason}", pytrace=False)
    pytest.skip(reason)


def _ping_until_up(env: dict[str, str]) -> str | None:
    """None once ``scontrol ping`` says the controller is UP; else what the last ping said, after WAIT_BOUND_S.

    One ping is not enough on a shared machine: scontrol gives up after slurm.conf's MessageTimeout (10 s) and says
    DOWN, and a controller on two busy cores (other lanes' jobs starting torch) can miss that once."""
    deadline = time.monotonic() + WAIT_BOUND_S  # a bound on the wait, not a claim about the controller's speed
    while True:
        try:
            ping = subprocess.run(["scontrol", "ping"], env=env, capture_output=True, text=True, errors="replace",
                                  timeout=30)
            said = f"rc {ping.returncode}: " + " ".join((ping.stdout + ping.stderr).split())[:300]
            if ping.returncode == 0 and "is UP" in ping.stdout:
                return None
        except subprocess.TimeoutExpired:
            said = "no answer within 30 s"
        except OSError as e:
            return f"cannot run scontrol: {e}"
        if time.monotonic() >= deadline:
            return said
        time.sleep(2)


@pytest.fixture(scope="session")
def dev_cluster() -> DevCluster:
    conf = os.environ.get("SLURM_CONF")
    if not conf:
        _skip('SLURM_CONF is not set; run: scripts/dev-cluster up && eval "$(scripts/dev-cluster env)"')
    if shutil.which("scontrol") is None:
        _skip("scontrol is not installed; run scripts/dev-cluster up (it installs slurm-wlm)")
    conf_dir = Path(conf).parent  # scripts/dev-cluster keeps its config in <state dir>/etc
    state_dir = Path(os.environ.get("NTUI_DEV_CLUSTER_DIR") or (conf_dir.parent if conf_dir.name == "etc"
                                                               else conf_dir))
    env = dict(os.environ, SLURM_CONF=conf, NTUI_DEV_CLUSTER_DIR=str(state_dir))
    said = _ping_until_up(env)
    if said is not None:
        _skip(f"Slurm controller does not answer scontrol ping (SLURM_CONF={conf}): {said}; run "
              "scripts/dev-cluster up")
    return DevCluster(slurm_conf=Path(conf), state_dir=state_dir, env=env)


@pytest.fixture(scope="session")
def remote_login() -> str:
    """The second local user the ssh tests log in as (the "cluster side" of a laptop's ntui, whose home holds the
    records): skipped where the tests do not run as root (sshd must); a missing user is the dev cluster's to make
    (``scripts/dev-cluster up`` and ``remote-user`` do), so it fails where the cluster is required."""
    from tests.support import sshd as sshd_support

    user = sshd_support.remote_user()
    if os.geteuid() != 0:
        pytest.skip(f"the ssh tests log in as a second local user ({user}) through a private sshd: they need root")
    reason = sshd_support.why_not(user)
    if reason is not None:
        _skip(reason)
    # the cluster side runs this interpreter and this checkout (the agent, the jobs) as that user
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"  # util-linux's, in /usr/sbin
    try:
        probe = subprocess.run([runuser, "-u", user, "--", sys.executable, "-c", "import ntui"], cwd="/",
                               env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True,
                               text=True, errors="replace", timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        _skip(f"cannot run {sys.executable} as {user}: {e}")
    if probe.returncode != 0:
        _skip(f"{user} cannot run {sys.executable} with the checkout {REPO} ({probe.stderr.strip()[-300:]}); "
              "scripts/dev-cluster remote-user lets it search the directories above them")
    return user


#: The file in a cluster's state dir whose lock says who may stop its daemons (see ``cluster_lock``).
DISRUPTION_LOCK = "ntui-tests-disruption.lock"
#: dev-cluster's commands that stop or kill a daemon: only under the exclusive lock (``disrupts_cluster``).
DISRUPTIVE = frozenset({"stop-controller", "start-controller", "kill-node", "start-node"})


@contextmanager
def cluster_lock(cluster: DevCluster, *, exclusive: bool) -> Iterator[None]:
    """Hold the cluster's disruption lock (``flock`` on a file in its state dir) while the block runs.

    scripts/test runs one lane per cluster side by side, and one lane (26.05's ``two_clusters`` tests) also uses
    another lane's cluster (24.11). A test that stops or kills one of its cluster's daemons holds the lock
    exclusively (marker ``disrupts_cluster``); a test that uses a cluster of another lane holds it shared. So the
    borrowed cluster is never met mid-outage, and an outage never lands in the middle of the borrower's test:
    each waits for the other, however long it takes (the lock, not a time, orders them)."""
    path = cluster.state_dir / DISRUPTION_LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing the file releases the lock


def _held_exclusively(cluster: DevCluster) -> bool:
    """Whether the cluster's disruption lock is held exclusively: a shared lock taken without waiting, on a file of
    its own, is refused then (``flock`` locks belong to each opened file, so this process's own hold refuses it
    too). Only the lane whose cluster it is ever holds it so. Asked of the file, not of a variable: pytest imports
    this conftest under another module name than the tests that import it do, and each copy has its own."""
    fd = os.open(cluster.state_dir / DISRUPTION_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def require_disruption_lock(cluster: DevCluster, command: str) -> None:
    """Fail a test that stops or kills a daemon of its cluster without the marker ``disrupts_cluster``."""
    if command in DISRUPTIVE and not _held_exclusively(cluster):
        pytest.fail(f"dev-cluster {command} needs the cluster's disruption lock: mark the test "
                    "@pytest.mark.disrupts_cluster", pytrace=False)


@pytest.fixture(autouse=True)
def _disruption_lock(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked ``disrupts_cluster`` holds its cluster's disruption lock exclusively (``cluster_lock``)."""
    if request.node.get_closest_marker("disrupts_cluster") is None:
        yield
        return
    cluster: DevCluster = request.getfixturevalue("dev_cluster")
    with cluster_lock(cluster, exclusive=True):
        yield


#: scripts/test names, for the lane that runs the ``two_clusters`` tests, another version's running cluster.
OTHER_ENV = "NTUI_TEST_OTHER_SLURM"


@pytest.fixture
def other_dev_cluster(other_dev_cluster_found: DevCluster) -> Iterator[DevCluster]:
    """The second cluster (``other_dev_cluster_found``), held for the test's whole length with its disruption lock
    shared: its own lane's tests that stop its daemons wait until this test ends, and this one waits for theirs."""
    with cluster_lock(other_dev_cluster_found, exclusive=False):
        said = _ping_until_up(other_dev_cluster_found.env)
        if said is not None:
            _skip(f"the second dev cluster does not answer scontrol ping ({said})")
        yield other_dev_cluster_found


@pytest.fixture(scope="session")
def other_dev_cluster_found(dev_cluster: DevCluster) -> DevCluster:
    """A second running dev cluster of another Slurm version (``$NTUI_TEST_OTHER_SLURM``, e.g. 24.11), with its
    own environment as ``scripts/dev-cluster env --slurm V`` gives it."""
    version = os.environ.get(OTHER_ENV)
    if not version:
        _skip(f"{OTHER_ENV} names no second cluster (scripts/test sets it for the 26.05 lane)")
    try:
        res = subprocess.run(["bash", "-c", f'eval "$("$0" env --slurm {version})" && env -0', str(DEV_CLUSTER)],
                             env=dict(os.environ), capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        _skip(f"scripts/dev-cluster env --slurm {version} timed out")
    if res.returncode != 0:
        _skip(f"scripts/dev-cluster env --slurm {version}: {res.stderr.decode(errors='replace')[:300]}")
    env = dict(item.split("=", 1) for item in res.stdout.decode(errors="replace").split("\0") if "=" in item)
    if env.get("SLURM_CONF") == str(dev_cluster.slurm_conf):
        _skip(f"{OTHER_ENV}={version} is this lane's own cluster")
    said = _ping_until_up(env)
    if said is not None:
        _skip(f"the Slurm {version} dev cluster does not answer scontrol ping ({said}); run "
              f"scripts/dev-cluster up --slurm {version}")
    conf = Path(env["SLURM_CONF"])
    return DevCluster(slurm_conf=conf, state_dir=Path(env.get("NTUI_DEV_CLUSTER_DIR") or conf.parent.parent),
                      env=env)
