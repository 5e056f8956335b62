"""The dev clusters that scripts/test runs side by side on one host never give two jobs the same rendezvous port,
and no job a port one of their daemons listens on.

Each version's cluster numbers its jobs from its own FirstJobId and wraps at MaxJobId (5,000 ids; the private
cluster without accounting that scripts/test starts beside them, its own range); the port a job derives is
``PORT_BASE + job id % PORT_SPAN`` (rule R4). A daemon's port inside that span fails the rendezvous of the job whose
id derives it (a 22.05 job numbered 1837 once derived 24.11's slurmctld port, 16837). Read from the scripts
themselves, so a range or a port moved there is checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

from ntui.core.compose.rules import PORT_BASE, PORT_SPAN

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "dev-cluster"
TEST_SCRIPT = REPO / "scripts" / "test"
RANGE = 5000  # MaxJobId = FirstJobId + JOB_RANGE - 1, JOB_RANGE 5000 by default
DAEMONS = 5  # PORT_BASE: slurmctld; +1, +2 the two slurmd; +3 slurmdbd; +4 mariadbd


def _versions() -> dict[str, tuple[int, int]]:
    """Each version's (first job id, port base), from its line in scripts/dev-cluster."""
    text = SCRIPT.read_text()
    # the range's size: 5,000 unless a cluster alone is given more (NTUI_DEV_CLUSTER_JOB_RANGE, for a benchmark)
    assert 'JOB_RANGE="${NTUI_DEV_CLUSTER_JOB_RANGE:-5000}"' in text
    assert "MAX_JOB_ID=$((FIRST_JOB_ID + JOB_RANGE - 1))" in text
    found = re.findall(r"^\s*(\d\d\.\d\d)\).*\bPORT_BASE=(\d+).*\bFIRST_JOB_ID=(\d+)", text, flags=re.M)
    return {v: (int(first), int(base)) for v, base, first in found}


def _noacct() -> tuple[range, int]:
    """The private cluster's job ids and port base, from scripts/test's NOACCT settings."""
    block = re.search(r"^NOACCT=\((?P<body>[^)]*)\)", TEST_SCRIPT.read_text(), flags=re.M)
    assert block is not None
    env = dict(re.findall(r"(NTUI_DEV_\w+)=(\S+)", block["body"]))
    first = int(env["NTUI_DEV_CLUSTER_FIRST_JOB_ID"])
    return range(first, first + int(env.get("NTUI_DEV_CLUSTER_JOB_RANGE", RANGE))), int(
        env["NTUI_DEV_CLUSTER_PORT_BASE"])


def _clusters() -> dict[str, tuple[range, int]]:
    clusters = {v: (range(first, first + RANGE), base) for v, (first, base) in _versions().items()}
    clusters["22.05 without accounting"] = _noacct()
    return clusters


def test_every_version_has_its_own_job_id_range() -> None:
    assert set(_versions()) == {"22.05", "24.11", "26.05"}
    ports: dict[int, str] = {}
    for name, (ids, _) in _clusters().items():
        for job_id in ids:
            port = PORT_BASE + job_id % PORT_SPAN
            assert port not in ports, f"job {job_id} of {name} and a job of {ports[port]} share port {port}"
            ports[port] = name


def test_no_job_derives_a_port_a_daemon_listens_on() -> None:
    derived = range(PORT_BASE, PORT_BASE + PORT_SPAN)
    daemons: dict[int, str] = {}
    for name, (_, base) in _clusters().items():
        for port in range(base, base + DAEMONS):
            assert port not in derived, f"{name}'s daemon port {port} is a port its jobs' rendezvous may derive"
            assert port not in daemons, f"{name} and {daemons[port]} both listen on {port}"
            daemons[port] = name
