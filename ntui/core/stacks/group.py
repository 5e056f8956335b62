"""The probe's documents, read back and grouped as STAT groups stacks: one class per identical stack.

Each rank's stack is its main thread's (the one whose thread id is the process id, else the first py-spy lists),
innermost frame first. Ranks whose stacks are identical form one *class*, shown with its rank ranges; the odd
classes come first (the fewest members), and a class is said in its innermost frame and the innermost frame of
the user's own code (a file outside the interpreter's library and installed packages)::

    ranks 0-2: all_reduce ← train_step (hang_train.py:88) · waiting
    rank 3: stuck_here (hang_train.py:41) ← train_step · waiting

A rank is *waiting* when its two samples, a few seconds apart, find it in the same place of its own code: the same
function, called from the same lines (:func:`place`). The line within that function and the library frames under it
may differ: a rank polling (``while not ready(): time.sleep(1)``) is caught now in the sleep, now in the check, and
it waits all the same. It is *moving* when its own code has gone elsewhere. A stack with no frame of the user's own
code is compared whole.
A worker (a DataLoader worker: any interpreter a rank started) is grouped apart from the ranks, named by its rank.
Launcher agents (torchrun's, accelerate's) are counted, never sampled. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ntui.core.hosts import format_index_ranges

__all__ = ["Frame", "NodeStacks", "ProcStack", "StackClass", "Stacks", "group", "place", "rank_ranges", "read_docs"]

_LIBRARY = re.compile(r"/(lib|lib64)/(pypy|python)[0-9.]*/|/site-packages/|/dist-packages/")


@dataclass(frozen=True)
class Frame:
    name: str
    file: str  # short (py-spy's short_filename)
    path: str
    line: int | None

    @property
    def own(self) -> bool:
        """The user's own code: not the interpreter's library, not an installed package, not a native frame."""
        return bool(self.path) and not self.path.startswith("<") and _LIBRARY.search(self.path) is None \
            and self.path.endswith(".py")

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "file": self.file, "path": self.path, "line": self.line, "own": self.own}


@dataclass(frozen=True)
class ProcStack:
    """One sampled process: a rank or a rank's worker, with its stack in each sample (None: not taken)."""

    node: str
    pid: int
    role: str  # rank | worker
    rank: int | None
    local_rank: int | None
    cmd: str
    samples: tuple[tuple[Frame, ...] | None, ...]
    error: str | None  # why the last sample has no stack
    threads: int

    @property
    def stack(self) -> tuple[Frame, ...] | None:
        """The latest stack taken."""
        return next((s for s in reversed(self.samples) if s is not None), None)

    @property
    def waiting(self) -> bool | None:
        """The first and last samples in the same :func:`place` (None: fewer than two)."""
        got = [s for s in self.samples if s is not None]
        return place(got[0]) == place(got[-1]) if len(got) >= 2 else None

    @property
    def label(self) -> str:
        who = f"rank {self.rank}" if self.rank is not None else f"pid {self.pid}"
        return f"{who}'s worker (pid {self.pid})" if self.role == "worker" else who


@dataclass(frozen=True)
class NodeStacks:
    """What one node's probe said about itself."""

    node: str
    py_spy: str | None
    ptrace_scope: int | None
    cap_sys_ptrace: bool
    seccomp: int | None
    agents: int
    continued: tuple[int, ...]
    error: str | None
    interval_s: float | None


@dataclass(frozen=True)
class StackClass:
    """Identical stacks: the processes that hold it, and whether they stay there."""

    members: tuple[ProcStack, ...]
    frames: tuple[Frame, ...]

    @property
    def ranks(self) -> tuple[int, ...]:
        return tuple(sorted({m.rank for m in self.members if m.rank is not None}))

    @property
    def state(self) -> str:
        """``waiting`` (every member's two samples in one place), ``moving`` (none), ``some moving``, or ``""``."""
        seen = [m.waiting for m in self.members if m.waiting is not None]
        if not seen:
            return ""
        if all(seen):
            return "waiting"
        return "moving" if not any(seen) else f"{seen.count(False)} of {len(seen)} moving"

    @property
    def who(self) -> str:
        """``ranks 0-2, 5`` / ``rank 3`` / ``rank 3's worker (pid 812)`` / ``workers of ranks 0-3``."""
        workers = self.members[0].role == "worker"
        if len(self.members) == 1:
            return self.members[0].label
        ranks = rank_ranges(self.ranks)
        plural = "ranks" if len(self.ranks) > 1 else "rank"
        if workers:
            return f"{len(self.members)} workers of {plural} {ranks}"
        unranked = sum(1 for m in self.members if m.rank is None)
        return f"{plural} {ranks}" + (f" and {unranked} more" if unranked else "")

    @property
    def where(self) -> str:
        """``all_reduce ← train_step (train.py:88)``: the user's innermost own frame with its place, after the
        innermost frame of the package that frame called (the library call it waits in, not the selector deep
        inside it); when the innermost frame is the user's own: its place and its caller."""
        if not self.frames:
            return "(no Python frame)"
        top = self.frames[0]
        if top.own:
            caller = f" ← {self.frames[1].name}" if len(self.frames) > 1 else ""
            return f"{top.name} ({top.where}){caller}"
        at = next((i for i, f in enumerate(self.frames) if f.own), None)
        if at is None:
            return f"{top.name} ({top.where})"
        package = _package(self.frames[at - 1])
        called = next(f for f in self.frames[:at] if _package(f) == package)
        own = self.frames[at]
        return f"{called.name} ← {own.name} ({own.where})"

    @property
    def words(self) -> str:
        state = f" · {self.state}" if self.state else ""
        return f"{self.who}: {self.where}{state}"


@dataclass(frozen=True)
class Stacks:
    """Every node's answer, grouped: the ranks' classes (odd ones first), the workers', and the problems."""

    job_id: str
    nodes: tuple[NodeStacks, ...]
    procs: tuple[ProcStack, ...]
    classes: tuple[StackClass, ...]
    worker_classes: tuple[StackClass, ...]
    problems: tuple[str, ...]  # in words, with what to do

    @property
    def ranks(self) -> int:
        return sum(1 for p in self.procs if p.role == "rank")

    @property
    def interval_s(self) -> float | None:
        return next((n.interval_s for n in self.nodes if n.interval_s is not None), None)

    def lines(self) -> list[str]:
        """The grouped answer as text: a head line, the ranks' classes, the workers', then the problems."""
        nodes = len(self.nodes)
        apart = f", sampled twice {self.interval_s:.0f} s apart" if self.interval_s is not None else ""
        out = [f"Job {self.job_id}: {self.ranks} rank{'s' * (self.ranks != 1)} on {nodes} "
               f"node{'s' * (nodes != 1)}{apart}"]
        out += [f"  {c.words}" for c in self.classes]
        if self.worker_classes:
            out.append("Workers (processes a rank started):")
            out += [f"  {c.words}" for c in self.worker_classes]
        out += [f"! {p}" for p in self.problems]
        return out

    def to_json(self) -> dict[str, Any]:
        def cls(c: StackClass) -> dict[str, Any]:
            return {"who": c.who, "ranks": list(c.ranks), "where": c.where, "state": c.state,
                    "members": [{"node": m.node, "pid": m.pid, "rank": m.rank, "role": m.role,
                                 "waiting": m.waiting} for m in c.members],
                    "frames": [f.to_json() for f in c.frames]}
        return {"job": self.job_id, "ranks": self.ranks, "interval_s": self.interval_s,
                "nodes": [{"node": n.node, "py_spy": n.py_spy, "ptrace_scope": n.ptrace_scope,
                           "cap_sys_ptrace": n.cap_sys_ptrace, "seccomp": n.seccomp, "agents": n.agents,
                           "continued": list(n.continued), "error": n.error} for n in self.nodes],
                "classes": [cls(c) for c in self.classes], "workers": [cls(c) for c in self.worker_classes],
                "problems": list(self.problems)}


def place(stack: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """Where a stack is in the user's own code: its innermost own frame without its line, and every frame that
    called it with theirs; the library frames under it dropped. A stack with no own frame is its own place."""
    at = next((i for i, f in enumerate(stack) if f.own), None)
    if at is None:
        return stack
    own = stack[at]
    return (Frame(own.name, own.file, own.path, None), *stack[at + 1:])


def _package(frame: Frame) -> str:
    """The top package (or module file) a frame's code belongs to: ``torch`` for ``torch/utils/data/x.py``."""
    return frame.file.split("/", 1)[0]


def rank_ranges(ranks: Iterable[int]) -> str:
    """``0-6, 8-15``: the ranks' runs as Slurm prints index ranges, a space after each comma for reading."""
    return format_index_ranges(ranks).replace(",", ", ")


def _frames(threads: Any, pid: int) -> tuple[tuple[Frame, ...], int] | None:
    if not isinstance(threads, list) or not threads:
        return None
    main = next((t for t in threads if isinstance(t, dict) and t.get("tid") == pid), None) or threads[0]
    if not isinstance(main, dict):
        return None
    frames = []
    for f in main.get("frames") or []:
        if isinstance(f, list) and len(f) == 4:
            name, short, path, line = f
            frames.append(Frame(str(name), str(short or path or "?"), str(path or ""),
                                line if isinstance(line, int) else None))
    return tuple(frames), len(threads)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _error_words(node: str, label: str, error: str, access: Mapping[str, Any]) -> str:
    """A process's py-spy failure, in words, with what to do."""
    low = error.lower()
    if low.startswith("gone"):
        return f"{node}: {label} exited before it could be sampled"
    if low.startswith("timeout"):
        return f"{node}: {label}: {error}; it was left running"
    if "permission" in low or "eperm" in low or "operation not permitted" in low:
        return f"{node}: attaching to {label} was refused ({error}); {permission_hint(access)}"
    return f"{node}: {label}: {error}"


def permission_hint(access: Mapping[str, Any]) -> str:
    """Why a node refuses py-spy, from what its probe saw, and the way out."""
    scope = _int(access.get("ptrace_scope"))
    if scope == 1 and not access.get("cap_sys_ptrace"):
        return ("the kernel lets a process be traced only by its ancestors (Yama ptrace_scope 1): ask the "
                "admins for ptrace_scope 0 on compute nodes, or let the ranks allow it themselves "
                "(the preset's monitor: {allow-attach: true}, for its next jobs)")
    if scope is not None and scope >= 2:
        return (f"the kernel allows tracing only with CAP_SYS_PTRACE (Yama ptrace_scope {scope}): ask the admins "
                "for ptrace_scope 0 on compute nodes")
    if access.get("seccomp") == 2:
        return ("a seccomp filter on the node refuses ptrace (as container runtimes do without the SYS_PTRACE "
                "capability): ask the admins to allow it, or run the ranks in a container started with "
                "--cap-add SYS_PTRACE")
    return "the ranks run as another user or in a container that refuses ptrace"


def read_docs(job_id: str, docs: Mapping[str, Mapping[str, Any]], expected: Sequence[str] = ()) -> Stacks:
    """The probes' documents (by node; :func:`ntui.core.stacks.probe.decode_lines`) as grouped stacks; every node
    of ``expected`` that sent none is a problem."""
    nodes: list[NodeStacks] = []
    procs: list[ProcStack] = []
    problems: list[str] = []
    for node in sorted(docs):
        doc = docs[node]
        raw_access = doc.get("access")
        access: Mapping[str, Any] = raw_access if isinstance(raw_access, dict) else {}
        samples = [s for s in doc.get("samples") or [] if isinstance(s, dict)]
        raw_procs = [p for p in doc.get("procs") or [] if isinstance(p, dict)]
        continued = tuple(pid for s in samples for pid in s.get("continued") or [] if isinstance(pid, int))
        times = [float(s["at"]) for s in samples if isinstance(s.get("at"), (int, float))]
        error = doc.get("error") if isinstance(doc.get("error"), str) else None
        nodes.append(NodeStacks(
            node, doc.get("py_spy") if isinstance(doc.get("py_spy"), str) else None,
            _int(access.get("ptrace_scope")), bool(access.get("cap_sys_ptrace")), _int(access.get("seccomp")),
            sum(1 for p in raw_procs if p.get("role") == "agent"), continued, error,
            float(times[-1] - times[0]) if len(times) >= 2 else None))
        if error is not None:
            problems.append(f"{node}: {error}: install py-spy where ntui runs (pip install py-spy, in an "
                            "environment the compute nodes see) or name it with NTUI_PY_SPY")
        if not raw_procs:
            problems.append(f"{node}: no Python process of the job is running there")
        refused = 0
        for p in raw_procs:
            pid = _int(p.get("pid"))
            if pid is None or p.get("role") == "agent":
                continue
            stacks: list[tuple[Frame, ...] | None] = []
            threads = 0
            last_error: str | None = None
            for s in samples:
                got = _frames((s.get("stacks") or {}).get(str(pid)), pid)
                stacks.append(got[0] if got else None)
                threads = got[1] if got else threads
                err = (s.get("errors") or {}).get(str(pid))
                last_error = err if isinstance(err, str) and got is None else None
            proc = ProcStack(node, pid, str(p.get("role") or "rank"), _int(p.get("rank")), _int(p.get("local_rank")),
                             str(p.get("cmd") or ""), tuple(stacks), last_error, threads)
            procs.append(proc)
            if last_error is not None and proc.stack is None:
                low = last_error.lower()
                if "permission" in low or "eperm" in low or "not permitted" in low:
                    refused += 1
                    if refused > 1:
                        continue
                problems.append(_error_words(node, proc.label, last_error, access))
        if refused > 1:
            problems.append(f"{node}: the same refusal for {refused - 1} more process"
                            f"{'es' * (refused > 2)}")
        if continued:
            problems.append(f"{node}: {len(continued)} process(es) py-spy left stopped were continued "
                            f"(pid {', '.join(map(str, continued))})")
    for node in expected:
        if node not in docs:
            problems.append(f"{node}: no answer (the node did not run the probe in time, or its output was "
                            "lost): try again, or `ntui attach` to it and run py-spy dump by hand")
    return group(job_id, nodes, procs, problems)


def _classes(procs: Iterable[ProcStack]) -> tuple[StackClass, ...]:
    by_stack: dict[tuple[Frame, ...], list[ProcStack]] = {}
    for p in procs:
        if p.stack is not None:
            by_stack.setdefault(p.stack, []).append(p)
    classes = [StackClass(tuple(sorted(ms, key=lambda m: (m.rank is None, m.rank or 0, m.node, m.pid))), frames)
               for frames, ms in by_stack.items()]
    return tuple(sorted(classes, key=lambda c: (len(c.members), min((m.rank for m in c.members
                                                                     if m.rank is not None), default=1 << 30))))


def group(job_id: str, nodes: Sequence[NodeStacks], procs: Sequence[ProcStack], problems: Sequence[str]) -> Stacks:
    """Classes of identical latest stacks, ranks and workers apart, the fewest members first."""
    return Stacks(job_id, tuple(nodes), tuple(procs), _classes(p for p in procs if p.role == "rank"),
                  _classes(p for p in procs if p.role == "worker"), tuple(problems))
