"""Fixtures and helpers for the reliability suite (see docs/reliability.md).

``dev_cluster`` is the fixture of ``tests/cluster``: the cluster-marked scenarios skip without the
dev cluster, or fail with ``NTUI_REQUIRE_CLUSTER=1`` (as in ``scripts/test``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.cluster.conftest import REPO, DevCluster, dev_cluster

__all__ = ["REPO", "DevCluster", "dev_cluster", "ntui_env", "run_ntui"]


def ntui_env(home: Path, base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """An environment for a ``python -m ntui`` child: private XDG dirs under ``home``."""
    env = dict(os.environ if base is None else base)
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env["XDG_STATE_HOME"] = str(home / "state")
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def run_ntui(*args: str, env: Mapping[str, str], timeout: float = 60, cwd: Path = REPO
             ) -> subprocess.CompletedProcess[bytes]:
    """``python -m ntui ARGS`` with bytes output (so that escape bytes can be asserted on)."""
    return subprocess.run([sys.executable, "-m", "ntui", *args], env=dict(env), capture_output=True,
                          timeout=timeout, cwd=cwd)
