"""The dev clusters that scripts/test runs side by side on one host never give two jobs the same rendezvous port.

Each version's cluster numbers its jobs from its own FirstJobId and wraps at MaxJobId (5,000 ids); the port a
job derives is ``PORT_BASE + job id % PORT_SPAN`` (rule R4). Read from the script itself, so a range moved there
is checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

from ntui.core.compose.rules import PORT_BASE, PORT_SPAN

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "dev-cluster"
RANGE = 5000  # MaxJobId = FirstJobId + JOB_RANGE - 1, JOB_RANGE 5000 by default


def _first_job_ids() -> dict[str, int]:
    text = SCRIPT.read_text()
    found = dict(re.findall(r"^\s*(\d\d\.\d\d)\).*\bFIRST_JOB_ID=(\d+)", text, flags=re.M))
    # the range's size: 5,000 unless a cluster alone is given more (NTUI_DEV_CLUSTER_JOB_RANGE, for a benchmark)
    assert 'JOB_RANGE="${NTUI_DEV_CLUSTER_JOB_RANGE:-5000}"' in text
    assert "MAX_JOB_ID=$((FIRST_JOB_ID + JOB_RANGE - 1))" in text
    return {v: int(first) for v, first in found.items()}


def test_every_version_has_its_own_job_id_range() -> None:
    firsts = _first_job_ids()
    assert set(firsts) == {"22.05", "24.11", "26.05"}
    ports: dict[int, str] = {}
    for version, first in firsts.items():
        for job_id in range(first, first + RANGE):
            port = PORT_BASE + job_id % PORT_SPAN
            assert port not in ports, f"job {job_id} of {version} and a job of {ports[port]} share port {port}"
            ports[port] = version

