"""Fixtures and helpers for the reliability suite (see docs/reliability.md).

``dev_cluster`` is the fixture of ``tests/cluster``: the cluster-marked scenarios skip without the
dev cluster, or fail with ``NTUI_REQUIRE_CLUSTER=1`` (as in ``scripts/test``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import (
    REPO,
    DevCluster,
    _disruption_lock,
    dev_cluster,
    require_disruption_lock,
)
from tests.support.waits import WAIT_BOUND_S

__all__ = ["REPO", "DevCluster", "_disruption_lock", "dev_cluster", "dev_cluster_cmd", "ntui_env", "requires_root",
           "restore_cluster", "run_ntui", "wait_for", "write_settings"]


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


# ---------------------------------------------------------------- the app under Pilot (scenarios F1-F9)


def write_settings(**sections: Mapping[str, object]) -> Path:
    """``$XDG_CONFIG_HOME/ntui/config.yaml`` (what the app's views read), e.g. short poll intervals."""
    import yaml

    from ntui.core.config import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({k: dict(v) for k, v in sections.items()}))
    return path


async def wait_for(pilot: Any, what: str, cond: Callable[[], object], timeout: float = WAIT_BOUND_S,
                   step: float = 0.1) -> float:
    """Pause until ``cond()`` is true; the seconds it took (fails naming ``what`` after ``timeout``)."""
    start = time.monotonic()
    deadline = start + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        await pilot.pause(step)
    return time.monotonic() - start


def dev_cluster_cmd(cluster: DevCluster, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``scripts/dev-cluster ARGS`` (root only); fails the test with its output when it fails. A command that stops
    or kills a daemon needs the test's marker ``disrupts_cluster``."""
    require_disruption_lock(cluster, args[0])
    res = cluster.run(str(cluster.script), *args, timeout=timeout)
    assert res.returncode == 0, f"dev-cluster {' '.join(args)}: {res.stdout}{res.stderr}"
    return res


def restore_cluster(cluster: DevCluster) -> None:
    """Every daemon up and both nodes in service again (``up`` starts only what is not running)."""
    res = cluster.run(str(cluster.script), "up", timeout=180)
    if res.returncode != 0:
        raise RuntimeError(f"could not restore the dev cluster: {res.stdout}{res.stderr}")


def requires_root() -> Any:
    return pytest.mark.skipif(os.geteuid() != 0, reason="stops and starts the dev cluster's daemons (root)")
