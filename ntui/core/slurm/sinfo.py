"""``sinfo``: the partitions (as :class:`~ntui.core.slurm.scontrol.Partition`, with what
sinfo knows of them) and node states (``-N``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ntui.core.hosts import compress_nodelist
from ntui.core.slurm.common import (
    DEFAULT_TIMEOUT,
    _int_or_none,
    _safe_token,
    _text,
)
from ntui.core.slurm.runner import (
    CommandRunner,
    check,
)
from ntui.core.slurm.scontrol import Partition

SINFO_SEPARATOR = "\x1f"
_SINFO_FORMAT = ("%P", "%a", "%l", "%D", "%T", "%N", "%G")


def build_sinfo_partitions_argv(separator: str = SINFO_SEPARATOR) -> list[str]:
    """``sinfo -h -o '%P<S>%a<S>%l<S>%D<S>%T<S>%N<S>%G'`` (``%P`` marks the default partition with ``*``)."""
    return ["sinfo", "-h", "-o", separator.join(_SINFO_FORMAT)]


#: sinfo's partition availability (``%a``) in scontrol's spelling.
_AVAIL = {"INACT": "INACTIVE"}


def parse_sinfo_partitions(stdout: str | bytes, separator: str = SINFO_SEPARATOR) -> tuple[Partition, ...]:
    """One :class:`Partition` per partition name in :func:`build_sinfo_partitions_argv` output, in order of
    appearance: sinfo prints a line per node state, whose node counts are summed and node lists joined. Lines
    with fewer than 7 fields are dropped (extra trailing fields, as in a longer ``-o``, are ignored); node
    states and GRES (``%T``, ``%G``) are not kept."""
    out: dict[str, Partition] = {}
    for line in _text(stdout).splitlines():
        parts = line.split(separator)
        if len(parts) < len(_SINFO_FORMAT):
            continue
        name, avail, limit, count, _state, nodelist, _gres = (p.strip() for p in parts[:7])
        key = name.rstrip("*")
        nodes = _int_or_none(count)
        seen = out.get(key)
        if seen is not None:
            total = None if seen.total_nodes is None or nodes is None else seen.total_nodes + nodes
            joined = ",".join(x for x in (seen.nodes, nodelist) if x)
            out[key] = replace(seen, default=seen.default or name.endswith("*"), total_nodes=total, nodes=joined)
            continue
        state = avail.upper()
        out[key] = Partition(
            name=key,
            default=name.endswith("*"),
            state=_AVAIL.get(state, state),
            max_time=limit,
            nodes=nodelist,
            total_nodes=nodes,
        )
    return tuple(out.values())


def sinfo_partitions(
    runner: CommandRunner,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[Partition, ...]:
    res = check(runner.run(build_sinfo_partitions_argv(), timeout=timeout, env=env))
    return parse_sinfo_partitions(res.stdout)


# ---------------------------------------------------------------- node states (sinfo -N)


@dataclass(frozen=True)
class NodeState:
    """One node as ``sinfo -N`` prints it: ``state`` with Slurm's suffixes (``mixed*``: not responding,
    ``idle~``: powered down, ...) and the administrator's or Slurm's ``reason`` (``Not responding``)."""

    node: str
    state: str
    reason: str = ""

    @property
    def responding(self) -> bool:
        return not self.state.endswith("*")

    @property
    def healthy(self) -> bool:
        """Responding and in a state that runs jobs: Slurm's suffixes (``allocated+``: completing, ``mixed-``:
        planned, ``idle~``: powered down, ...) do not count. ``BLOCKED`` (24.05+: an idle node that a
        topology-exclusive job keeps from others) and ``EXTERNAL`` (an external node) are not trouble."""
        base = self.state.rstrip("*~#!%$@^-+").upper()
        return self.responding and base in _HEALTHY


#: Node states (without suffixes) that are not trouble.
_HEALTHY = frozenset({"IDLE", "MIXED", "ALLOCATED", "COMPLETING", "RESERVED", "PLANNED", "BLOCKED", "EXTERNAL"})


NODE_STATE_SEPARATOR = "\x1f"


def build_node_states_argv(nodes: Sequence[str], separator: str = NODE_STATE_SEPARATOR) -> list[str]:
    """``sinfo -h -N -n NODES -o '%N<S>%T<S>%E'`` (one line per node and partition)."""
    names = [_safe_token(n, "node name") for n in nodes]
    return ["sinfo", "-h", "-N", "-n", compress_nodelist(names), "-o", separator.join(("%N", "%T", "%E"))]


def parse_node_states(stdout: str | bytes, separator: str = NODE_STATE_SEPARATOR) -> tuple[NodeState, ...]:
    """One :class:`NodeState` per node (a node in several partitions is listed once)."""
    out: dict[str, NodeState] = {}
    for line in _text(stdout).splitlines():
        parts = line.split(separator)
        if len(parts) < 2 or not parts[0].strip():
            continue
        reason = parts[2].strip() if len(parts) > 2 else ""
        node = parts[0].strip()
        out.setdefault(node, NodeState(node, parts[1].strip(), "" if reason.lower() == "none" else reason))
    return tuple(out.values())


def node_states(
    runner: CommandRunner,
    nodes: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[NodeState, ...]:
    """The states of ``nodes`` (one sinfo call; none for no nodes)."""
    if not nodes:
        return ()
    res = check(runner.run(build_node_states_argv(nodes), timeout=timeout, env=env))
    return parse_node_states(res.stdout)
