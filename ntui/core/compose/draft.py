"""What a rule reads and what a rule is: :class:`Draft`, a preset after each section is parsed (by
:mod:`ntui.core.compose.spec`), and :class:`Rule`, one row of the rule table over it
(:mod:`ntui.core.compose.rules`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ntui.core.compose.containers import ContainerConf
from ntui.core.compose.gpureq import GpuRequest
from ntui.core.compose.longrun import RunDraft
from ntui.core.compose.sweep import SweepDraft
from ntui.core.jobfiles.samplefiles import DEFAULT_INTERVAL_S
from ntui.core.problems import Severity
from ntui.core.slurm.durations import parse_time_limit

__all__ = ["Check", "Draft", "Rule", "RuleFinding"]


@dataclass(frozen=True)
class Draft:
    """A preset after each section is parsed, before the cross-field rules run.

    ``sbatch`` holds the options that stay (``false``/``null`` already dropped) as YAML values,
    ``raw`` their text as written.
    """

    launcher: str = "srun"
    sbatch: Mapping[str, object] = field(default_factory=dict)
    raw: Mapping[str, str] = field(default_factory=dict)
    nodes: int = 1
    gpu_requests: tuple[GpuRequest, ...] = ()
    tasks_per_node: int | None = None
    nproc: int | None = None
    launcher_keys: frozenset[str] = frozenset()
    multi_gpu: bool | None = None
    cpu: bool | None = None
    master_port: int | None = None
    python_words: tuple[str, ...] | None = ("python",)
    extra_args: tuple[str, ...] = ()
    container: str = "none"
    container_conf: ContainerConf = ContainerConf()
    env: Mapping[str, str] = field(default_factory=dict)
    nccl_slingshot: bool = False
    script: str = ""
    script_exists: bool = True
    monitor_gpu: bool | None = None
    """``monitor.gpu`` as written; None (absent): on whenever the job asks for GPUs."""
    monitor_interval: int = DEFAULT_INTERVAL_S
    monitor_interval_written: bool = False
    sweep: SweepDraft | None = None
    """The ``sweep:`` section (None: the preset has none), judged by the W rules."""
    run: RunDraft | None = None
    """The ``run:`` section (None: the preset has none), judged by the T rules."""
    script_text: str = ""
    """The head of the program's file, read only for a ``run:`` section (T8)."""

    @property
    def time_limit_s(self) -> int | None:
        """``sbatch.time`` in seconds (None: absent, unlimited or not plain)."""
        raw = self.raw.get("time")
        if not raw or "$" in raw:
            return None
        try:
            return parse_time_limit(raw) or None
        except ValueError:
            return None

    @property
    def gpu_sampling(self) -> bool:
        """Whether the script starts the in-job GPU sampler (M2): as asked, else iff GPUs are requested."""
        return bool(self.gpu_requests) if self.monitor_gpu is None else self.monitor_gpu

    @property
    def gpu_request(self) -> GpuRequest | None:
        return self.gpu_requests[0] if self.gpu_requests else None

    @property
    def ntasks_per_node(self) -> int:
        """srun: one task per GPU unless given; torchrun/accelerate: one launcher per node (G1, G2)."""
        if self.tasks_per_node is not None:
            return self.tasks_per_node
        if self.launcher != "srun":
            return 1
        req = self.gpu_request
        if req is not None and req.option != "gpus-per-task" and self.gpus_per_node_of(1):
            return self.gpus_per_node_of(1)
        return 1

    def gpus_per_node_of(self, tasks_per_node: int) -> int:
        req = self.gpu_request
        if req is None:
            return 0
        if req.option == "gpus-per-task":
            return req.count * tasks_per_node
        if req.option == "gpus":
            return req.count // self.nodes if self.nodes else 0
        return req.count

    @property
    def gpus_per_node(self) -> int:
        """GPUs each node gets, whichever way they were asked for (G1, G5)."""
        return self.gpus_per_node_of(self.ntasks_per_node)

    @property
    def processes_per_node(self) -> int:
        if self.launcher == "srun":
            return self.ntasks_per_node
        if self.nproc is not None:
            return self.nproc
        return self.gpus_per_node or 1

    @property
    def world_size(self) -> int:
        return self.nodes * self.processes_per_node

    @property
    def accelerate_mode(self) -> str:
        """``multi_gpu`` (torch.distributed's launcher, also on CPU with gloo), ``cpu`` or ``single``."""
        if self.multi_gpu is None:
            if self.cpu:
                return "cpu"
            return "multi_gpu" if self.world_size > 1 else "single"
        if self.multi_gpu:
            return "multi_gpu"
        return "cpu" if self.cpu else "single"

    @property
    def rdzv_alt_read(self) -> bool:
        return self.nccl_slingshot or self.env.get("FI_CXI_RDZV_PROTO") == "alt_read"

    def job_values(self) -> dict[str, tuple[int, tuple[str, ...]]]:
        """What a site's rules may judge by name (``job.*``, core/compose/site.py ``JOB_KEYS``): each value with the
        preset key a finding about it is reported at. A node's size is a site's fact, never ntui's: no built-in
        rule judges these against a machine (docs/rules.md)."""
        req = self.gpu_request
        out: dict[str, tuple[int, tuple[str, ...]]] = {
            "job.nodes": (self.nodes, ("sbatch", "nodes")),
            "job.tasks-per-node": (self.ntasks_per_node, ("sbatch", "ntasks-per-node")),
            "job.gpus-per-node": (self.gpus_per_node, ("sbatch", req.option if req else "gpus-per-node")),
        }
        cpt = self.sbatch.get("cpus-per-task", 1)
        if isinstance(cpt, int) and not isinstance(cpt, bool):
            out["job.cpus-per-task"] = (cpt, ("sbatch", "cpus-per-task"))
            out["job.cpus-per-node"] = (cpt * self.ntasks_per_node, ("sbatch", "cpus-per-task"))
        return out


#: What a rule's condition finds: (the dotted preset key it is about, a message stating the fix).
RuleFinding = tuple[str, str]
Check = Callable[[Draft], Iterable[RuleFinding]]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    where: tuple[str, ...]
    """Preset keys (dotted, as for ``--set`` and the form) the rule applies to."""
    summary: str
    """What a preset ntui accepts is guaranteed to do (for the docs)."""
    source: str
    check: Check | None = None
    """None: a guarantee the renderer keeps for every accepted preset."""
    blocks_submit: bool = False
    """A warning for ``check``/``render`` that ``submit`` and the app's ``s`` treat as an error."""
    enforced_in: str = ""
    """For a refusal made outside ``validate`` (e.g. while applying ``--set``): where."""

    @property
    def kind(self) -> str:
        if self.check is None and not self.enforced_in:
            return "guarantee"
        return str(self.severity.value)
