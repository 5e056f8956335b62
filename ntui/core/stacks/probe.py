"""The node side of ``ntui stacks``: one task of an overlapping ``srun`` step per node runs this module.

It finds the job's processes on its node and which of them are ranks, takes every rank's Python stack with py-spy
twice, a few seconds apart, and prints what it found as one document in short lines. The standard library only,
and nothing from the rest of ntui: it must start fast on a compute node from the interpreter ntui runs under.

**Which processes.** Every process whose environment (``/proc/PID/environ``, readable for one's own processes)
has the step's ``SLURM_JOB_ID`` and, where set, its ``SLURMD_NODENAME`` (several slurmd on one host), except this
step's own. Of those, the Python interpreters (``/proc/PID/exe``), each classified by its ancestry:

* an **agent**: a launcher that starts ranks (torchrun, accelerate launch): it has a descendant started by
  torch elastic (``TORCHELASTIC_RUN_ID`` in its environment) and is not one itself; never sampled;
* a **rank**: its global rank from ``RANK``, else ``SLURM_PROCID``; its nearest interpreter ancestor is none or an
  agent;
* a **worker** of a rank (a DataLoader worker, any child interpreter): it descends from a rank.

**Leaving nothing stopped.** py-spy pauses its target while it reads it. Each dump runs under a timeout and is
killed after it; any target found stopped afterwards that was not stopped before is sent ``SIGCONT``, and said.

**Permissions** are told with the answer: Yama's ``ptrace_scope``, whether this step holds ``CAP_SYS_PTRACE``, a
seccomp filter on it, and each refusal py-spy reports.

**Output.** The document (JSON, zlib, base64) in lines of at most :data:`CHUNK` characters, each
``ntui-stacks NODE I/N DATA``: srun forwards short lines whole, so several nodes' output never mixes inside one.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CHUNK", "MARK", "Proc", "access", "classify", "decode_lines", "encode_lines", "main"]

#: The first word of every line the probe prints.
MARK = "ntui-stacks"
#: Characters of data per line.
CHUNK = 600
#: The document's format.
VERSION = 1
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*m?$")
_CAP_SYS_PTRACE = 19
_PROC = "/proc"


@dataclass
class Proc:
    """One interpreter of the job on this node."""

    pid: int
    ppid: int
    env: Mapping[str, str]
    exe: str
    cmd: str
    role: str = "rank"  # rank | worker | agent
    rank: int | None = None
    local_rank: int | None = None
    owner: int | None = None  # a worker's rank process (pid)
    children: list[int] = field(default_factory=list)

    def doc(self) -> dict[str, Any]:
        return {"pid": self.pid, "ppid": self.ppid, "role": self.role, "rank": self.rank,
                "local_rank": self.local_rank, "owner": self.owner, "exe": self.exe, "cmd": self.cmd[:300]}


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _environ(pid: int) -> dict[str, str] | None:
    raw = _read(f"{_PROC}/{pid}/environ")
    if raw is None:
        return None
    env: dict[str, str] = {}
    for item in raw.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep:
            env[name.decode(errors="replace")] = value.decode(errors="replace")
    return env


def _ppid(pid: int) -> int | None:
    raw = _read(f"{_PROC}/{pid}/stat")
    if raw is None:
        return None
    fields = raw[raw.rfind(b")") + 2:].split()  # the name may hold spaces and parentheses
    return _int(fields[1].decode()) if len(fields) > 1 else None


def state_of(pid: int) -> str | None:
    """The process's state letter (``S``, ``R``, ``T`` stopped, ``t`` traced), None once it is gone."""
    raw = _read(f"{_PROC}/{pid}/stat")
    if raw is None:
        return None
    fields = raw[raw.rfind(b")") + 2:].split()
    return fields[0].decode() if fields else None


def find(job_id: str, node: str | None, own_step: str | None) -> list[Proc]:
    """The job's interpreters on this node (see the module docstring), unclassified."""
    me = os.getpid()
    found: list[Proc] = []
    for name in os.listdir(_PROC):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        env = _environ(pid)
        if env is None or env.get("SLURM_JOB_ID") != job_id:
            continue
        if node and env.get("SLURMD_NODENAME", node) != node:
            continue
        if own_step is not None and env.get("SLURM_STEP_ID") == own_step:
            continue
        try:
            exe = os.readlink(f"{_PROC}/{pid}/exe")
        except OSError:
            continue
        if not _PYTHON.match(os.path.basename(exe).removesuffix(" (deleted)")):
            continue
        ppid = _ppid(pid)
        cmd = (_read(f"{_PROC}/{pid}/cmdline") or b"").replace(b"\0", b" ").decode(errors="replace").strip()
        if ppid is not None:
            found.append(Proc(pid, ppid, env, exe, cmd))
    return found


def classify(procs: Sequence[Proc]) -> list[Proc]:
    """Set each interpreter's role, rank and owner from its ancestry and environment (module docstring)."""
    by_pid = {p.pid: p for p in procs}

    def ancestors(p: Proc) -> list[Proc]:
        chain: list[Proc] = []
        seen = {p.pid}
        q = by_pid.get(p.ppid)
        while q is not None and q.pid not in seen:
            chain.append(q)
            seen.add(q.pid)
            q = by_pid.get(q.ppid)
        return chain

    chains = {p.pid: ancestors(p) for p in procs}
    agents: set[int] = set()
    for p in procs:
        if "TORCHELASTIC_RUN_ID" in p.env:
            agents.update(a.pid for a in chains[p.pid] if "TORCHELASTIC_RUN_ID" not in a.env)
    for p in sorted(procs, key=lambda q: len(chains[q.pid])):  # ancestors first
        p.rank = _int(p.env.get("RANK")) if "RANK" in p.env else _int(p.env.get("SLURM_PROCID"))
        p.local_rank = _int(p.env.get("LOCAL_RANK")) if "LOCAL_RANK" in p.env else _int(p.env.get("SLURM_LOCALID"))
        if p.pid in agents:
            p.role = "agent"
            continue
        owner = next((a for a in chains[p.pid] if a.pid not in agents), None)
        if owner is not None:
            main = by_pid[owner.owner] if owner.role == "worker" and owner.owner in by_pid else owner
            p.role, p.owner, p.rank, p.local_rank = "worker", main.pid, main.rank, main.local_rank
    return list(procs)


def access() -> dict[str, Any]:
    """What decides whether this step may attach to its own user's processes (module docstring)."""
    scope = _read(f"{_PROC}/sys/kernel/yama/ptrace_scope")
    status = (_read(f"{_PROC}/self/status") or b"").decode(errors="replace")
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    cap_eff = _int_hex(fields.get("CapEff", "").strip())
    return {
        "ptrace_scope": _int(scope.decode().strip()) if scope is not None else None,
        "cap_sys_ptrace": bool(cap_eff is not None and cap_eff >> _CAP_SYS_PTRACE & 1),
        "seccomp": _int(fields.get("Seccomp", "").strip() or None),
        "uid": os.getuid(),
    }


def _int_hex(text: str) -> int | None:
    try:
        return int(text, 16)
    except ValueError:
        return None


def _threads(raw: Any) -> list[dict[str, Any]]:
    """py-spy's JSON threads, with what the grouping reads (frames innermost first)."""
    out: list[dict[str, Any]] = []
    for t in raw if isinstance(raw, list) else []:
        if not isinstance(t, dict):
            continue
        frames = [[f.get("name"), f.get("short_filename") or f.get("filename"), f.get("filename"), f.get("line")]
                  for f in t.get("frames") or [] if isinstance(f, dict)]
        out.append({"name": t.get("thread_name"), "tid": t.get("os_thread_id"), "active": t.get("active"),
                    "gil": t.get("owns_gil"), "frames": frames})
    return out


def _error(text: str) -> str:
    """py-spy's error in one line: its message and the innermost cause (no Rust backtrace)."""
    lines = [ln.strip() for ln in text.split("Stack backtrace:")[0].splitlines() if ln.strip()]
    head = next((ln for ln in lines if ln.startswith("Error:")), lines[0] if lines else "py-spy failed")
    causes = [ln.split(":", 1)[1].strip() for ln in lines if re.match(r"^\d+: ", ln)]
    return f"{head.removeprefix('Error: ')}: {causes[-1]}" if causes else head


def sample(pids: Sequence[int], py_spy: str, *, native: bool, timeout: float) -> dict[str, Any]:
    """One py-spy dump of every pid, all at once; each killed after ``timeout``. Targets py-spy left stopped
    are continued (``continued``); ``stacks`` and ``errors`` by pid."""
    before = {pid: state_of(pid) for pid in pids}
    started = time.time()
    runs: dict[int, subprocess.Popen[bytes]] = {}
    errors: dict[str, str] = {}
    for pid in pids:
        argv = [py_spy, "dump", "--pid", str(pid), "--json"] + (["--native"] if native else [])
        try:
            runs[pid] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         stdin=subprocess.DEVNULL)
        except OSError as exc:
            errors[str(pid)] = f"cannot run {py_spy}: {exc.strerror or exc}"
    deadline = time.monotonic() + timeout
    stacks: dict[str, Any] = {}
    for pid, proc in runs.items():
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            errors[str(pid)] = f"timeout: py-spy did not answer within {timeout:g} s"
            continue
        if proc.returncode == 0:
            try:
                stacks[str(pid)] = _threads(json.loads(out))
            except ValueError:
                errors[str(pid)] = "py-spy printed no stack"
        else:
            errors[str(pid)] = "gone: the process exited" if state_of(pid) is None else \
                _error(err.decode(errors="replace"))
    continued = []
    for pid in pids:
        if state_of(pid) in ("T", "t") and before[pid] not in ("T", "t"):
            try:
                os.kill(pid, signal.SIGCONT)
                continued.append(pid)
            except OSError:
                pass
    return {"at": started, "stacks": stacks, "errors": errors, "continued": continued}


def encode_lines(node: str, doc: Mapping[str, Any]) -> list[str]:
    """The document as ``ntui-stacks NODE I/N DATA`` lines."""
    data = base64.b64encode(zlib.compress(json.dumps(doc, separators=(",", ":")).encode(), 6)).decode()
    parts = [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)] or [""]
    return [f"{MARK} {node} {i + 1}/{len(parts)} {part}" for i, part in enumerate(parts)]


def decode_lines(lines: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Every whole document in ``lines`` (other lines ignored), by node; a node whose lines are incomplete or
    damaged is left out."""
    parts: dict[str, dict[int, str]] = {}
    counts: dict[str, int] = {}
    for line in lines:
        words = line.strip().split(" ")
        if len(words) not in (3, 4) or words[0] != MARK:
            continue
        index, _, count = words[2].partition("/")
        i, n = _int(index), _int(count)
        if i is None or n is None or not 1 <= i <= n:
            continue
        parts.setdefault(words[1], {})[i] = words[3] if len(words) == 4 else ""
        counts[words[1]] = n
    docs: dict[str, dict[str, Any]] = {}
    for node, got in parts.items():
        if len(got) != counts[node]:
            continue
        try:
            doc = json.loads(zlib.decompress(base64.b64decode("".join(got[i] for i in sorted(got)))))
        except (ValueError, zlib.error):
            continue
        if isinstance(doc, dict):
            docs[node] = doc
    return docs


def _py_spy(given: str) -> str | None:
    if os.sep in given:
        return given if os.access(given, os.X_OK) else None
    return shutil.which(given)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ntui.core.stacks.probe")
    parser.add_argument("--py-spy", default="py-spy")
    parser.add_argument("--native", action="store_true")
    parser.add_argument("--interval", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args(argv)
    env = os.environ
    node = env.get("SLURMD_NODENAME") or os.uname().nodename.split(".")[0]
    job_id = env.get("SLURM_JOB_ID", "")
    doc: dict[str, Any] = {"v": VERSION, "node": node, "job": job_id, "access": access(), "samples": []}
    py_spy = _py_spy(args.py_spy)
    procs = classify(find(job_id, env.get("SLURMD_NODENAME"), env.get("SLURM_STEP_ID"))) if job_id else []
    doc["procs"] = [p.doc() for p in procs]
    doc["py_spy"] = py_spy
    wanted = [p.pid for p in procs if p.role != "agent"]
    if py_spy is None:
        doc["error"] = f"py-spy not found ({args.py_spy})"
    elif wanted:
        doc["samples"].append(sample(wanted, py_spy, native=args.native, timeout=args.timeout))
        time.sleep(max(0.0, args.interval))
        doc["samples"].append(sample(wanted, py_spy, native=args.native, timeout=args.timeout))
    for line in encode_lines(node, doc):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
