"""A hand-written sbatch script checked against the H rules of the rule table (what makes a hand-written
multi-node launch go wrong: H1-H17), each finding at the line its mistake was written on (a value used far from
its assignment is found at the assignment), with the rule's fix. The preset an import makes goes through every
preset rule too (:mod:`ntui.core.compose.scriptimport`).
"""

from __future__ import annotations

import os
import re

from ntui.core.compose.bashread import BATCH
from ntui.core.compose.scriptread import (
    KNOWN_VARS,
    PER_TASK_VARS,
    PORT_OPTIONS,
    RANK_OPTIONS,
    SET_BY_SLURM,
    Launch,
    ScriptFacts,
    ScriptFinding,
    assignments,
    int_or_none,
    srun_program,
    the_launch,
)
from ntui.core.compose.shellwords import Command, Word
from ntui.core.problems import Severity

__all__ = ["check_script"]


def check_script(facts: ScriptFacts) -> list[ScriptFinding]:
    """The H rules (module docstring) on the script as written."""
    out: list[ScriptFinding] = []
    if not facts.lines[0].startswith("#!") and not facts.fragment:  # a fragment is no script for sbatch
        first = next((n for n, line in enumerate(facts.lines, 1) if line.startswith("#!")), None)
        out.append(ScriptFinding(1, "H1", "the first line is not the #! line" + (
            f" (it is on line {first})" if first else "") + ": sbatch refuses the script (\"This does not look like "
            "a batch script\"). Put #!/bin/bash first"))
    if facts.stray_closer is not None:
        out.append(ScriptFinding(facts.stray_closer[0], "H17", facts.stray_closer[1]))
    for d in facts.late_directives:
        out.append(ScriptFinding(d.line, "H2", f"#SBATCH --{d.option} comes after the first command (line "
                           f"{facts.first_command}): sbatch ignores it. Move it above line {facts.first_command}",
                           field=f"sbatch.{d.option}"))
    out += _port_variables(facts)
    out += _misassigned(facts)
    out += _quoted_commands(facts)
    if not facts.launches:  # the import says why there is none; what the script's srun lines use is checked
        out += _unset(facts, None)
        return sorted(out, key=lambda f: f.line)
    command, launch = the_launch(facts)
    per_node = int_or_none(launch.srun.get("ntasks-per-node") or facts.directive("ntasks-per-node"))
    known_nodes = _job_nodes(facts, launch)
    nodes = known_nodes or 1
    if launch.launcher != "srun" and launch.under_srun and per_node is not None and per_node > 1:
        out.append(ScriptFinding(launch.line, "H5", f"{per_node} tasks per node each start a {launch.launcher}: every "
                           f"node runs {per_node} launchers and {per_node} times the processes. One task per node "
                           "(--ntasks-per-node=1); the launcher starts the node's processes (G2)",
                           field="sbatch.ntasks-per-node"))
    if launch.launcher not in ("srun", "deepspeed") and not launch.under_srun and nodes > 1:
        out.append(ScriptFinding(launch.line, "H9", f"{launch.launcher} runs in the batch shell, on the first node "
                           f"only, of {nodes}: the others never join and the rendezvous waits. Start it with "
                           "srun --ntasks-per-node=1"))
    said_h4: set[tuple[str, int]] = set()
    for word in [*launch.batch_words, *launch.task_words]:
        for var, line in _batch_expanded(word):
            if var not in PER_TASK_VARS or not launch.under_srun or (var, line) in said_h4:
                continue
            said_h4.add((var, line))
            out.append(ScriptFinding(line, "H4",
                f"{_excerpt(launch, word, var)}: ${var} is expanded once, by the batch "
                               "shell, before srun starts the tasks: every task gets the batch host's value (every "
                               "node is rank 0). Expand it in each task: srun bash -c '... $" + var + " ...', or "
                               f"write \\${var} inside a double-quoted launcher string (Q1)"))
    for name, value, opt_word in launch.launcher_opts:
        if opt_word is not None and opt_word.literal_vars and not opt_word.expanded_vars and not (
                name == "--rdzv-id" and _per_job_endpoint(launch)):
            var = opt_word.literal_vars[0]
            out.append(ScriptFinding(opt_word.line, "H3", f"{name} is the literal text {value!r}: ${var} inside single "
                               f"quotes reaches {launch.launcher} unexpanded (every job the same value). Write "
                               f"\"${var}\" (R6)", field="launcher.extra-args"))
        if name in RANK_OPTIONS and nodes > 1 and int_or_none(value) is not None and not launch.task_words:
            out.append(ScriptFinding(launch.line, "H4", f"{name}={value} on every node of {nodes}: each node must "
                                   f"have its own; expand $SLURM_NODEID in each task (Q1)"))
        if name in ("--rdzv-conf", "--rdzv_conf") and value:
            options = sorted({kv.split("=", 1)[0] for kv in value.split(",")} & RDZV_OPTIONS)
            if options:
                out.append(ScriptFinding(opt_word.line if opt_word is not None else launch.line, "H12",
                                   f"{name} {value}: {', '.join(options)} are options of their own, not keys of "
                                   f"--rdzv_conf: {launch.launcher} ignores them there and keeps its default "
                                   f"rendezvous. Give each as its option ({', '.join('--' + o for o in options)})",
                                   field="launcher.extra-args"))
    said_port: set[int] = {f.line for f in out if f.rule == "H6"}
    for name, value, opt_word in launch.launcher_opts:
        if name not in PORT_OPTIONS or opt_word is None:
            continue
        port_part = _port_part(opt_word)
        if port_part is not None and port_part[1] not in said_port:
            said_port.add(port_part[1])
            out.append(_fixed_port(f"{name} {value}", port_part[0], port_part[1]))
    for name, value_word in launch.task_env:  # export MASTER_PORT=29511 inside the tasks' bash -c
        text = value_word.text.strip()
        if _PORT_VAR.search(name) and re.fullmatch(r"[0-9]{2,5}", text) and value_word.line not in said_port:
            said_port.add(value_word.line)
            out.append(_fixed_port(f"{name}={text}", int(text), value_word.line))
    tasks = int_or_none(facts.directive("ntasks")) or nodes * (per_node or 1)
    for opt, value_word in zip(launch.args, launch.args[1:], strict=False):
        if opt.text in PROGRAM_PORT_OPTIONS and tasks > 1:  # the program's own rendezvous port
            port_part = _port_part(value_word)
            if port_part is not None and port_part[1] not in said_port:
                said_port.add(port_part[1])
                out.append(_fixed_port(f"{opt.text} {value_word.text}", port_part[0], port_part[1]))
    out += _fixed_host(launch, nodes, facts)
    if launch.direct and launch.program is not None:
        name = launch.program.text
        out.append(ScriptFinding(launch.program.line, "H16",
                                 f"srun runs {name} itself, with no python before it: unless the file is executable "
                                 "and its first line is a #! line naming python, every task fails (execve: "
                                 f"Permission denied, or Exec format error). Write srun python {name}",
                                 Severity.WARNING))
    nnodes = launch.opt("--nnodes", "--num_machines")
    if nnodes is not None and int_or_none(nnodes[0]) is not None and known_nodes is not None and \
            int_or_none(nnodes[0]) != known_nodes:
        asked = "#SBATCH --nodes" if facts.directive("nodes") or launch.srun.get("nodes") else \
            "the nodes its tasks fill, no --nodes"
        out.append(ScriptFinding(launch.line, "H8", f"{launch.launcher} is told {nnodes[0]} node(s), the job asks for "
                           f"{nodes} ({asked}): the rendezvous waits for nodes that never come, or leaves "
                           "some out. Use $SLURM_JOB_NUM_NODES", field="sbatch.nodes"))
    out += _unexported(facts, command, launch)
    out += _tee(facts, command, launch)
    out += _one_task(facts, launch, nodes)
    out += _unset(facts, launch)
    return sorted(out, key=lambda f: f.line)


def _job_nodes(facts: ScriptFacts, launch: Launch) -> int | None:
    """The job's nodes: ``--nodes`` (sbatch's or the launch's srun's); without it, the nodes the job's tasks fill
    (``-n 16 --ntasks-per-node 4``: 4, as Slurm places them; the #SBATCH lines' counts, else the srun's); one where
    nothing asks for more than one task; None where the script does not say (``-n 16`` alone, a range ``2-4``, a
    variable): what needs the count is not judged."""
    written = facts.directive("nodes") or launch.srun.get("nodes")
    if written is not None:
        return int_or_none(written)
    source = facts.directive if facts.directive("ntasks") or facts.directive("ntasks-per-node") else launch.srun.get
    written, per_node = source("ntasks"), int_or_none(source("ntasks-per-node"))
    ntasks = int_or_none(written)
    if written is None or ntasks == 1:
        return 1
    if ntasks is not None and per_node:
        return -(-ntasks // per_node)
    return None


#: torchrun's and accelerate's rendezvous options, which --rdzv_conf cannot carry (H12).
RDZV_OPTIONS = {"rdzv_backend", "rdzv_endpoint", "rdzv_id", "nnodes", "nproc_per_node", "master_addr",
                "master_port", "main_process_ip", "main_process_port", "num_machines", "num_processes",
                "machine_rank", "node_rank", "rdzv-backend", "rdzv-endpoint", "rdzv-id"}
#: A variable that holds a rendezvous port (MASTER_PORT, RDZV_PORT, MAIN_PORT, MASTER_PORT_JOB, ...).
_PORT_VAR = re.compile(r"(?:^|_)PORT(?:$|_)", re.IGNORECASE)


#: A program's own options for its rendezvous port (when srun starts its ranks itself).
PROGRAM_PORT_OPTIONS = {"--port", "--master-port", "--master_port", "--dist-port", "--dist_port", "--main_process_port"}


def _per_job_endpoint(launch: Launch) -> bool:
    """A c10d endpoint whose port the job decides at run time: jobs never share its store, whatever their
    rendezvous id (so one id for every job is harmless there)."""
    endpoint = launch.opt("--rdzv-endpoint")
    return endpoint is not None and endpoint[1] is not None and ":" in (endpoint[0] or "") and \
        _port_part(endpoint[1]) is None


#: Launcher options that name the rendezvous host (with its port, for an endpoint).
HOST_OPTIONS = {"--master-addr", "--master_addr", "--main_process_ip", "--rdzv-endpoint"}


def _fixed_host(launch: Launch, nodes: int, facts: ScriptFacts) -> list[ScriptFinding]:
    """H15: the rendezvous host written as a fixed address or name in a job of several nodes."""
    told = launch.opt("--nnodes", "--num_machines", "--num_nodes")
    nodes = max(nodes, int_or_none((told[0] or "").split(":")[-1]) or 1 if told else 1)
    if nodes < 2 or facts.directive("nodelist"):
        return []
    out = []
    for name, value, word in launch.launcher_opts:
        if name not in HOST_OPTIONS or word is None or not value:
            continue
        literal = ""  # what is written before anything the shell expands
        for p in word.parts:
            if p.quote != "'":
                break
            literal += p.text
        whole = len(literal) == len(word.text)
        literal = literal.partition("=")[2] if literal.startswith("-") else literal
        if name == "--rdzv-endpoint":
            host = literal.rsplit(":", 1)[0] if ":" in literal else (literal if whole else "")
        else:
            host = literal if whole else ""
        if host and not host.startswith(("localhost", "127.")) and "$" not in host:
            out.append(ScriptFinding(word.line, "H15", f"{name} {value}: the rendezvous host is written as {host}, but "
                               "Slurm gives the job other nodes each time: the others wait for a host that is not "
                               "theirs. Take the job's first node: $(scontrol show hostnames \"$SLURM_JOB_NODELIST\" "
                               "| head -n 1) (R1)", Severity.WARNING))
    return out


def _quoted_commands(facts: ScriptFacts) -> list[ScriptFinding]:
    """H14: srun's program quoted together with its arguments into one word."""
    out = []
    for c in facts.commands:
        word = srun_program(c)
        if word is not None and word.parts and word.parts[0].quote == "'" and " " in word.parts[0].text.lstrip() \
                and " " in word.text.strip():
            name = word.text.split()[0]
            out.append(ScriptFinding(word.line, "H14", f"srun's program is the one word {word.text!r}: the quotes make "
                               f"srun look for a program of that name, blank and all, and the step fails (No such "
                               f"file or directory). Leave the quotes off: srun {name} {word.text.split(None, 1)[1]}"))
    return out


def _fixed_port(what: str, port: int, line: int) -> ScriptFinding:
    if 32768 <= port <= 60999:
        return ScriptFinding(line, "H6",
            f"{what}: port {port} is in the kernel's ephemeral range (32768-60999): another "
                       "process can hold it. Derive it from the job id: $(( 15000 + SLURM_JOB_ID % 17000 )) (R12)")
    return ScriptFinding(line, "H6",
        f"{what}: port {port} is fixed: two jobs on one node collide. Derive it from the job "
                   "id: $(( 15000 + SLURM_JOB_ID % 17000 )) (R4)", Severity.WARNING)


def _port_part(word: Word) -> tuple[int, int] | None:
    """The literal port at the end of an option's value (``29500``, ``host:29500``) and the line it was written on."""
    last = word.parts[-1] if word.parts else None
    if last is None or last.quote != "'":
        return None
    text = last.text.strip()
    if len(word.parts) == 1 and text.startswith("-"):
        text = text.partition("=")[2]  # --master-port=29500: the value
    m = re.search(r"(?:^|:)([0-9]{2,5})$", text)
    if m is None:
        return None
    return int(m.group(1)), last.line or word.line


def _port_variables(facts: ScriptFacts) -> list[ScriptFinding]:
    """H6: a port variable the script sets to a number (``${PORT:-29500}``'s default too) and uses."""
    out: list[ScriptFinding] = []
    for c in facts.commands:
        for name, value in assignments(c):
            if value is None or not _PORT_VAR.search(name):
                continue
            text = value.text.strip()
            m = re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-\s*([0-9]+)\s*\}|([0-9]+)", text)
            if m is None:
                continue
            used = re.search(rf"\$\{{?{name}\b", "\n".join(facts.lines)) is not None
            if name == "MASTER_PORT" or used:
                out.append(_fixed_port(f"{name}={text}", int(m.group(1) or m.group(2)), c.line))
    return out


def _misassigned(facts: ScriptFacts) -> list[ScriptFinding]:
    """H7: ``NAME = value`` runs a command NAME; the variable is never set."""
    out = []
    for c in facts.commands:
        if len(c.words) >= 2 and c.words[1].text in ("=", "+=") and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*",
                                                                                   c.words[0].text):
            name = c.words[0].text
            out.append(ScriptFinding(c.line, "H7",
                f"{name} {c.words[1].text} ...: the blanks around = make this a command "
                               f"named {name}, not an assignment: ${name} stays unset (and under set -e the script "
                               f"stops here). Write {name}=...", Severity.WARNING))
        elif len(c.words) >= 2 and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", c.words[0].text) and \
                not c.words[0].parts[0].quote and c.words[1].text.startswith("-"):
            name = c.words[0].text.split("=", 1)[0]
            out.append(ScriptFinding(c.line, "H7", f"{name}=... {c.words[1].text}: the blank ends the assignment, so "
                               f"{c.words[1].text} runs as a command and {name} is set for it only: ${name} stays "
                               f"unset. Quote the whole value: {name}=\"... {c.words[1].text} ...\"",
                               Severity.WARNING))
    return out


def _unexported(facts: ScriptFacts, command: Command, launch: Launch) -> list[ScriptFinding]:
    """H10: a rendezvous variable the batch shell sets but does not export, which the tasks need."""
    out: list[ScriptFinding] = []
    if not launch.under_srun:
        return out
    written = {v for w in command.words for v in w.expanded_vars}
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        var = launch.scope.get(name)
        if var is None or var.exported:
            continue
        in_task = any(p.quote == "" and re.search(rf"\$\{{?{name}\b", p.text)
                      for w in launch.task_words for p in w.parts)
        if name in written and not in_task:
            continue  # the batch shell passes it on the launch line itself
        if launch.launcher in ("torchrun", "accelerate") and not in_task:
            continue  # the launcher sets it for its processes from its own options
        why = "each task expands it empty" if in_task else "the program reads it from its environment"
        out.append(ScriptFinding(var.line, "H10", f"{name} is set but not exported: the tasks srun starts never see it "
                           f"({why}). Write export {name}=...", Severity.WARNING))
    return out


def _tee(facts: ScriptFacts, command: Command, launch: Launch) -> list[ScriptFinding]:
    """H11: the launch piped into ``tee`` without ``pipefail``: the job ends with tee's status."""
    at = facts.commands.index(command) if command in facts.commands else -1
    after = facts.commands[at + 1] if 0 <= at < len(facts.commands) - 1 else None
    if command.separator != "|" or after is None or not after.words or \
            os.path.basename(after.words[0].text) != "tee":
        return []
    if any(c.words and c.words[0].text == "set" and any("pipefail" in w.text for w in c.words)
           for c in facts.commands[:at]):
        return []
    return [ScriptFinding(launch.line, "H11", "the launch is piped into tee without pipefail: the job's exit status is "
                    "tee's (0), so a failed run is reported COMPLETED. Add set -o pipefail above it (ntui writes "
                    "every rank's log itself, L2)", Severity.WARNING)]


def _one_task(facts: ScriptFacts, launch: Launch, nodes: int) -> list[ScriptFinding]:
    """H13: srun starts the program itself, one task a node, on a node with several GPUs."""
    if launch.launcher != "srun" or not launch.under_srun:
        return []
    gpus = int_or_none(launch.srun.get("gpus-per-node") or facts.directive("gpus-per-node"))
    gres = re.search(r"gpu(?::[A-Za-z0-9_-]+)?:([0-9]+)", launch.srun.get("gres") or facts.directive("gres") or "")
    gpus = gpus or (int(gres.group(1)) if gres else None)
    per_node = int_or_none(launch.srun.get("ntasks-per-node") or facts.directive("ntasks-per-node"))
    ntasks = int_or_none(launch.srun.get("ntasks") or facts.directive("ntasks"))
    capped = per_node is not None and per_node > 1 and ntasks is not None and ntasks < per_node * nodes
    if ntasks is not None and (per_node is None or capped):
        per_node = ntasks // nodes if ntasks % nodes == 0 else None
    devices = [int_or_none(m.group(1)) for w in launch.args for m in [re.search(r"(?:devices|gpus)[= ]?([0-9]+)$",
                                                                         w.text)] if m]
    wants = capped or any(d is not None and d > 1 for d in devices) or any(
        re.fullmatch(r"--?(?:[a-z_]+\.)?(?:devices|gpus)", w.text) and int_or_none(n.text) not in (None, 0, 1)
        for w, n in zip(launch.args, launch.args[1:], strict=False))
    if not gpus or gpus < 2 or per_node != 1 or not wants:
        return []
    option = "ntasks" if capped or not facts.directive("ntasks-per-node") else "ntasks-per-node"
    line = next((d.line for d in facts.directives if d.option == option), launch.line)
    return [ScriptFinding(line, "H13", f"one task a node for {gpus} GPUs: srun starts the program once a node, so one "
                    f"process drives one GPU and {gpus - 1} idle, unless the program starts its own process per GPU. "
                    f"--ntasks-per-node={gpus} (one rank a GPU, G1)", Severity.WARNING,
                    field="sbatch.ntasks-per-node")]


def _batch_expanded(word: Word) -> list[tuple[str, int]]:
    """The variables the batch shell expanded into ``word`` (its parts it did not know the value of), each with
    the line it was written on."""
    return [(m.group(1), p.line or word.line) for p in word.parts if p.quote == BATCH
            for m in re.finditer(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", p.text)]


def _excerpt(launch: Launch, word: Word, var: str) -> str:
    """The piece of a (long) word that uses ``$var``: ``--machine_rank=$SLURM_NODEID`` (an option's value given as
    a word of its own: with the option)."""
    for name, _, opt_word in launch.launcher_opts:
        if opt_word is word and not word.text.startswith("-"):
            return f"{name} {word.raw}"
    for piece in word.text.split():
        if f"${var}" in piece or f"${{{var}}}" in piece:
            return piece
    return word.text if len(word.text) < 60 else word.text[:57] + "..."


#: ``$NAME`` or ``${NAME}`` used as is (``${NAME:-default}``, ``${NAME:+x}``, ``${#NAME}`` say what an unset NAME
#: gives, and are not "used but never set").
_USE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[^]]*\])?\}|([A-Za-z_][A-Za-z0-9_]*))")


def _uses(text: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _USE.finditer(text)]


def _unset(facts: ScriptFacts, launch: Launch | None) -> list[ScriptFinding]:
    """H7: variables a value, an export or the launch uses before the script sets them (or never)."""
    out: list[ScriptFinding] = []
    said: set[str] = set()

    def say(var: str, line: int) -> None:
        if var in said or var in KNOWN_VARS or var.startswith(SET_BY_SLURM) or var.isdigit():
            return
        said.add(var)
        sourced = next((c for c in facts.commands if c.line < line and len(c.words) > 1 and c.words[0].text in (
            "source", ".") and not c.words[1].text.endswith(("activate", "bashrc", "profile"))), None)
        also = f" or {sourced.words[1].text} (sourced on line {sourced.line}) sets it" if sourced else ""
        out.append(ScriptFinding(line, "H7", f"${var} is used but never set in the script: it is empty unless the "
                           f"submitting shell exports it (sbatch passes its environment){also}. Set it in the "
                           "script", Severity.WARNING))

    scope: dict[str, object] = {}
    for c in facts.commands:
        assigns = assignments(c)
        if assigns and (c.words[0].text in ("export", "declare", "readonly", "typeset") or len(assigns) == len(
                c.words)):
            for _, value in assigns:
                for p in value.parts if value is not None else ():
                    if p.quote != "'":
                        for var in _uses(p.text):
                            if var not in scope and facts.assigned.get(var, (c.line,))[0] >= c.line:
                                say(var, p.line or c.line)
        elif launch is None and c.expanded and os.path.basename(c.expanded[0].text) == "srun":
            for w in c.expanded:
                for var, line in _batch_expanded(w):
                    if var not in c.scope and var not in facts.assigned:
                        say(var, line)
        scope = c.scope
    if launch is not None:
        for w in launch.batch_words:
            for p in w.parts:
                if p.quote == BATCH:
                    for var in _uses(p.text):
                        if var not in launch.scope and var not in facts.assigned:
                            say(var, p.line or w.line)
    return out


