"""The rule table: every launcher x sbatch rule ntui enforces or guarantees, in one place.

Each :class:`Rule` has an id (the reference ids P1, G5, R8, ... kept; new ones in the same style),
a severity, the preset keys it applies to (the same dotted keys ``--set`` and the form use), its
source, and either a ``check`` (a condition over the parsed :class:`Draft`, returning findings whose
messages state the fix) or, for a guarantee the renderer keeps, no check.

A rule is declared in one place, in table order: ``@rule(id, severity, keys, summary, source)`` on its condition,
or ``guarantee(...)`` for a rule without one. A new rule is one declaration at the place in the table it belongs.

``ntui check``, ``submit``, the form's inline errors (all through ``spec.validate``), ``docs/rules.md``
and the README section "What the generated script guarantees" come from :data:`RULES`
(``python -m ntui.core.compose.rules --markdown`` regenerates the document, written by
:mod:`~ntui.core.compose.rulesdoc`).

Adding a preset section (as ``monitor:`` was) means: parse it in ``spec`` into a field of
:class:`~ntui.core.compose.draft.Draft`, then add its rules here.

One responsibility, hence one file even past 600 lines: the table and its conditions. Beside it: what a rule reads
(:mod:`~ntui.core.compose.draft`), the GPU request (:mod:`~ntui.core.compose.gpureq`), the rendezvous
configuration in the extra args (:mod:`~ntui.core.compose.rdzvconf`), sbatch's options
(:mod:`ntui.core.slurm.options`) and the documents (:mod:`~ntui.core.compose.rulesdoc`).
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from ntui.core.compose.containers import (
    APPTAINER_CLEANENV,
    WHOLE_SCRIPT_OPTIONS,
    namespace_options,
)
from ntui.core.compose.draft import Check, Draft, Rule, RuleFinding
from ntui.core.compose.gpureq import DECIMAL
from ntui.core.compose.launchcli import read_extra_args
from ntui.core.compose.rdzvconf import RDZV_CONF_OPTIONS, split_rdzv_conf
from ntui.core.compose.rulesdoc import markdown, readme_section
from ntui.core.compose.sweep import SLURM_MAX_ARRAY_SIZE, parse_template, placeholder_refs
from ntui.core.jobfiles.samplefiles import DEFAULT_INTERVAL_S
from ntui.core.problems import Problem, Severity, Source
from ntui.core.slurm.options import INT_OPTIONS, SBATCH_FLAGS, SBATCH_PURE_FLAGS, SITE_OPTIONS

#: The Linux default ephemeral port range (net.ipv4.ip_local_port_range).
EPHEMERAL_PORTS = range(32768, 61000)
#: MASTER_PORT = PORT_BASE + job id % PORT_SPAN stays below the ephemeral range (R4).
PORT_BASE = 15000
PORT_SPAN = 17000
#: The in-job GPU sampler's interval bounds in seconds (M1): nvidia-smi -l takes whole seconds; above an hour a
#: job's report has too few samples to say anything (a 6 h job: 6 per GPU).
MONITOR_INTERVAL_MIN = 1
MONITOR_INTERVAL_MAX = 3600

#: Launcher options ntui sets itself; a copy in ``launcher.extra-args`` would replace or fight them.
OWNED_LAUNCHER_ARGS: Mapping[str, tuple[str, ...]] = {
    "torchrun": (
        "--rdzv-endpoint", "--rdzv-backend", "--rdzv-id", "--nnodes", "--nproc-per-node",
        "--standalone", "--node-rank", "--master-addr", "--master-port", "--no-python",
        "--module", "--run-path", "--help",
    ),
    "accelerate": (
        "--main_process_ip", "--main_process_port", "--rdzv_backend", "--num_processes",
        "--num_machines", "--machine_rank", "--config_file", "--multi_gpu", "--cpu", "--no_python",
        "--mixed_precision", "--dynamo_backend", "--gpu_ids", "--module", "--help",
    ),
    "srun": (),
}
SLINGSHOT_ENV = (
    ("FI_MR_CACHE_MONITOR", "userfaultfd"),
    ("FI_CXI_DISABLE_HOST_REGISTER", "1"),
    ("FI_CXI_DEFAULT_CQ_SIZE", "131072"),
    ("FI_CXI_RDZV_PROTO", "alt_read"),
    ("FI_CXI_RDZV_EAGER_SIZE", "0"),
    ("FI_CXI_RDZV_GET_MIN", "0"),
    ("FI_CXI_DEFAULT_TX_SIZE", "2048"),
    ("FI_CXI_RX_MATCH_MODE", "hybrid"),
    ("NCCL_CROSS_NIC", "1"),
    ("NCCL_NET_GDR_LEVEL", "PHB"),
    ("NCCL_SOCKET_IFNAME", "hsn0,hsn1,hsn2,hsn3"),
)

_SIGNAL = re.compile(r"^(?:[RB]{1,2}:)?\w+(?:@(\d+))?$")


# ----------------------------------------------------------------------------- declaring a rule


_E = Severity.ERROR
_W = Severity.WARNING
_GPU_KEYS = ("sbatch.gpus-per-node", "sbatch.gpus-per-task", "sbatch.gpus", "sbatch.gres")
_PTS = ("launcher.type", "sbatch.nodes", "sbatch.ntasks-per-node", "launcher.nproc-per-node")


_REGISTERED: list[Rule] = []


def rule(rule_id: str, severity: Severity, where: tuple[str, ...], summary: str, source: str, *,
         blocks_submit: bool = False) -> Callable[[Check], Check]:
    """The decorated condition is rule ``rule_id``: the rule's metadata sits on its condition, and the table's order
    is the order the rules are declared in below."""

    def register(check: Check) -> Check:
        _REGISTERED.append(Rule(rule_id, severity, where, summary, source, check, blocks_submit=blocks_submit))
        return check

    return register


def guarantee(rule_id: str, severity: Severity, where: tuple[str, ...], summary: str, source: str, *,
              enforced_in: str = "") -> None:
    """A rule without a condition over the draft: a guarantee the renderer keeps, or a refusal made elsewhere
    (``enforced_in``)."""
    _REGISTERED.append(Rule(rule_id, severity, where, summary, source, enforced_in=enforced_in))


# ----------------------------------------------------------------------------- what the conditions share


def _options(d: Draft, names: Iterable[str]) -> Iterator[tuple[str, str]]:
    for opt in names:
        if opt in d.sbatch:
            yield opt, d.raw.get(opt, str(d.sbatch[opt]))


def _directive_texts(d: Draft) -> Iterable[tuple[str, str]]:
    for opt, value in d.sbatch.items():
        if value is True:
            continue
        yield opt, d.raw.get(opt, str(value))


#: Why an owned option that is not a setting ntui writes is refused (R11).
_RULED_OUT = {
    "--module": "ntui runs each rank's program through its worker (--no-python), which the launcher refuses "
                "beside --module; set launcher.python and script instead",
    "--run-path": "it runs the program in the launcher's own Python, which ntui's worker script is not",
    "--help": "the launcher would print its help and exit 0: the job would end COMPLETED without training",
}


#: The signals torchrun's and accelerate's agents handle themselves (torch.distributed.elastic: TERM, INT, HUP, QUIT
#: by default): the agent stops its workers on them.
AGENT_SIGNALS = ("TERM", "INT", "HUP", "QUIT")


_LIGHTNING = re.compile(r"^\s*(?:import|from)\s+(?:lightning|pytorch_lightning)\b", re.MULTILINE)


# ----------------------------------------------------------------------------- the table, rule by rule


# Directive block
guarantee("P1", _E, ("sbatch",), "Every #SBATCH line comes before the first command; `set -euo pipefail` "
          "after them.", "sbatch.1; NVIDIA-NeMo/Megatron-Bridge#3068")
guarantee("P2", _E, ("sbatch",), "Directives are spelled `#SBATCH --option` in column 0.",
          "SchedMD/slurm:src/sbatch/opt.c")


@rule("P3", _E, ("sbatch",), "Directive values contain no `$`/backquote (sbatch does not expand them); paths are "
      "resolved by ntui.", "sbatch.1")
def _p3(d: Draft) -> Iterable[RuleFinding]:
    for opt, text in _directive_texts(d):
        if "$" in text or "`" in text:
            yield f"sbatch.{opt}", "directives get no shell expansion; write the value out, paths in full"


@rule("P4", _E, ("sbatch",), "Directive values are single, non-empty lines, quoted with shlex.quote.",
      "SchedMD/slurm:src/sbatch/opt.c")
def _p4(d: Draft) -> Iterable[RuleFinding]:
    for opt, text in _directive_texts(d):
        if any(ch in text for ch in "\n\r\x00"):
            yield f"sbatch.{opt}", "must be a single line (a directive cannot span lines)"
        elif text == "":
            yield f"sbatch.{opt}", "empty value; use false to leave the option out"


@rule("P5", _E, ("sbatch",), "No directive value starts with `:` (the hetjob separator).",
      "SchedMD/slurm:src/sbatch/opt.c")
def _p5(d: Draft) -> Iterable[RuleFinding]:
    for opt, text in _directive_texts(d):
        if text.startswith(":"):
            yield f"sbatch.{opt}", "a directive value may not start with ':' (it separates hetjob components)"


@rule("V3", _E, ("sbatch",), "Options that need a value never become bare flags (`qos: true` would swallow "
      "the next directive); pure flags never get a value.", "sbatch.1 (option synopsis)")
def _v3(d: Draft) -> Iterable[RuleFinding]:
    for opt, value in d.sbatch.items():
        if value is True and opt not in SBATCH_FLAGS:
            yield (f"sbatch.{opt}", f"--{opt} needs a value; true would make sbatch read the next directive "
                   f"as it. Write the value (quote it if it is text like \"yes\"), or false to leave it out")
        elif value is not True and opt in SBATCH_PURE_FLAGS:
            yield (f"sbatch.{opt}", f"--{opt} is a flag and takes no value: write true, or false to leave it out")


guarantee("V6", _E, ("extends",), "`extends` is read from preset files only; `--set extends=...` is refused "
          "instead of silently ignored.", "ntui preset model", enforced_in="presets.apply_overrides")


@rule("V4", _E, tuple(f"sbatch.{o}" for o in INT_OPTIONS), "Integer options are plain decimal: YAML 1.1 "
      "forms (010, 0x10, 2:4) are refused instead of silently becoming 8, 16, 124.", "YAML 1.1 int type")
def _v4(d: Draft) -> Iterable[RuleFinding]:
    for opt, text in _options(d, INT_OPTIONS):
        value = d.sbatch[opt]
        if isinstance(value, int) and not isinstance(value, bool) and not DECIMAL.fullmatch(text.strip()):
            yield (f"sbatch.{opt}", f"{text!r} is read by YAML 1.1 as {value}, not what it looks like; "
                   f"write the number in plain decimal")


@rule("J1", _E, ("sbatch.signal",), "`--signal` is `[{R|B}:]SIG[@SECONDS]` with SECONDS in 0..65535.",
      "sbatch.1")
def _j1(d: Draft) -> Iterable[RuleFinding]:
    for _, text in _options(d, ("signal",)):
        m = _SIGNAL.match(text)
        if not m or (m.group(1) and int(m.group(1)) > 65535):
            yield "sbatch.signal", "expected [{R|B}:]SIG[@SECONDS] with SECONDS in 0..65535"


# Tasks and GPUs
@rule("G1", _E, ("sbatch.ntasks-per-node", *_GPU_KEYS), "srun launcher: tasks per node equal GPUs per node, "
      "for every way of asking for GPUs (gpus-per-node, gpus-per-task, gpus, gres, typed or not).",
      "kempnerinstitute KempnerForge slurm-distributed-setup; Lightning-AI cluster_advanced.rst")
def _g1(d: Draft) -> Iterable[RuleFinding]:
    gpn = d.gpus_per_node
    if d.launcher == "srun" and gpn and d.ntasks_per_node != gpn:
        yield ("sbatch.ntasks-per-node", f"srun launcher: tasks per node ({d.ntasks_per_node}) must equal GPUs "
               f"per node ({gpn}), or local ranks map to the wrong GPUs; set ntasks-per-node: {gpn}")


@rule("G2", _E, ("sbatch.ntasks-per-node", "launcher.nproc-per-node", *_GPU_KEYS), "torchrun/accelerate: one "
      "task per node, processes per node equal GPUs per node.", "pytorch/pytorch:torch/distributed/run.py")
def _g2(d: Draft) -> Iterable[RuleFinding]:
    if d.launcher == "srun":
        return
    if d.ntasks_per_node != 1:
        yield ("sbatch.ntasks-per-node", f"{d.launcher} runs one launcher per node: ntasks-per-node must be 1, "
               f"got {d.ntasks_per_node}")
    gpn = d.gpus_per_node
    if gpn and d.processes_per_node != gpn:
        yield ("launcher.nproc-per-node", f"{d.launcher}: processes per node ({d.processes_per_node}) must equal "
               f"GPUs per node ({gpn}); set launcher.nproc-per-node: {gpn}")


@rule("G3", _E, _GPU_KEYS, "GPUs are asked for in exactly one way (gpus-per-node, gpus-per-task, gpus or "
      "gres).", "sbatch.1, srun.1")
def _g3(d: Draft) -> Iterable[RuleFinding]:
    if len(d.gpu_requests) > 1:
        names = ", ".join(r.option for r in d.gpu_requests)
        yield (f"sbatch.{d.gpu_requests[1].option}", f"GPUs asked for in more than one way ({names}); "
               "they are mutually exclusive: keep one (gpus-per-node is the usual)")


@rule("G4", _E, ("sbatch.gpus-per-task", "sbatch.ntasks"), "`--gpus-per-task` comes with an explicit "
      "`--ntasks`.", "srun.1; meta-pytorch/torchx#1100")
def _g4(d: Draft) -> Iterable[RuleFinding]:
    req = d.gpu_request
    if req is not None and req.option == "gpus-per-task" and "ntasks" not in d.sbatch:
        yield ("sbatch.gpus-per-task", "--gpus-per-task needs an explicit --ntasks or --gpus; set "
               f"sbatch.ntasks: {d.nodes * d.ntasks_per_node} (nodes x tasks per node) or use gpus-per-node")


guarantee("G5", _E, _GPU_KEYS, "Whenever GPUs are requested (any style), srun gets `--gpu-bind=none`: every task "
          "sees all of its node's GPUs, so `cuda:LOCAL_RANK` exists and CUDA IPC works.",
          "srun.1 (--tres-bind); SchedMD bug 17793; NERSC/sc25-dl-tutorial:submit_pm.sh")


@rule("G9", _E, ("sbatch.ntasks",), "`ntasks`, when given, equals nodes x tasks per node (one launcher per "
      "node for torchrun/accelerate).", "sbatch.1; pytorch/pytorch:torch/distributed/run.py")
def _g9(d: Draft) -> Iterable[RuleFinding]:
    n = d.sbatch.get("ntasks")
    want = d.nodes * d.ntasks_per_node
    if isinstance(n, int) and not isinstance(n, bool) and n != want:
        what = "one launcher per node" if d.launcher != "srun" else "nodes x ntasks-per-node"
        yield ("sbatch.ntasks", f"ntasks ({n}) must be {want} ({what}): other counts leave ranks out or start "
               "extra launchers; drop ntasks (ntui sets the layout) or set it to that")


@rule("G10", _E, ("sbatch.gpus",), "`--gpus` (a job total) is only used on one node; several nodes use "
      "gpus-per-node, which Slurm places evenly.", "sbatch.1 (--gpus); outerloop-science/outerloop#176")
def _g10(d: Draft) -> Iterable[RuleFinding]:
    req = d.gpu_request
    if req is not None and req.option == "gpus" and d.nodes > 1:
        yield ("sbatch.gpus", "--gpus is a total that Slurm may spread unevenly over nodes; with several nodes "
               f"use gpus-per-node: {req.count // d.nodes or 1} instead")


@rule("G11", _W, ("launcher.nproc-per-node",), "Warns that nproc-per-node is ignored by the srun launcher.",
      "ntui launcher model")
def _g11(d: Draft) -> Iterable[RuleFinding]:
    if d.launcher == "srun" and "nproc-per-node" in d.launcher_keys:
        yield "launcher.nproc-per-node", "ignored by the srun launcher (one task per rank); remove it"


guarantee("C1", _E, ("sbatch.cpus-per-task",), "srun always gets `--cpus-per-task=$SLURM_CPUS_PER_TASK` (and "
          "SRUN_CPUS_PER_TASK for Slurm 22.05-23.02).", "RELEASE_NOTES (slurm-22.05); srun.1")


@rule("C4", _E, ("sbatch.cpus-per-gpu",), "`cpus-per-gpu` is refused: sbatch rejects it beside the "
      "`cpus-per-task` ntui always sets.", "sbatch.1 (--cpus-per-gpu)")
def _c4(d: Draft) -> Iterable[RuleFinding]:
    if "cpus-per-gpu" in d.sbatch:
        yield ("sbatch.cpus-per-gpu", "sbatch refuses cpus-per-gpu beside cpus-per-task, which ntui always sets "
               "(C1); set cpus-per-task to the CPUs each task needs instead")


# Rendezvous
guarantee("R1", _E, ("launcher.type",), "MASTER_ADDR is the first host of SLURM_JOB_NODELIST, computed in the batch "
          "shell outside any container; the job stops if it cannot be resolved (R2).", "sbatch.1; NVIDIA/pyxis#129")


@rule("R4", _W, ("launcher.master-port",), "MASTER_PORT = 15000 + job id % 17000 (15000-31999): two jobs on "
      "one node differ, and the port is below the kernel's ephemeral range; a port some process on the first node "
      "already listens on is stepped over to the next free one, by the batch shell there. A fixed port warns.",
      "Lightning-AI slurm.py environment; rwth-i6/i6_core#552")
def _r4(d: Draft) -> Iterable[RuleFinding]:
    if d.master_port is not None:
        yield ("launcher.master-port", "a fixed port collides when two jobs share the first node; prefer auto "
               "(derived from the job id)")


@rule("R12", _E, ("launcher.master-port",), "A fixed master-port is never in the ephemeral range "
      "32768-60999.", "Linux ip-sysctl (ip_local_port_range)")
def _r12(d: Draft) -> Iterable[RuleFinding]:
    if d.master_port is not None and d.master_port in EPHEMERAL_PORTS:
        yield ("launcher.master-port", f"{d.master_port} is in the kernel's ephemeral range "
               f"({EPHEMERAL_PORTS.start}-{EPHEMERAL_PORTS.stop - 1}), where any outgoing connection may hold it; "
               "pick a port below 32768, or auto")


guarantee("R5", _E, ("sbatch.nodes", "launcher.type"), "One node: torchrun uses --standalone (a free port); "
          "accelerate uses static rendezvous on $MASTER_PORT, never c10d's default 29400, so two jobs can share "
          "a node.", "torch/distributed/run.py; huggingface/accelerate:src/accelerate/utils/launch.py")
guarantee("R6", _E, ("launcher.type",), "Several nodes: c10d rendezvous at $MASTER_ADDR:$MASTER_PORT with "
          "rdzv-id $SLURM_JOB_ID.", "torch/distributed/run.py")
guarantee("R8", _E, ("launcher.type",), "Several nodes: node 0 hosts the c10d store (`--rdzv-conf "
          "is_host=...`, expanded per task), whatever the host names look like.", "pytorch/pytorch#73656")


@rule("R11", _E, ("launcher.extra-args",), "launcher.extra-args cannot repeat an option ntui sets "
      "(rendezvous endpoint/backend/id, counts, accelerate mode/config): it would silently replace ntui's. "
      "A `--rdzv-conf` is merged instead (R13).",
      "torch/distributed/run.py; accelerate launch --help")
def _r11(d: Draft) -> Iterable[RuleFinding]:
    owned = OWNED_LAUNCHER_ARGS.get(d.launcher, ())
    for word in read_extra_args(d.launcher, d.extra_args):
        if word.problem is None and word.option is not None and word.option in owned:  # a typo is R14's
            name = d.extra_args[word.index].split("=", 1)[0]
            why = _RULED_OUT.get(word.option.replace("_", "-"))
            yield (f"launcher.extra-args.{word.index}", f"{name}: {why}" if why else
                   f"{name} is set by ntui (rendezvous, process counts, mode); a copy here would replace or "
                   "contradict it. Use the matching preset key instead")


@rule("R13", _E, ("launcher.extra-args",), "A `--rdzv-conf`/`--rdzv_conf` in launcher.extra-args (either "
      "spelling, `=VALUE` or the next word) is merged with ntui's per-node `is_host` into the one option "
      "the launcher reads (torchrun and accelerate keep only the last one given); an `is_host` key (R8) or a "
      "value torch refuses (not `KEY=VALUE,...`) is refused.",
      "torch/distributed/run.py (--rdzv-conf); torch/distributed/elastic/rendezvous/utils.py "
      "(_parse_rendezvous_config); accelerate launch --help (--rdzv_conf)")
def _r13(d: Draft) -> Iterable[RuleFinding]:
    if d.launcher in ("torchrun", "accelerate"):
        for i, message in split_rdzv_conf(d.launcher, d.extra_args).errors:
            yield f"launcher.extra-args.{i}", message


@rule("R14", _E, ("launcher.extra-args",), "launcher.extra-args is read word by word as torchrun (torch "
      "2.13) or accelerate launch (accelerate 1.15) reads it. Refused: an abbreviation (torchrun takes one "
      "silently, past R11 and R13), an ambiguous or unknown option, a flag with a value, an option without "
      "its value or with one its parser refuses (a number, a choice), and a bare word (the launcher would "
      "take it as the program). The srun launcher takes none (ntui writes its srun line).",
      "torch/distributed/run.py (get_args_parser); accelerate launch --help; Python argparse (allow_abbrev)")
def _r14(d: Draft) -> Iterable[RuleFinding]:
    if d.launcher == "srun" and d.extra_args:
        yield ("launcher.extra-args", "the srun launcher takes no extra arguments (ntui writes its srun line, and "
               "would drop them); set srun options through the variables srun reads, in env (SLURM_CPU_BIND: "
               "cores, SLURM_DISTRIBUTION: block:block, SLURM_MPI_TYPE: pmi2), or the matching sbatch keys")
    for word in read_extra_args(d.launcher, d.extra_args):
        if word.problem is not None and d.extra_args[word.index].partition("=")[0] not in RDZV_CONF_OPTIONS:
            yield f"launcher.extra-args.{word.index}", word.problem  # the option spelled in full is R13's


# Per task
guarantee("Q1", _E, ("launcher.type",), "Per-task variables (SLURM_PROCID, SLURM_NODEID, RANK) expand only inside "
          "fixed single-quoted payloads run by each task.", "docs.nersc.gov/machinelearning/launchers; "
          "huggingface/accelerate#2816")
guarantee("Q2", _E, ("args", "env", "script"), "User values are single shell words (shlex.quote) and reach the "
          "program verbatim; the program is exec'd (Q4).", "pytorch/torchx:torchx/components/dist.py")


@rule("Q7", _E, ("launcher.python",), "launcher.python is split into words like a shell would "
      "(`python -u` is two words); unsplittable text is refused.", "ntui launcher model")
def _q7(d: Draft) -> Iterable[RuleFinding]:
    if d.python_words is None:
        yield "launcher.python", "cannot split into words (unbalanced quote?); e.g. python: python -u"
    elif not d.python_words:
        yield "launcher.python", "empty; write the interpreter, e.g. python"


guarantee("E3", _E, ("sbatch.export",), "The launch step runs with `srun --export=ALL`, so MASTER_ADDR/PORT, PATH "
          "and ntui's variables reach every task whatever sbatch.export says.", "sbatch.1; OSC/ondemand#1847")


# accelerate
guarantee("A1", _E, ("launcher.type",), "accelerate reads an explicit config written by the job, never "
          "$HF_HOME/accelerate/default_config.yaml: a stray `accelerate config` result (gpu_ids, debug, unknown "
          "keys) cannot change or abort the launch.",
          "huggingface/accelerate:src/accelerate/commands/launch.py (_validate_launch_command)")


@rule("A2", _E, ("launcher.multi-gpu", "launcher.cpu", *_PTS), "accelerate with more than one process in all "
      "always uses --multi_gpu (otherwise each node runs alone).",
      "huggingface/accelerate:src/accelerate/commands/launch.py")
def _a2(d: Draft) -> Iterable[RuleFinding]:
    if d.launcher == "accelerate" and d.accelerate_mode != "multi_gpu" and d.world_size > 1:
        key = "launcher.cpu" if d.cpu else "launcher.multi-gpu"
        yield (key, f"accelerate starts {d.world_size} processes only with --multi_gpu (torch.distributed's "
               "launcher, also on CPU nodes with gloo); without it each node runs alone. Set multi-gpu: true "
               "and drop cpu, or run 1 node x 1 process")


@rule("A3", _E, ("launcher.cpu", "launcher.multi-gpu"), "accelerate --cpu and --multi_gpu are never both set.",
      "huggingface/accelerate:src/accelerate/commands/launch.py")
def _a3(d: Draft) -> Iterable[RuleFinding]:
    if d.launcher == "accelerate" and d.multi_gpu and d.cpu:
        yield "launcher.cpu", "--multi_gpu and --cpu are exclusive; set only one"


@rule("A4", _E, ("launcher.multi-gpu",), "accelerate --multi_gpu is only used with 2 or more processes.",
      "huggingface/accelerate:src/accelerate/commands/launch.py")
def _a4(d: Draft) -> Iterable[RuleFinding]:
    if d.launcher == "accelerate" and d.multi_gpu and d.world_size < 2:
        yield "launcher.multi-gpu", "accelerate --multi_gpu needs at least 2 processes in all; drop multi-gpu"


@rule("A6", _W, ("launcher.mixed-precision", "launcher.multi-gpu", "launcher.cpu", "launcher.dynamo-backend"),
      "Warns about accelerate-only keys on another launcher.", "ntui launcher model")
def _a6(d: Draft) -> Iterable[RuleFinding]:
    if d.launcher != "accelerate":
        for key in ("mixed-precision", "multi-gpu", "cpu", "dynamo-backend"):
            if key in d.launcher_keys:
                yield f"launcher.{key}", f"only used by the accelerate launcher, ignored by {d.launcher}; remove it"


# Logs
guarantee("L1", _E, ("logs.dir",), "The batch log is `--output=<absolute dir>/<name>-%j.out`, appended (L5).",
          "sbatch.1")
guarantee("L5", _E, ("sbatch.open-mode",), "Batch and rank logs are opened in append mode, so a requeued job "
          "keeps its earlier output.", "sbatch.1 (--open-mode)")
guarantee("N4", _E, ("nccl.debug",), "NCCL_DEBUG is off unless nccl.debug is set.",
          "docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html")
guarantee("N7", _E, ("env",), "PYTHONUNBUFFERED=1 and SLURM_UNBUFFEREDIO=1, so logs stream.",
          "pytorch/torchx slurm_scheduler.py; NVIDIA-NeMo/Run")
guarantee("E1", _E, ("sbatch",), "Submitting removes SBATCH_* from sbatch's environment (they would override "
          "the directives you approved), with a warning; inside an allocation also SLURM_*/SRUN_* (E2).",
          "sbatch.1 (INPUT ENVIRONMENT VARIABLES); mehta-lab/waveorder#201")
guarantee("L2", _E, ("logs.dir",), "Every rank writes `<name>-<jobid>-rank-<global rank>.out`; a one-process "
          "job logs as rank 0.", "srun.1 (%t)")
guarantee("J2", _E, ("logs.dir", "setup"), "The batch shell keeps an event journal `<name>-<jobid>.events` "
          "next to the logs: one JSON line per event (allocation with restart count and nodes, launch step start "
          "and end with its status, a signal, requeue, the end with the final status), each one write, appended by "
          "that shell only, never on the program's output; ntui reads a job's end from it with no Slurm call. Its "
          "EXIT trap keeps the exit status and runs the EXIT traps set after it (the GPU sampler's, the setup's "
          "once the setup is done) instead of being replaced; signal traps only where the setup set none, and none "
          "during the launch step (a signal there ends the shell at once, as before); from the launch line on, an "
          "ERR trap (where the setup set none) takes SIGTERM the moment the step fails, so Slurm's SIGTERM landing "
          "as the shell begins to exit is noted, never lost.",
          "bash(1) (trap, EXIT, signals during a foreground command); sbatch.1 (SLURM_RESTART_COUNT); "
          "ntui.core.jobfiles.journal")


# Container, network, program
@rule("K1", _E, ("container.runtime", "container.image", "sbatch.image"), "A container runtime needs an image: "
      "`container.image` (for Shifter, `sbatch.image` also does).", "NERSC Shifter docs; each runtime's run command")
def _k1(d: Draft) -> Iterable[RuleFinding]:
    c = d.container_conf
    if not c.active or c.image:
        return
    if d.container == "shifter":
        if "image" not in d.sbatch:
            yield "container.runtime", "shifter needs an image: container.image (or sbatch.image), e.g. " \
                "nersc/pytorch:25.02.01"
    else:
        yield "container.image", f"{d.container} needs container.image (e.g. {_IMAGE_EXAMPLE[d.container]})"


_IMAGE_EXAMPLE = {"podman-hpc": "nersc/pytorch:25.02.01 after podman-hpc pull", "podman": "localhost/train:1",
                  "apptainer": "/path/to/train.sif", "singularity": "/path/to/train.sif",
                  "pyxis": "nvcr.io#nvidia/pytorch:25.02-py3 or /path/to/train.sqsh",
                  "charliecloud": "/path/to/image-directory or train.sqfs"}


@rule("K2", _W, ("sbatch.image", "container.image", "container.mounts", "container.workdir", "container.options"),
      "Warns about container settings no runtime reads: an image, mounts, workdir or options without "
      "`container.runtime`, `sbatch.image` (Shifter's) under another runtime, and a Shifter job naming two "
      "images.", "NERSC Shifter docs")
def _k2(d: Draft) -> Iterable[RuleFinding]:
    c = d.container_conf
    if not c.active:
        if "image" in d.sbatch:
            yield ("sbatch.image", "an image without container.runtime: shifter is pulled but not used; the job "
                   "runs on the host. Set container.runtime: shifter, or image: false")
        for key, value in (("image", c.image), ("mounts", c.mounts), ("workdir", c.workdir),
                           ("options", c.options)):
            if value:
                yield f"container.{key}", "no container.runtime is set: the job runs on the host and this is unused"
    elif d.container != "shifter" and "image" in d.sbatch:
        yield ("sbatch.image", f"sbatch.image is read by Shifter only; {d.container} runs container.image "
               f"({c.image or 'unset'}). Remove sbatch.image")
    elif c.image and d.raw.get("image") not in (None, c.image):
        yield ("container.image", f"shifter runs container.image ({c.image}), not sbatch.image "
               f"({d.raw['image']}): keep one of them")


@rule("K3", _E, ("container.options",), "podman and podman-hpc run every rank in the host's network, IPC and PID "
      "namespaces (`--net host --ipc host --pid host`): in a private network the ranks cannot reach the rendezvous "
      "address or each other's NCCL sockets, a private /dev/shm breaks NCCL's shared memory, and in private PID "
      "namespaces torch elastic's agents of two containers on one host share a pid and never complete the "
      "rendezvous.",
      "podman-run(1) --network, --ipc; NERSC/podman-hpc modules.d")
def _k3(d: Draft) -> Iterable[RuleFinding]:
    if d.container in ("podman", "podman-hpc"):
        for opt in namespace_options(d.container_conf.options):
            yield ("container.options", f"{opt!r} takes the ranks off the host's network, IPC or PID namespace: "
                   "the rendezvous and NCCL need them; remove it (ntui passes --net host --ipc host --pid host)")


@rule("K4", _E, ("container.options",), "Apptainer/Singularity without `--cleanenv`, `-e`, `--containall` or "
      "`-C`: each clears the environment, so every rank loses SLURM_PROCID and MASTER_ADDR and believes it is "
      "rank 0 of a one-process job.", "Apptainer user guide (environment and metadata)")
def _k4(d: Draft) -> Iterable[RuleFinding]:
    if d.container in ("apptainer", "singularity"):
        for opt in d.container_conf.options:
            if opt in APPTAINER_CLEANENV:
                yield ("container.options", f"{opt} clears the environment: the ranks lose SLURM_PROCID and "
                       "MASTER_ADDR and all start as rank 0. Remove it; set what the image needs in env:")


@rule("K5", _E, tuple(f"sbatch.{o}" for o in WHOLE_SCRIPT_OPTIONS), "No whole-script container (`#SBATCH "
      "--container-image`, `--container`, `--environment`): the batch script would run inside the image, which "
      "has neither srun nor scontrol, so there is no launch step and no rendezvous address; the container "
      "belongs to each task (`container.runtime`).", "NVIDIA/pyxis wiki (FAQ); Slurm containers guide; CSCS "
      "container engine docs")
def _k5(d: Draft) -> Iterable[RuleFinding]:
    for opt in WHOLE_SCRIPT_OPTIONS:
        if opt in d.sbatch:
            yield (f"sbatch.{opt}", "runs the whole batch script in the image, where srun and scontrol do not "
                   "exist: use container.runtime (pyxis for --container-image) and container.image instead")
    for opt in SITE_OPTIONS:
        if opt in d.sbatch and opt not in WHOLE_SCRIPT_OPTIONS:
            yield (f"sbatch.{opt}", "a Pyxis task option: set container.runtime: pyxis and its container.* keys")


@rule("K6", _W, ("container.runtime", "container.options"), "Plain podman passes no GPU unless asked (a CDI "
      "device such as `--device nvidia.com/gpu=all`); podman-hpc's `--gpu` module does it for you.",
      "podman-run(1) --device; NERSC/podman-hpc modules.d/gpu.yaml")
def _k6(d: Draft) -> Iterable[RuleFinding]:
    if d.container == "podman" and d.gpu_requests and not any(
            o.startswith(("--device", "--gpus")) for o in d.container_conf.options):
        yield ("container.options", "the job asks for GPUs but podman passes none to the container: add "
               "--device nvidia.com/gpu=all (CDI) or the site's equivalent, or use podman-hpc")


guarantee("K7", _E, ("container.runtime",), "Only each task's command runs in the container: the batch shell, "
          "where MASTER_ADDR and MASTER_PORT are computed (R1-R4), the journal and the GPU sampler stay on the host. "
          "podman's run is named after the job, step and task and killed by name when Slurm signals the task (its "
          "container runs outside the step's processes); it gets `--net host --ipc host --pid host` and `-e` for "
          "every variable the ranks read (SLURM*, NTUI*, MASTER_ADDR/PORT, TORCH*, NCCL*, FI_*, the preset's env); "
          "the log directory and the program's folder are mounted at their own path under podman, Apptainer, Pyxis "
          "and Charliecloud; Apptainer gets `--nv` for a GPU job unless the options name `--rocm`.",
          "ntui.core.compose.containers")


guarantee("N2", _E, ("nccl.slingshot", "env.FI_CXI_RDZV_PROTO"), "When FI_CXI_RDZV_PROTO=alt_read is set (the "
          "Slingshot profile or env), srun gets `--network=disable_rdzv_get`, which that setting requires.",
          "HewlettPackard/shs-ccl-docs:ccl_env.sh")
guarantee("N5", _E, ("env.OMP_NUM_THREADS",), "srun launcher: OMP_NUM_THREADS defaults to the task's CPUs.",
          "NERSC launchers page")
guarantee("D1", _E, ("env.TORCH_FR_DUMP_TEMP_FILE", "env.TORCH_NCCL_DEBUG_INFO_TEMP_FILE"), "PyTorch's "
          "flight-recorder dumps (each rank's record of its last collectives, written when one times out) go next "
          "to the job's logs as `<stem>-<jobid>-flight-recorder-rank-<rank>`, under both of the variable's names "
          "(the older one before torch 2.6), not to `~/.cache/torch`, where jobs on many nodes would mix; a "
          "preset's env wins.", "pytorch/pytorch:torch/csrc/distributed/c10d/FlightRecorder.hpp (DebugInfoWriter)")
guarantee("D2", _E, ("monitor.allow-attach",), "`monitor: {allow-attach: true}` (off by default: it loosens a "
          "protection) makes every rank call prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY) through a sitecustomize "
          "written next to the logs and put first on PYTHONPATH (the environment's own sitecustomize still runs), so "
          "that `ntui stacks` can attach where Yama's ptrace_scope is 1 (tracing by ancestors only).",
          "man PR_SET_PTRACER(2const); Linux Documentation/admin-guide/LSM/Yama.rst")
guarantee("D3", _E, ("env.PYTHONFAULTHANDLER",), "PYTHONFAULTHANDLER=1: a rank killed by a fault signal (SIGSEGV, "
          "SIGABRT, SIGFPE, SIGBUS, SIGILL) writes `Fatal Python error: ...` and its Python stack to its own log, so "
          "triage names the rank and the signal even when srun stops the launcher that would have reported it; a "
          "preset's env wins.", "Python docs: faulthandler, PYTHONFAULTHANDLER")


@rule("F1", _W, ("script",), "The script exists on the submitting host: a warning for check/render, an "
      "error for submit and the app's `s`.", "ntui submit model", blocks_submit=True)
def _f1(d: Draft) -> Iterable[RuleFinding]:
    if d.script and not d.script_exists:
        yield "script", f"{d.script} does not exist on this host; fix the path"


guarantee("F2", _E, ("script",), "A relative script path is taken from the directory of the preset file that "
          "wrote it (through extends); from --set, from the current directory.", "ntui preset model")


# In-job GPU sampling
@rule("M1", _E, ("monitor.interval",), f"The in-job GPU sampling interval is whole seconds from "
      f"{MONITOR_INTERVAL_MIN} to {MONITOR_INTERVAL_MAX} (default {DEFAULT_INTERVAL_S}: a 24 h job with 4 GPUs "
      "writes about 35k lines per node).", "nvidia-smi.1 (-l); ntui sampler model")
def _m1(d: Draft) -> Iterable[RuleFinding]:
    n = d.monitor_interval
    if d.gpu_sampling and not MONITOR_INTERVAL_MIN <= n <= MONITOR_INTERVAL_MAX:
        yield ("monitor.interval", f"{n} s: the GPU sampling interval is whole seconds from {MONITOR_INTERVAL_MIN} "
               f"to {MONITOR_INTERVAL_MAX} (default {DEFAULT_INTERVAL_S}); or monitor.gpu: false for no sampling")


@rule("M2", _W, ("monitor.gpu", *_GPU_KEYS), "The GPU sampler is in the script by default exactly when the job "
      "asks for GPUs (any style); `monitor: {gpu: false}` removes it; `gpu: true` on a job without GPUs warns "
      "(its step would see none) and keeps it.", "srun.1 (--overlap, GRES of a step); ntui sampler model")
def _m2(d: Draft) -> Iterable[RuleFinding]:
    if d.monitor_gpu and not d.gpu_requests:
        yield ("monitor.gpu", "the job asks for no GPUs, so the sampler's step gets none and records nothing "
               "(unless the nodes expose their GPUs to every step); it is kept because you asked. Ask for GPUs "
               "(sbatch.gpus-per-node), or drop monitor.gpu (the default samples GPU jobs only)")


@rule("M3", _W, ("monitor.interval",), "A monitor.interval on a job without the GPU sampler (no GPUs asked "
      "for, or `gpu: false`) warns instead of being silently unused.", "ntui sampler model")
def _m3(d: Draft) -> Iterable[RuleFinding]:
    if d.monitor_interval_written and not d.gpu_sampling:
        why, fix = (("monitor.gpu is false", "set monitor.gpu: true") if d.monitor_gpu is False else
                    ("the job asks for no GPUs", "ask for GPUs (sbatch.gpus-per-node)"))
        yield "monitor.interval", f"unused: {why}, so the script has no GPU sampler; drop the interval, or {fix}"


# Sweeps (job arrays)
@rule("W1", _E, ("sweep", "sweep.grid", "sweep.zip", "sweep.list"), "A sweep is exactly one of grid (every "
      "combination, the first parameter varying slowest), zip (the i-th value of every list) or list (explicit "
      "items naming the same parameters); parameter names are letters, digits, `_` and `-`; each value is one "
      "scalar kept as written (`1e-4`, `yes`, `010` stay text).", "ntui sweep model")
def _w1(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is None:
        return
    if len(sw.kinds) != 1 and not any(k == "sweep" for k, _ in sw.shape_errors):
        said = f"it has {' and '.join(sw.kinds)}" if sw.kinds else "it has none"
        yield ("sweep", f"a sweep is exactly one of grid (every combination), zip (element by element) or list "
               f"(explicit items); {said}. For an irregular set of runs write them as a list")
    yield from sw.shape_errors


@rule("W2", _E, ("sweep.grid", "sweep.zip", "sweep.list"), "A sweep has tasks: no empty list of values, no "
      "empty list of items.", "ntui sweep model")
def _w2(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is None:
        return
    for name, n in sw.lengths:
        if n == 0:
            yield (f"sweep.{sw.kind}.{name}", f"{name} has no values, so the {sw.kind} has no tasks; give it at "
                   "least one value or remove it")
    if sw.kind == "list" and sw.count == 0 and not sw.shape_errors:
        yield "sweep.list", "the list has no items, so the sweep has no tasks; give it at least one item"


@rule("W3", _E, ("sweep.zip",), "zip lists have the same length (zip would silently drop the extra values).",
      "ntui sweep model")
def _w3(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is None or sw.kind != "zip" or len({n for _, n in sw.lengths}) < 2:
        return
    sizes = ", ".join(f"{name}: {n}" for name, n in sw.lengths)
    longest = max(sw.lengths, key=lambda x: x[1])
    yield (f"sweep.zip.{longest[0]}", f"zip pairs the i-th values of every list, so the lists need the same "
           f"length ({sizes}); the extra values would be silently dropped. Make them equal, or use grid for every "
           "combination")


@rule("W4", _E, ("args", "env"), "With a sweep, `{name}` in args and env values names one of its parameters; "
      "`{{`/`}}` are literal braces, any other brace is refused (a typo never reaches a run).",
      "Python str.format syntax")
def _w4(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is None:
        return
    known = set(sw.names)
    for key, text in sw.uses:
        parts, errors = parse_template(text)
        for message in errors:
            yield key, message
        for part in parts:
            if not isinstance(part, str) and part.name not in known:
                hint = difflib.get_close_matches(part.name, sorted(known), n=1)
                extra = f"; did you mean {{{hint[0]}}}?" if hint else ""
                have = f" (it has {', '.join(sw.names)})" if sw.names else ""
                yield key, f"{{{part.name}}} names no parameter of the sweep{have}{extra}"


@rule("W5", _E, ("sweep.grid", "sweep.zip", "sweep.list"), "Every parameter is used by args or env (otherwise "
      "its tasks would run the same program with the same arguments).", "ntui sweep model")
def _w5(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is None or not sw.names:
        return
    used: set[str] = set()
    for _, text in sw.uses:
        used.update(p.name for p in parse_template(text)[0] if not isinstance(p, str))
    for name in sw.names:
        if name not in used:
            yield (f"sweep.{sw.kind}.{name}" if sw.kind != "list" else "sweep.list",
                   f"{name} is used nowhere: no {{{name}}} in args or env, so its tasks would run the same program "
                   f"with the same arguments. Add {{{name}}} to args (e.g. [\"--{name}\", \"{{{name}}}\"]) or "
                   "remove it")


@rule("W6", _E, ("sweep", "sbatch", "launcher", "script", "logs.dir", "setup", "sbatch.array"), "Nothing every "
      "array task shares (sbatch resources, launcher, script, logs, setup) holds a placeholder or is a "
      "parameter: the tasks of one job array run one script; `sbatch.array` is the sweep's own.",
      "sbatch.1 (--array)")
def _w6(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is None:
        return
    why = ("the tasks of one job array share one script: its resources, launcher, program, logs and setup are "
           "the same for every task")
    for key, name in sw.unsweepable:
        yield (key, f"{name} cannot be swept: {why}. Submit one preset per value instead "
               f"(ntui submit PRESET --set {name}=...)")
    for key, text in sw.elsewhere:
        for name in placeholder_refs(text, sw.names):
            fix = (f"; to use the value in setup, export it first (env: {{SWEEP_{name.upper().replace('-', '_')}: "
                   f"\"{{{name}}}\"}}) and write \"$SWEEP_{name.upper().replace('-', '_')}\"") \
                if key.startswith("setup") else "; placeholders are read in args and env values only"
            yield key, f"{{{name}}} here cannot differ between array tasks: {why}{fix}"
    if sw.array_set:
        yield ("sbatch.array", "the sweep writes --array itself (0 to tasks-1, with %parallel); remove "
               "sbatch.array and set sweep.parallel for a concurrency cap")


@rule("W7", _E, ("sweep",), "A sweep has at most as many tasks as the cluster's MaxArraySize (checked before "
      "sbatch with the partitions, one `scontrol show config`; statically, Slurm's own maximum 4000001).",
      "slurm.conf.5 (MaxArraySize)")
def _w7(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is not None and sw.count > SLURM_MAX_ARRAY_SIZE:
        yield ("sweep", f"{sw.count:,} tasks: no Slurm runs more than {SLURM_MAX_ARRAY_SIZE - 1:,} tasks in one "
               "array (MaxArraySize is at most 4000001); split the sweep")


@rule("W8", _E, ("sweep.parallel",), "`sweep.parallel` is a positive whole number: at most that many tasks run "
      "at once (`--array=...%N`).", "sbatch.1 (--array)")
def _w8(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is not None and sw.parallel_text is not None and sw.parallel is None:
        yield ("sweep.parallel", f"expected a positive whole number in plain decimal (at most that many tasks "
               f"at once), got {sw.parallel_text!r}; leave it out for no cap")


@rule("W9", _E, ("sweep.metric",), "`sweep.metric` is one regular expression; `ntui sweep` shows its group 1 "
      "(or a group named value, else the whole match) of the last matching line of each task's rank-0 log.",
      "Python re")
def _w9(d: Draft) -> Iterable[RuleFinding]:
    sw = d.sweep
    if sw is None or sw.metric is None:
        return
    try:
        pattern = re.compile(sw.metric)
    except re.error as exc:
        yield "sweep.metric", f"not a regular expression ({exc}); e.g. 'loss=([0-9.]+)'"
        return
    if pattern.groups > 1 and "value" not in pattern.groupindex:
        yield ("sweep.metric", f"{pattern.groups} groups: the metric is group 1 (or a group named value); make the "
               "others non-capturing, (?:...)")
    if "\n" in sw.metric or "\x00" in sw.metric:
        yield "sweep.metric", "a metric is matched line by line: one line, no NUL"


guarantee("W10", _E, ("sweep", "args", "env"), "Each array task reads its own values from the manifest written next "
          "to the script (NUL-delimited, `mapfile -d ''`) by SLURM_ARRAY_TASK_ID; values never enter the script "
          "text and reach the program verbatim (spaces, quotes, `$()`, newlines).",
          "sbatch.1 (SLURM_ARRAY_TASK_ID); bash.1 (mapfile)")


# Long runs (run:)
@rule("T1", _E, ("run.warning", "sbatch.time"), "The checkpoint signal's warning is shorter than the time limit "
      "(and the preset has one: a warning without sbatch.time is a warning).", "sbatch.1 (--signal)")
def _t1(d: Draft) -> Iterable[RuleFinding]:
    run, limit = d.run, d.time_limit_s
    if run is None or run.warning is None:
        return
    if limit is not None and run.warning >= limit:
        yield ("run.warning", f"{run.warning} s is not before the time limit ({limit} s): the signal would come at "
               f"the start. Make the warning shorter than sbatch.time (e.g. {max(1, limit // 10)}), or the limit "
               "longer")
    elif limit is None and "time" not in d.sbatch:
        yield ("run.warning", "no sbatch.time: the signal comes relative to the partition's default limit, which "
               "the preset does not know; set sbatch.time")


@rule("T2", _E, ("run.grace", "run.warning"), "The ranks' grace to save fits in the warning, with time left to "
      "requeue or chain before the limit.", "sbatch.1 (--signal: up to 60 s early)")
def _t2(d: Draft) -> Iterable[RuleFinding]:
    run = d.run
    if run is None or run.warning is None or run.grace is None:
        return
    if run.grace >= run.warning:
        yield ("run.grace", f"{run.grace} s of grace does not fit in the {run.warning} s warning: the ranks would "
               "still be saving at the time limit and nothing would continue the run. Make grace shorter than "
               f"run.warning (e.g. {max(1, run.warning - 60, run.warning // 2)})")


@rule("T3", _E, ("run.checkpoint-signal", "launcher.type"), "The checkpoint signal is not one torchrun's or "
      "accelerate's agents handle (TERM, INT, HUP, QUIT: they would stop the workers); under srun it is a warning "
      "(Slurm ends steps with TERM).", "pytorch/pytorch:torch/distributed/elastic/multiprocessing/api.py")
def _t3(d: Draft) -> Iterable[RuleFinding]:
    run = d.run
    if run is None or run.signal not in AGENT_SIGNALS:
        return
    if d.launcher in ("torchrun", "accelerate"):
        yield ("run.checkpoint-signal", f"{d.launcher}'s agents handle SIG{run.signal} themselves: they stop every "
               "worker on it, so the ranks never save. Use USR2")
    else:
        yield ("run.checkpoint-signal", f"SIG{run.signal} is also how Slurm ends a step (and a cancel): the program "
               "cannot tell a checkpoint from the end. Use USR2")


@rule("T4", _W, ("run.checkpoint-signal",), "Warns about SIGUSR1: NCCL catches it.",
      "facebookincubator/submitit#1697")
def _t4(d: Draft) -> Iterable[RuleFinding]:
    run = d.run
    if run is not None and run.signal == "USR1":
        yield ("run.checkpoint-signal", "NCCL catches SIGUSR1 (and Lightning's SLURM plugin requeues on it): a "
               "rank may never see it. Use USR2")


@rule("T5", _E, ("sbatch.signal", "sbatch.no-requeue"), "With run:, ntui writes `--signal` (and `--requeue` for "
      "continue: requeue) itself; a preset's own is refused.", "sbatch.1")
def _t5(d: Draft) -> Iterable[RuleFinding]:
    run = d.run
    if run is None:
        return
    if "signal" in d.sbatch:
        yield ("sbatch.signal", "run: writes --signal itself (B:<checkpoint-signal>@<warning>); drop sbatch.signal "
               "and set run.checkpoint-signal / run.warning")
    if run.mode == "requeue" and "no-requeue" in d.sbatch:
        yield ("sbatch.no-requeue", "run.continue is requeue but sbatch.no-requeue forbids it; drop no-requeue, or "
               "set run.continue: chain")


guarantee("T7", _W, ("run.continue",), "continue: requeue where the cluster's JobRequeue=0 is a warning (ntui asks "
          "with --requeue; a site's submit plugin may still refuse); checked against the cluster before sbatch.",
          "slurm.conf.5 (JobRequeue)", enforced_in="sitecheck.check_requeue")
guarantee("E4", _W, ("launcher.type", "launcher.python", "setup"), "The commands the launch line runs (torchrun, "
          "accelerate, the program's python) are on the PATH the job inherits, after the setup lines that can be read "
          "without running them (a venv's activate, export PATH=); checked before sbatch, skipped in a container. A "
          "missing one would end the job at once with exit 127.", "sbatch.1 (--export=ALL)",
          enforced_in="sitecheck.check_launcher")


@rule("T8", _W, ("run", "script"), "Warns when the program imports Lightning, whose SLURM plugin installs its own "
      "requeue (SIGUSR1).", "Lightning-AI/pytorch-lightning (SLURMEnvironment)")
def _t8(d: Draft) -> Iterable[RuleFinding]:
    run = d.run
    if run is None or not _LIGHTNING.search(d.script_text):
        return
    yield ("run", "the program imports Lightning, whose SLURM plugin installs its own requeue on SIGUSR1 (and skips a "
           "signal that already has a handler): two mechanisms would fight. Turn Lightning's off "
           "(SLURMEnvironment(auto_requeue=False)) and save on NTUI_CHECKPOINT_SIGNAL, or drop the run: section")


@rule("T9", _E, ("run", "sweep"), "run: and sweep: are not combined (yet).", "ntui preset model")
def _t9(d: Draft) -> Iterable[RuleFinding]:
    if d.run is not None and d.sweep is not None:
        yield ("run", "run: and sweep: together are not supported yet (each array task would requeue or chain on "
               "its own); drop one of them")


guarantee("T10", _E, ("run",), "A long run: `--signal=B:SIG@WARNING` (+ `--requeue`), the launch step in the "
          "background and waited for again after a trap, every rank's program starts with SIG ignored (agents "
          "survive) and gets it from the trap through srun, again every 5 s for the grace when it came in the "
          "allocation's first 60 s (later once: a repeat would kill a rank that saved and is shutting down); then "
          "`scontrol requeue` "
          "from the batch shell below max-restarts, or a successor `sbatch --dependency=afterany` with a done marker. "
          "NTUI_RUN_ID, NTUI_RESTART, NTUI_CHECKPOINT_SIGNAL reach the program.",
          "sbatch.1; bash.1 (trap, wait); srun.1 (signals)")
guarantee("W11", _E, ("sweep", "logs.dir"), "A sweep's task logs carry the task: `<name>-<array id>_<task>.out`, "
          "`...-rank-<N>.out`, `...-gpu-<node>.csv` (Slurm's `%A_%a`).", "sbatch.1 (filename pattern)")


# Hand-written scripts (`ntui check SCRIPT`, `ntui import`): what a script as written gets wrong, at its line.
_SCRIPT = "scriptcheck.check_script"
guarantee("H1", _E, ("script",), "A hand-written script's first line is its `#!` line (a comment above it makes "
          "sbatch refuse the script).", "sbatch.1; SchedMD/slurm:src/sbatch/opt.c", enforced_in=_SCRIPT)
guarantee("H2", _E, ("sbatch",), "No `#SBATCH` line after the script's first command: sbatch ignores it (P1).",
          "sbatch.1", enforced_in=_SCRIPT)
guarantee("H3", _E, ("launcher.extra-args",), "A launcher option's `$VARIABLE` inside single quotes reaches the "
          "launcher as text: `--rdzv_id '$SLURM_JOB_ID'` gives every job one rendezvous id (R6).",
          "bash(1) QUOTING; torch/distributed/run.py", enforced_in=_SCRIPT)
guarantee("H4", _E, ("launcher.type",), "A per-task value (`$SLURM_PROCID`, `$SLURM_NODEID`, a literal node rank) in "
          "a launch line the batch shell expands, or a node rank written as a number on several nodes: every task "
          "gets the batch host's (all ranks 0); it belongs in each task's own shell (Q1).",
          "docs.nersc.gov/machinelearning/launchers; huggingface/accelerate#2816", enforced_in=_SCRIPT)
guarantee("H5", _E, ("sbatch.ntasks-per-node",), "torchrun and accelerate launch run once per node: several tasks "
          "per node start several launchers (G2).", "pytorch/pytorch:torch/distributed/run.py",
          enforced_in=_SCRIPT)
guarantee("H6", _W, ("launcher.master-port",), "A fixed MASTER_PORT or launcher port collides when two jobs share a "
          "node (R4); one in the ephemeral range 32768-60999 is an error (R12).", "Linux ip-sysctl",
          enforced_in=_SCRIPT)
guarantee("H7", _W, ("env",), "A variable the launch line or an export uses that the script never sets (and Slurm "
          "does not) is empty unless the submitting shell happens to export it.", "sbatch.1 (--export)",
          enforced_in=_SCRIPT)
guarantee("H8", _E, ("sbatch.nodes",), "A launcher's node count written as a number (`--nnodes`, `--num_machines`) "
          "equals the job's `--nodes`.", "torch/distributed/run.py", enforced_in=_SCRIPT)
guarantee("H9", _E, ("launcher.type",), "torchrun or accelerate on several nodes is started by srun on each; run in "
          "the batch shell it runs on the first node only.", "sbatch.1; srun.1", enforced_in=_SCRIPT)
guarantee("H10", _W, ("env",), "`MASTER_ADDR` / `MASTER_PORT` set in the batch shell and not exported never reach "
          "the tasks srun starts (a program reading them from its environment, or a task's shell expanding them, "
          "gets nothing).", "bash(1) export; srun.1 (--export)", enforced_in=_SCRIPT)
guarantee("H11", _W, ("logs",), "A launch piped into `tee` without `set -o pipefail` ends the job with tee's status: "
          "a failed run is reported COMPLETED.", "bash(1) Pipelines", enforced_in=_SCRIPT)
guarantee("H12", _E, ("launcher.extra-args",), "`--rdzv_conf` carries key=value settings of the rendezvous "
          "(timeouts); `rdzv_backend`, `rdzv_endpoint`, ... written there are ignored, not used.",
          "torch/distributed/run.py (--rdzv-conf)", enforced_in=_SCRIPT)
guarantee("H13", _W, ("sbatch.ntasks-per-node",), "srun starting the program itself with one task a node on a "
          "node of several GPUs runs one process for all of them (one rank a GPU, G1), unless the program starts "
          "its own.", "srun.1", enforced_in=_SCRIPT)
guarantee("H14", _E, ("script",), "srun's program and its arguments are separate words: one quoted word "
          "(`srun \"run.sh $ip\"`) names a program with a blank in its name, which does not exist.",
          "bash(1) QUOTING; srun.1", enforced_in=_SCRIPT)
guarantee("H15", _W, ("launcher.extra-args",), "A rendezvous host written as a fixed address or name "
          "(`--master_addr 10.0.0.5`) in a job of several nodes: Slurm gives the job other nodes each time (R1).",
          "sbatch.1 (--nodelist); torch/distributed/run.py", enforced_in=_SCRIPT)

guarantee("H16", _W, ("script",), "srun starts a program file with no interpreter before it (`srun fit.py`): "
          "unless the file is executable and its first line is a #! line naming python, every task fails "
          "(Permission denied, or Exec format error). Write `srun python fit.py`.", "srun.1; execve(2)",
          enforced_in=_SCRIPT)
guarantee("H17", _E, ("script",), "bash reads a whole script before it runs a line: a construct's closing word "
          "(`done`, `fi`, `esac`) that closes nothing, most often after a quote left open that swallowed the "
          "construct's opening line, makes bash refuse the whole script. Close or remove the stray quote.",
          "bash(1) SHELL GRAMMAR", enforced_in=_SCRIPT)

RULES: tuple[Rule, ...] = tuple(_REGISTERED)
BY_ID: Mapping[str, Rule] = {r.id: r for r in RULES}


def run_checks(draft: Draft, rules: Sequence[Rule] = RULES) -> list[tuple[Rule, RuleFinding]]:
    """Every finding of every checking rule in ``rules``, in table order."""
    out: list[tuple[Rule, RuleFinding]] = []
    for rule in rules:
        if rule.check is not None:
            out.extend((rule, f) for f in rule.check(draft))
    return out


def problem(rule_id: str, source: Source, key: str, message: str) -> Problem:
    """A problem for ``rule_id``: ``file:line: key: message (ID)`` with the rule's severity."""
    rule = BY_ID[rule_id]
    return Problem(source, key, f"{message} ({rule.id})", rule.severity, rule.id)


def blocks_submit(p: Problem) -> bool:
    """True for problems that stop ``submit`` (errors, and warnings of rules marked so)."""
    return p.is_error or (p.rule in BY_ID and BY_ID[p.rule].blocks_submit)


# ----------------------------------------------------------------------------- docs


def main(argv: Sequence[str]) -> int:
    """``--markdown``: ``docs/rules.md``; ``--readme``: the README's section (:mod:`ntui.core.compose.rulesdoc`)."""
    if argv[:1] == ["--markdown"]:
        sys.stdout.write(markdown(RULES))
        return 0
    if argv[:1] == ["--readme"]:
        sys.stdout.write(readme_section(RULES) + "\n")
        return 0
    print("usage: python -m ntui.core.compose.rules --markdown | --readme", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
