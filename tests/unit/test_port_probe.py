"""The derived MASTER_PORT steps over a port the first node already listens on (R4), run by bash as the script has it.

The rendezvous lines are cut from a rendered script and run in ``set -euo pipefail`` with the batch shell's
variables; a real listening socket on this machine (IPv4 or IPv6, as a store or a daemon holds one) stands for
the process that took the port.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ntui.core.compose.presets import load_preset
from ntui.core.compose.render import PORT_TRIES, render
from ntui.core.compose.rules import PORT_BASE, PORT_SPAN
from ntui.core.compose.spec import validate


def _rendezvous_lines(preset: str) -> str:
    spec, problems = validate(load_preset(preset, ("logs.dir=/logs",)))
    assert spec is not None, [str(p) for p in problems]
    script = render(spec)
    start = script.index("export MASTER_PORT=")
    end = script.index("\nfi\n", start) + len("\nfi\n")
    return script[start:end]


def _run(lines: str, job_id: int, node: str = "nid001", master: str = "nid001") -> subprocess.CompletedProcess[str]:
    program = f'set -euo pipefail\nMASTER_ADDR={master}\n{lines}echo "$MASTER_PORT"\n'
    env = {"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": str(job_id), "SLURMD_NODENAME": node}
    return subprocess.run(["bash", "-c", program], env=env, capture_output=True, text=True, timeout=30, check=False)


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def _listener(family: socket.AddressFamily, start: int) -> Iterator[int]:
    """A socket listening on the first port from ``start`` (in the derived span) that it can bind, and that port."""
    host = "::" if family == socket.AF_INET6 else "0.0.0.0"
    for port in range(start, start + 200):
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.bind((host, port))
        except OSError:
            s.close()
            continue
        s.listen()
        try:
            yield port
        finally:
            s.close()
        return
    pytest.skip(f"no free port from {start} to bind")


def _job_for(port: int) -> int:
    return port - PORT_BASE + 3 * PORT_SPAN  # a job id whose derived port is this one


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6], ids=["ipv4", "ipv6"])
@pytest.mark.parametrize("preset", ["local-srun", "local-torchrun", "local-accelerate"])
def test_a_port_in_use_on_the_first_node_is_stepped_over(preset: str, family: socket.AddressFamily) -> None:
    if family == socket.AF_INET6 and not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    lines = _rendezvous_lines(preset)
    with _listener(family, PORT_BASE + 7919) as taken:
        res = _run(lines, _job_for(taken))
        assert res.returncode == 0, res.stderr
        port = int(res.stdout)
        assert port != taken
        assert PORT_BASE <= port < PORT_BASE + PORT_SPAN
        assert not _listening(port)
        assert f"ntui: port {taken} is in use on nid001; MASTER_PORT={port} (R4)" in res.stderr


def test_a_free_port_is_kept_and_nothing_is_said() -> None:
    lines = _rendezvous_lines("local-torchrun")
    with _listener(socket.AF_INET, PORT_BASE + 8111) as taken:
        pass  # closed again: free now
    res = _run(lines, _job_for(taken))
    assert (res.returncode, res.stdout.strip(), res.stderr) == (0, str(taken), "")


def test_only_the_first_node_probes() -> None:
    """A batch step a site runs elsewhere cannot see the first node's sockets: the derived port stays."""
    lines = _rendezvous_lines("local-torchrun")
    with _listener(socket.AF_INET, PORT_BASE + 8231) as taken:
        res = _run(lines, _job_for(taken), node="nid002", master="nid001")
    assert (res.returncode, res.stdout.strip()) == (0, str(taken))


def test_the_span_wraps_at_its_top() -> None:
    lines = _rendezvous_lines("local-torchrun")
    with _listener(socket.AF_INET, PORT_BASE + PORT_SPAN - 1) as taken:
        if taken != PORT_BASE + PORT_SPAN - 1:
            pytest.skip("the span's last port is taken here")
        res = _run(lines, _job_for(taken))
    assert res.returncode == 0, res.stderr
    assert PORT_BASE <= int(res.stdout) < PORT_BASE + PORT_TRIES


def test_the_probe_gives_up_after_its_tries(tmp_path: Path) -> None:
    """Every port taken (a table that lists them all): the last one tried is kept, and the job still starts."""
    table = tmp_path / "tcp"
    table.write_text("  sl  local_address rem_address   st\n" + "".join(
        f"   {i}: 00000000:{PORT_BASE + 500 + i:04X} 00000000:0000 0A\n" for i in range(PORT_TRIES + 10)))
    lines = _rendezvous_lines("local-torchrun").replace("/proc/net/tcp /proc/net/tcp6", str(table))
    res = _run(lines, _job_for(PORT_BASE + 500))
    assert res.returncode == 0, res.stderr
    assert int(res.stdout) == PORT_BASE + 500 + PORT_TRIES
