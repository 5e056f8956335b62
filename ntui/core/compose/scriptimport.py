"""A hand-written sbatch script imported into a preset: one that renders to the same job (the same directives,
the same launch shape, program, arguments, environment and setup lines), with the H fixes applied and listed
(:mod:`ntui.core.compose.scriptcheck`), and every line that has no place in a preset named, never silently dropped.
Reading is :mod:`ntui.core.compose.scriptread`.

What the script leaves to its environment stays the environment's: a program in a directory a variable names
(``cd $CODE`` then ``$(pwd)/fit.py``) keeps ``${CODE}``, which a preset's path expands where ntui renders (F2);
what one path only adds to the launch (``CMD="$CMD --load x"`` in an ``if``), a wrapper before the launcher
(``nsys profile -o x``) and a GPU count left to run time (asked of the cluster's nodes) are said to check. The
script's setup lines run as its shell ran them (``set +euo pipefail`` before them, ntui's options back for the
launch), so a line that bash's defaults let pass does not end the imported job.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ntui.core.compose.scriptcheck import check_script
from ntui.core.compose.scriptread import (
    KNOWN_VARS,
    LEGACY_FLAGS,
    MOUNT_OPTIONS,
    NTUI_ENV,
    OTHER_LAUNCHERS,
    PER_NODE,
    PER_TASK_VARS,
    SBATCH_NTUI,
    SET_BY_SLURM,
    SRUN_SHAPE,
    Launch,
    ScriptError,
    ScriptFacts,
    ScriptFinding,
    assignments,
    int_or_none,
    the_launch,
    unknown_word,
)
from ntui.core.compose.shellwords import Command, Word
from ntui.core.compose.spec import SBATCH_RESERVED
from ntui.core.compose.yamlsrc import LoadedPreset, load_yaml_with_lines
from ntui.core.problems import Problem, Source
from ntui.core.slurm.options import SBATCH_OPTIONS

__all__ = ["Imported", "import_script"]


@dataclass
class Imported:
    """An imported preset: its YAML text, the loaded form, what was fixed, what was not imported, and for each
    preset key the script line it came from."""

    yaml_text: str
    preset: dict[str, Any]
    fixes: list[str]
    not_imported: list[tuple[int, str]]
    key_lines: dict[str, int]
    findings: list[ScriptFinding]
    notes: list[str] = field(default_factory=list)  # what the preset keeps that may need the user's hand

    def loaded(self, path: str) -> LoadedPreset:
        doc = load_yaml_with_lines(self.yaml_text, path)
        data = dict(doc.data) if isinstance(doc.data, dict) else {}
        sources = {k: Source(path, line) for k, line in doc.lines.items()}
        return LoadedPreset(str(data.get("name") or "imported"), Path(path), data, sources, dict(doc.raw))

    def problems_at_script_lines(self, problems: Sequence[Problem], script: str) -> list[Problem]:
        """The preset's problems at the script's lines their keys came from."""
        out = []
        for p in problems:
            key = p.field
            line = 0
            while key:
                if key in self.key_lines:
                    line = self.key_lines[key]
                    break
                key = key.rpartition(".")[0]
            out.append(Problem(Source(script, line), p.field, p.message, p.severity, p.rule))
        return out


def _literal(word: Word, facts: ScriptFacts, depth: int = 0) -> str | None:
    """The value the shell gives ``word``, when the script alone decides it (its own plain variables
    substituted); None when it depends on the environment, a command or the task."""
    if word.plain:
        return word.text
    if depth > 3:
        return None
    text = ""
    for part in word.parts:
        if part.quote == "'":
            text += part.text
            continue
        if (arith := re.fullmatch(r"\$\(\((.*)\)\)", part.text, re.S)) is not None:
            value = _arithmetic(arith.group(1), facts, depth)
            if value is None:
                return None
            text += value
            continue
        if "$(" in part.text or "`" in part.text:
            return None
        pieces = re.split(r"(\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*)", part.text)
        for piece in pieces:
            m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", piece)
            if m is None:
                if "$" in piece:
                    return None
                text += piece
                continue
            got = facts.assigned.get(m.group(1))
            value = _literal(got[1], facts, depth + 1) if got is not None and got[1] is not None else None
            if value is None:
                return None
            text += value
    return text


def _arithmetic(expr: str, facts: ScriptFacts, depth: int) -> str | None:
    """``$(( MB * 2 ))`` where the script alone decides every variable in it: its value (bash's integer arithmetic:
    + - * / %, parentheses); None otherwise."""
    def value_of(m: re.Match[str]) -> str:
        got = facts.assigned.get(m.group(1))
        value = _literal(got[1], facts, depth + 1) if got is not None and got[1] is not None else None
        return f"({value.strip()})" if value is not None and re.fullmatch(r"\s*-?[0-9]+\s*", value) else "?"

    plain = re.sub(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?", value_of, expr)
    if not re.fullmatch(r"[0-9+\-*/%() \t\n]+", plain):
        return None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -ev(node.operand) if isinstance(node.op, ast.USub) else ev(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, (ast.Div, ast.Mod)) and b != 0:
                quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # bash truncates toward zero
                return quotient if isinstance(node.op, ast.Div) else a - b * quotient
        raise ValueError(expr)

    try:
        return str(ev(ast.parse(plain.strip(), mode="eval")))
    except (ValueError, SyntaxError, RecursionError):
        return None


#: Variables the shell itself sets or changes as the script runs: never the environment's value at render time.
_SHELL_OWN = {"PWD", "OLDPWD", "RANDOM", "SECONDS", "LINENO", "PPID", "BASHPID", "HOSTNAME", "HOST",
              "EPOCHSECONDS", "EPOCHREALTIME", "BASH_SOURCE"}


def _with_env(word: Word, facts: ScriptFacts, depth: int = 0) -> tuple[str, list[str]] | None:
    """A path whose value comes from the environment the job is submitted from (``$WORK/x``, ``$CODE/fit.py`` with
    ``CODE=$WORKDIR/poly``): its text with those variables kept as ``${NAME}``, which a preset's paths expand from
    the environment ntui renders in (F2), and their names; None where a command, Slurm or the task decides it."""
    if depth > 3:
        return None
    text, names = "", []
    for part in word.parts:
        if part.quote == "'":
            text += part.text
            continue
        for piece in re.split(r"(\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*)", part.text):
            m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", piece)
            if m is None:
                if "$" in piece or "`" in piece:
                    return None
                text += piece
                continue
            name = m.group(1)
            got = facts.assigned.get(name)
            if got is not None:  # the script's own variable: its value, where that is known
                inner = _with_env(got[1], facts, depth + 1) if got[1] is not None else None
                if inner is None:
                    return None
                text += inner[0]
                names += inner[1]
            elif name in _SHELL_OWN or name.startswith(SET_BY_SLURM) or name in PER_TASK_VARS:
                return None
            else:
                text += "${" + name + "}"
                names.append(name)
    return text, list(dict.fromkeys(names))


#: What names the directory the job starts in (sbatch's working directory unless the script moved).
SUBMIT_DIR = {"$SLURM_SUBMIT_DIR", "${SLURM_SUBMIT_DIR}"}
START_DIR = {"$PWD", "${PWD}", "`pwd`", "$(pwd)"}


def _never_set(word: Word | None, facts: ScriptFacts) -> bool:
    """A word that is wholly a variable the script never sets (nor Slurm, nor the shell)."""
    if word is None or not unknown_word(word):
        return False
    name = word.text.strip("${}")
    return name not in facts.assigned and name not in KNOWN_VARS and not name.startswith(("SLURM_", "SBATCH_"))


def _in_submit_dir(word: Word, facts: ScriptFacts, command: Command) -> str | None:
    """``$SLURM_SUBMIT_DIR/fit.py`` (or ``$PWD/fit.py`` where the script does not ``cd`` before its launch): the
    program relative to the directory the job was submitted from."""
    if len(word.parts) < 2 or any(p.quote != "'" for p in word.parts[1:]):
        return None
    head = word.parts[0].text
    moved = any(c.words and c.words[0].text in ("cd", "pushd") for c in facts.commands[:facts.commands.index(
        command)] if c in facts.commands) if command in facts.commands else True
    if head in SUBMIT_DIR or (head in START_DIR and not moved):
        rest = "".join(p.text for p in word.parts[1:]).lstrip("/")
        return rest or None
    return None


def gpus_per_node(sbatch: dict[str, Any]) -> int | None:
    """The GPUs a node of the job has, from whichever directive says it: --gpus-per-node (``a100:4`` too),
    --gres=gpu[:type]:N, --gpus-per-task times the tasks per node, --gpus over the nodes."""
    def count(value: Any) -> int | None:
        return int_or_none(str(value).rsplit(":", 1)[-1]) if value is not None else None

    if (n := count(sbatch.get("gpus-per-node"))) is not None:
        return n
    gres = re.search(r"(?:^|,)gpu(?::[A-Za-z0-9_.-]+)?:([0-9]+)", str(sbatch.get("gres") or ""))
    if gres:
        return int(gres.group(1))
    per_task, tasks = count(sbatch.get("gpus-per-task")), int_or_none(str(sbatch.get("ntasks-per-node")))
    nodes, ntasks = int_or_none(str(sbatch.get("nodes"))) or 1, int_or_none(str(sbatch.get("ntasks")))
    if tasks is None and ntasks is not None and ntasks % nodes == 0:
        tasks = ntasks // nodes
    if per_task is not None:
        return per_task * (tasks or 1)
    total = count(sbatch.get("gpus"))
    return total // nodes if total is not None and total % nodes == 0 else None


def _run_time_gpus(sbatch: dict[str, Any], node_gpus: Callable[[str | None], int | None] | None
                   ) -> tuple[int | None, str]:
    """A node's GPUs where the launch counts them at run time: the job's request, else the cluster's nodes (the
    script's partition's), and whose count it is."""
    if (gpus := gpus_per_node(sbatch)) is not None:
        return gpus, "the job's GPUs per node"
    partition = str(sbatch["partition"]).split(",")[0] if sbatch.get("partition") else None
    found = node_gpus(partition) if node_gpus is not None else None
    if found:
        return found, (f"a node of partition {partition} has {found} GPUs, the cluster says; the job asks for none: "
                       f"check that it gets them (sbatch.gpus-per-node: {found})" if partition else
                       f"a node of the default partition has {found} GPUs, the cluster says; the job asks for none: "
                       f"check that it gets them (sbatch.gpus-per-node: {found})")
    return None, "the job asks for no GPUs and no cluster says a node's"


#: The ways sbatch is asked for GPUs; a preset takes one (G3, G4): GPUs per node.
GPU_REQUESTS = ("gpus-per-node", "gres", "gpus-per-task", "gpus")


def _one_gpu_request(sbatch: dict[str, Any], key_lines: dict[str, int], fixes: list[str]) -> None:
    """GPUs asked for per task, per job or in several ways at once: the preset's one request, GPUs per node."""
    given = [k for k in GPU_REQUESTS if k in sbatch and (k != "gres" or "gpu" in str(sbatch[k]))]
    if not given or given == ["gpus-per-node"] or (given == ["gres"] and str(sbatch["gres"]).count(":") <= 2):
        return
    gpus = gpus_per_node(sbatch)
    if gpus is None:
        return
    said = ", ".join(f"--{k}={sbatch[k]}" for k in given)
    line = min((key_lines[f"sbatch.{k}"] for k in given if f"sbatch.{k}" in key_lines), default=0)
    for k in given:
        if k != "gres" or re.fullmatch(r"gpu(?::[A-Za-z0-9_.-]+)?:[0-9]+", str(sbatch[k])):
            sbatch.pop(k)
            key_lines.pop(f"sbatch.{k}", None)
    sbatch["gpus-per-node"] = gpus
    key_lines["sbatch.gpus-per-node"] = line
    fixes.append(f"sbatch.gpus-per-node: {gpus}, from {said} (a preset asks for GPUs one way, per node: G3, G4)")


def _builds_launch(facts: ScriptFacts, command: Command) -> list[Command]:
    """The assignments that only build the launch line (``LAUNCHER="torchrun --rdzv_endpoint $MASTER_ADDR:..."``,
    ``CMD=...``) and use a value ntui sets itself: as setup lines they would run with what the import dropped."""
    def uses(c: Command) -> set[str]:
        return {v for w in c.words for v in w.expanded_vars}

    pure = {id(c): c for c in facts.commands[:facts.commands.index(command)]
            if c.construct is None and c.depth == 0 and (assigned := assignments(c)) and (
                c.words[0].text in ("export", "declare", "readonly") or len(assigned) == len(c.words))}
    wanted = uses(command)  # the variables the launch line reads, and what their values read, ...
    grew = True
    while grew:
        grew = False
        for c in pure.values():
            if {n for n, _ in assignments(c)} & wanted and not uses(c) <= wanted:
                wanted |= uses(c)
                grew = True
    elsewhere: set[str] = set()  # ... unless another line of the script reads them too
    for c in facts.commands:
        if c is not command and id(c) not in pure:
            elsewhere |= uses(c)
    out = []
    for c in pure.values():
        names = {n for n, _ in assignments(c)}
        if names <= wanted and not names & elsewhere and not names & NTUI_ENV and uses(c) & NTUI_ENV:
            out.append(c)
    return out


def _after_start_dir(word: Word) -> str | None:
    """``$(pwd)/fit.py``, ```pwd`/fit.py``, ``$PWD/fit.py``: the path after the shell's directory."""
    if len(word.parts) < 2 or word.parts[0].text not in START_DIR or any(p.quote != "'" for p in word.parts[1:]):
        return None
    return "".join(p.text for p in word.parts[1:]).lstrip("/") or None


def _run_dir(facts: ScriptFacts, command: Command, script_dir: str) -> tuple[str | None, str]:
    """The directory the launch runs in: sbatch's --chdir, then each ``cd`` the batch shell runs before the launch
    (None where the environment decides it: ``cd $WORK/x``), and what set it last."""
    chdir = facts.directive("chdir")
    where: str | None = script_dir
    said = ""
    if chdir:
        where, said = os.path.normpath(os.path.join(script_dir, chdir)), f"#SBATCH --chdir={chdir}"
    for c in facts.commands[:facts.commands.index(command)] if command in facts.commands else []:
        words = c.expanded if c.expanded is not None else c.words
        if not words or words[0].text not in ("cd", "pushd") or c.depth or c.construct is not None:
            continue
        said = " ".join(w.raw for w in c.words)
        target = words[1] if len(words) > 1 else None
        if target is None or target.text in ("~", "$HOME"):
            where = None
        elif target.parts and target.parts[0].text in SUBMIT_DIR and all(p.quote == "'" for p in target.parts[1:]):
            where = os.path.normpath(os.path.join(script_dir, "".join(p.text for p in target.parts[1:]).lstrip("/")))
        elif target.plain and where is not None:
            where = os.path.normpath(os.path.join(where, target.text))
        elif target.plain:
            where = target.text if os.path.isabs(target.text) else None
        elif (from_env := _with_env(target, facts)) is not None and (
                from_env[0].startswith(("/", "${")) or where is not None):  # cd $WORK/run: the environment's
            where = os.path.normpath(from_env[0] if from_env[0].startswith(("/", "${")) else os.path.join(
                where or "", from_env[0]))
        else:
            where = None
    return where, said


def import_script(facts: ScriptFacts, node_gpus: Callable[[str | None], int | None] | None = None) -> Imported:
    """The preset of the script (module docstring); the H findings come with it (and with a refusal, on its
    :attr:`ScriptError.findings`). ``node_gpus``: asked, only where the script leaves a node's GPUs to run time
    (``--nproc_per_node=gpu`` on an ``--exclusive`` node), for the GPUs a node of the script's partition (None: the
    default one) has, from the cluster; None where it cannot say (no site's facts: the cluster's own)."""
    findings = check_script(facts) if facts.refusal is None or facts.directives or facts.launches else []
    try:
        if facts.refusal is not None:
            raise ScriptError(facts.path, *facts.refusal)
        return _import(facts, findings, node_gpus)
    except ScriptError as exc:
        exc.findings = findings
        raise


#: srun options that, with no #SBATCH line, make the job's allocation: the preset's sbatch section has them.
SRUN_ALLOCATION = {"partition", "account", "qos", "time", "mem", "mem-per-cpu", "mem-per-gpu", "constraint",
                   "reservation", "cpus-per-task", "exclusive"}


def _import(facts: ScriptFacts, findings: list[ScriptFinding],
            node_gpus: Callable[[str | None], int | None] | None) -> Imported:
    command, launch = the_launch(facts)
    if launch.launcher in OTHER_LAUNCHERS:
        raise ScriptError(facts.path, launch.line, OTHER_LAUNCHERS[launch.launcher])
    if command.construct is not None:
        start, end = command.construct
        raise ScriptError(facts.path, command.line, f"the launch line is inside a shell construct (lines {start}-"
                          f"{end}: if, for, a function...): a preset launches once, unconditionally; move the launch "
                          "out of it to import the script")
    if launch.launcher == "srun" and not launch.under_srun and (int_or_none(facts.directive("nodes")) or 1) > 1:
        pinned = next((n for n, text in enumerate(facts.lines[:launch.line - 1], 1) if not text.lstrip().startswith(
            "#") and re.search(r"\bsrun\b.*\s(?:-w|--nodelist)[\s=]", text)), None)
        if pinned is not None:  # srun -w <one node> before it: the script starts services node by node itself
            raise ScriptError(facts.path, launch.line, f"the program runs once, in the batch shell, after the script "
                              f"starts steps on chosen nodes itself (srun -w, line {pinned}): a driver of a cluster "
                              "the script builds (Ray, Dask, Spark), not ranks a preset starts. ntui imports scripts "
                              "whose srun, torchrun or accelerate starts the program on every node")
    fixes: list[str] = []
    notes: list[str] = []
    skipped: list[tuple[int, str]] = []
    if not facts.directives:
        form = "a shell fragment (no #! line, no #SBATCH line), run with bash or sourced" if facts.fragment else \
            "no #SBATCH line"
        notes.append(f"sbatch: {form}: the job's shape comes from srun's and the launcher's options on line "
                     f"{launch.line}, and the preset is a batch job of its own; check its sizes before submitting")
    key_lines: dict[str, int] = {}
    script_dir = os.path.dirname(os.path.abspath(facts.path))
    name = facts.directive("job-name") or Path(facts.path).stem
    preset: dict[str, Any] = {"name": name, "description": f"imported from {facts.path}"}
    key_lines["name"] = next((d.line for d in facts.directives if d.option == "job-name"), 0)
    # sbatch
    sbatch: dict[str, Any] = {}
    for d in facts.directives:
        if d.option in SBATCH_NTUI:
            if d.option == "output" and d.value and "/" in d.value and "%" not in os.path.dirname(d.value):
                preset["logs"] = {"dir": os.path.join(script_dir, os.path.dirname(d.value))}
                key_lines["logs.dir"] = d.line
            skipped.append((d.line, f"#SBATCH --{d.option}: ntui names the batch and rank logs itself "
                                    "(<logs.dir>/<name>-<jobid>.out, L1, L5)"))
            continue
        if d.option == "job-name":
            continue
        if d.option in SBATCH_RESERVED or d.option not in SBATCH_OPTIONS:
            why = SBATCH_RESERVED.get(d.option, "not an option a preset has (yet): add it by hand if the job needs "
                                                "it")
            skipped.append((d.line, f"#SBATCH --{d.option}{'=' + d.value if d.value else ''}: {why}"))
            continue
        sbatch[d.option] = _yaml_value(d.value)
        key_lines[f"sbatch.{d.option}"] = d.line
    logs = "ntui writes every rank's own log (L2)"
    why_not = {"label": logs, "unbuffered": logs, "output": logs, "error": logs,
               "open-mode": "ntui appends to the logs (L5)",
               "export": "ntui's launch passes the whole environment (E3); a NAME=value in it is in env",
               "kill-on-bad-exit": "ntui's launch stops the job when a rank fails",
               "cpus-per-task": "ntui's launch passes the job's (C1)", "gpu-bind": "ntui's launch sets it (G5)",
               "container-image": "the container is not imported (below)",
               "environment": "the container engine's environment (CSCS's EDF) is not a preset container runtime yet: "
                              "the preset's ranks run outside it; add the option by hand to the rendered script, or "
                              "import a script that runs the program in a runtime a preset has"}
    exported: dict[str, str] = {}  # srun --export=ALL,NAME=value: values the tasks get
    for opt, value in launch.srun.items():
        shown = f"srun --{opt}{'=' + value if value else ''}"
        if opt == "export" and value and value.split(",")[0].upper() == "ALL":
            exported = dict(kv.split("=", 1) for kv in value.split(",")[1:] if "=" in kv and "$" not in kv)
        if not facts.directives and opt in SRUN_ALLOCATION and value is not None and "$" not in value:
            sbatch[opt] = _yaml_value(value)  # no #SBATCH line: srun's allocation is the job's (a login-node srun)
            key_lines[f"sbatch.{opt}"] = launch.line
            fixes.append(f"sbatch.{opt}: srun's --{opt}={value} on line {launch.line} (the script has no #SBATCH "
                         "line: srun makes the allocation) is the job's in the preset")
        elif opt in SRUN_SHAPE and opt != "cpus-per-task" and value is not None and not value.startswith("$"):
            if str(sbatch.get(opt)) != value:
                fixes.append(f"sbatch.{opt}: srun's --{opt}={value} on line {launch.line} (the launch's shape) "
                             "is the job's in the preset")
            sbatch[opt] = _yaml_value(value)
            key_lines[f"sbatch.{opt}"] = launch.line
        elif opt in ("container-image", "container-mounts", "container-workdir") and launch.container == "pyxis":
            continue  # said with the container
        else:  # every option of the launch's srun is said, never dropped silently
            why = why_not.get(opt, "not in a preset (ntui writes the srun line)")
            skipped.append((launch.line, f"{shown}: {why}"))
            if opt == "environment":
                notes.append(f"container: {shown} on line {launch.line}: {why}")
    if launch.wrappers:
        wrapper = " ".join(w.raw for w in launch.wrappers)
        notes.append(f"the launch: `{wrapper}` wraps the launcher on line {launch.line} (a profiler, a binding, a "
                     "report): a preset starts the launcher itself, without it; add it back by hand where the job "
                     "needs it")
    tasks_per_node = int_or_none(str(sbatch.get("ntasks-per-node")))
    if launch.launcher != "srun" and launch.under_srun and tasks_per_node not in (None, 1):
        fixes.append(f"sbatch.ntasks-per-node: was {sbatch['ntasks-per-node']}, now 1: one {launch.launcher} per "
                     "node (H5, G2)")
        sbatch["ntasks-per-node"] = 1
    if launch.image and "image" not in sbatch and launch.container == "shifter":
        sbatch["image"] = launch.image
        key_lines["sbatch.image"] = launch.line
    ntasks, per_node, nodes_given = (int_or_none(str(sbatch.get(k))) for k in ("ntasks", "ntasks-per-node", "nodes"))
    if ntasks is not None and per_node is None and nodes_given and ntasks % nodes_given == 0 and ntasks > nodes_given:
        per_node = sbatch["ntasks-per-node"] = ntasks // nodes_given
        del sbatch["ntasks"]
        key_lines["sbatch.ntasks-per-node"] = key_lines.pop("sbatch.ntasks", 0)
        fixes.append(f"sbatch.ntasks-per-node: {per_node}, the {ntasks} tasks over {nodes_given} nodes (a preset "
                     "gives tasks per node, G9)")
        ntasks = None
    _one_gpu_request(sbatch, key_lines, fixes)
    if ntasks == 1 and nodes_given is None and not per_node:  # one task is on one node
        sbatch["nodes"] = 1
        key_lines["sbatch.nodes"] = next((d.line for d in facts.directives if d.option == "ntasks"), 0)
    elif ntasks is not None and per_node and nodes_given is None and ntasks % per_node == 0 and ntasks >= per_node:
        sbatch["nodes"] = ntasks // per_node
        key_lines["sbatch.nodes"] = next((d.line for d in facts.directives if d.option == "ntasks"), 0)
        fixes.append(f"sbatch.nodes: {ntasks // per_node}, the nodes {ntasks} tasks of {per_node} a node fill "
                     "(the script gives no --nodes)")
    elif ntasks is not None and per_node and ntasks != (nodes_given or 1) * per_node:
        where = next((d.line for d in facts.directives if d.option == "ntasks"), launch.line)
        raise ScriptError(facts.path, where, f"the job's task counts disagree: --ntasks={ntasks} against "
                          f"--ntasks-per-node={per_node} on {nodes_given or 1} node(s); a preset has one task "
                          "layout: keep one of them to import the script")
    told = launch.opt("--nnodes", "--num_machines") if launch.launcher != "srun" else None
    if told is not None and "nodes" not in sbatch and ntasks is None and int_or_none(told[0]) is not None:
        sbatch["nodes"] = int(told[0] or 0)  # `srun torchrun --nnodes 2` in a fragment: the job's nodes
        key_lines["sbatch.nodes"] = told[1].line if told[1] is not None else launch.line
        fixes.append(f"sbatch.nodes: {sbatch['nodes']}, from {launch.launcher}'s {told[0]} nodes on line "
                     f"{launch.line} (the script gives no --nodes)")
    one_task = next((f for f in findings if f.rule == "H13"), None)
    gpus = gpus_per_node(sbatch)
    if one_task is not None and gpus and launch.launcher == "srun" and "ntasks" not in sbatch:
        fixes.append(f"sbatch.ntasks-per-node: was 1, now {gpus}: the program asks for {gpus} devices a node and "
                     "srun starts one process a GPU (H13, G1)")  # Lightning's devices=N: one task per device
        sbatch["ntasks-per-node"] = gpus
        key_lines["sbatch.ntasks-per-node"] = one_task.line
    preset["sbatch"] = sbatch
    # launcher
    launcher: dict[str, Any] = {"type": launch.launcher}
    key_lines["launcher"] = launch.line
    extra: list[str] = []
    nodes = int_or_none(str(sbatch.get("nodes"))) or 1
    if launch.launcher == "torchrun":
        nproc = launch.opt("--nproc-per-node")
        if nproc is not None and int_or_none(nproc[0]) is not None:
            launcher["nproc-per-node"] = int(nproc[0] or 0)
        elif nproc is not None:
            gpus, whose = _run_time_gpus(sbatch, node_gpus)
            launcher["nproc-per-node"] = gpus or 1
            fixes.append(f"launcher.nproc-per-node: was {nproc[0]!r}, now {gpus or 1} ({whose})")
    if launch.launcher == "accelerate":
        total = launch.opt("--num_processes")
        per = PER_NODE.search(total[0] or "") if total is not None else None
        if total is not None and int_or_none(total[0]) is not None:
            launcher["nproc-per-node"] = max(1, int(total[0] or 0) // nodes)
        elif per is not None:
            launcher["nproc-per-node"] = int(per.group(1) or per.group(2))
        elif total is not None and _never_set(total[1], facts):
            raise ScriptError(facts.path, total[1].line if total[1] else launch.line,
                              f"--num_processes is {total[0]}, which the script never sets: accelerate gets no "
                              "process count. Set it (NAME=value, no blanks around =) to import the script")
        elif total is not None:
            gpus, whose = _run_time_gpus(sbatch, node_gpus)
            launcher["nproc-per-node"] = gpus or 1
            fixes.append(f"launcher.nproc-per-node: {gpus or 1}, for --num_processes {total[0]} ({whose})")
        if launch.opt("--multi_gpu") is not None:
            launcher["multi-gpu"] = True
        if (mp := launch.opt("--mixed_precision")) is not None:
            launcher["mixed-precision"] = mp[0]
        if (db := launch.opt("--dynamo_backend")) is not None:
            launcher["dynamo-backend"] = db[0]
        if launch.opt("--cpu") is not None:
            launcher["cpu"] = True
    owned = {"torchrun": ("--nnodes", "--nproc-per-node", "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id",
                          "--node-rank", "--master-addr", "--master-port", "--standalone", "--module", "--no-python"),
             "accelerate": ("--num_processes", "--num_machines", "--machine_rank", "--main_process_ip",
                            "--main_process_port", "--rdzv_backend", "--multi_gpu", "--mixed_precision",
                            "--dynamo_backend", "--cpu", "--config_file", "--module", "--no_python")}
    for opt_name, value, opt_word in launch.launcher_opts:
        if opt_name in LEGACY_FLAGS:
            fixes.append(f"{opt_name}: torch.distributed.launch's; torchrun always gives the ranks LOCAL_RANK in "
                         "their environment")
            continue
        if opt_name in owned.get(launch.launcher, ()):
            if opt_name in ("--rdzv-id",) and value and "$SLURM_JOB_ID" in value:
                fixes.append(f"rdzv-id: was the literal {value!r}, now the job id (R6)" if value.startswith("$")
                             and any(f.rule == "H3" for f in findings) else "rdzv-id: the job id (R6)")
            elif opt_name == "--config_file":
                skipped.append((launch.line, f"accelerate --config_file {value}: ntui writes the job's own "
                                             "accelerate config (A1); its keys that matter are launcher keys"))
            continue
        if opt_name in ("--rdzv-conf", "--rdzv_conf") and value is not None:
            conf = [kv for kv in value.split(",") if not kv.startswith("is_host=")]
            if len(conf) < len(value.split(",")):
                skipped.append((launch.line, "is_host in --rdzv-conf: ntui sets it per node (R8)"))
            if not conf:
                continue
            value = ",".join(conf)
        if value is not None and opt_word is not None and "$" in value and _literal(opt_word, facts) is None:
            notes.append(f"launcher.extra-args: {opt_name} {opt_word.raw} depends on the shell at run time; kept as "
                         f"the text {value!r}, which the preset passes verbatim: replace it with its value")
        extra.append(opt_name if value is None else f"{opt_name}={value}")
    if extra:
        launcher["extra-args"] = extra
    if launch.python and launch.python != ["python"]:
        launcher["python"] = " ".join(launch.python)
    preset["launcher"] = launcher
    if launch.direct and launch.program is not None:
        fixes.append(f"the launch: srun ran {launch.program.text} itself, with no interpreter, on line {launch.line}: "
                     "every task fails unless the file is executable with a #! line naming python; the preset runs "
                     "it with python")
    if launch.launcher == "srun" and not launch.under_srun:
        fixes.append("the launch: the program ran once, in the batch shell; the preset starts it with srun, one "
                     "process per task (as many as GPUs per node where the job asks for GPUs, G1)")
    # container
    if launch.container is not None or "image" in sbatch:
        preset["container"] = _container_section(launch, facts, skipped, key_lines)
    # program
    if launch.module is not None:
        runner = {"srun": "srun's python", "torchrun": "torchrun", "accelerate": "accelerate launch"}.get(
            launch.launcher, launch.launcher)
        raise ScriptError(facts.path, launch.line, f"{runner} runs a Python module (-m {launch.module}), and a "
                          "preset's program is a script file (script:), not a module, yet: import a script that runs "
                          "a file, e.g. one holding `import runpy; runpy.run_module("
                          f"'{launch.module}', run_name='__main__', alter_sys=True)`")
    if launch.program is None:
        raise ScriptError(facts.path, launch.line, "the launch line names no program")
    if launch.launcher == "srun" and launch.args and launch.args[0].text.endswith(".py") and \
            launch.program.text.endswith(".py"):
        raise ScriptError(facts.path, launch.line, f"the program {launch.program.text} is given another program "
                          f"({launch.args[0].text}) to run: a launcher of its own, whose processes ntui cannot see. "
                          "Import a script that starts the training program itself")
    program = _literal(launch.program, facts)
    if program is None and (program := _in_submit_dir(launch.program, facts, command)) is not None:
        notes.append(f"script: {launch.program.raw} is the program in the directory sbatch was run from: the "
                     f"preset names it as {program!r} next to the script; check that this is where it is")
    run_dir, moved_by = _run_dir(facts, command, script_dir)
    if program is None and (rest := _after_start_dir(launch.program)) is not None and run_dir is not None and \
            launch.container is None:  # `pwd`/fit.py after the script's own cd: the program in that directory
        program = os.path.join(run_dir, rest)
    if program is None and (from_env := _with_env(launch.program, facts)) is not None and re.search(
            r"\}/[^$/]+$", from_env[0]):  # $CODE/fit.py: a file in a directory the environment names
        program = from_env[0]
    if program is None:
        raise ScriptError(facts.path, launch.line, f"the program {launch.program.raw} depends on the environment "
                          "at run time: write its path")
    from_dir = run_dir if run_dir is not None and not os.path.isabs(program) and launch.container is None else ""
    if used := sorted(set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", program if "${" in program else from_dir))):
        notes.append(f"script: the program's path comes from {', '.join('$' + n for n in used)}, which the script "
                     "does not set: ntui expands it when it renders the job, from the environment it runs in (F2); "
                     "check it is set there (a file the script sources does not set it for ntui), or write the path")
    if not os.path.isabs(program) and launch.container is None and run_dir is None:
        raise ScriptError(facts.path, launch.line, f"the program {program} is relative to the directory the script "
                          f"moved to with `{moved_by}`, which the environment decides: write the program's path")
    base = run_dir if run_dir is not None and launch.container is None else script_dir
    preset["script"] = program if os.path.isabs(program) or program.startswith("${") else os.path.normpath(
        os.path.join(base, program))
    if base != script_dir and not os.path.isabs(program) and not program.startswith("${"):
        notes.append(f"script: {program} is relative to {base}, where the script moved (`{moved_by}`)")
    key_lines["script"] = launch.line
    args: list[str] = []
    for i, w in enumerate(launch.args):
        if w.text in ("$@", "${@}", "$*") and w.expanded_vars:
            notes.append(f"args: the script's own arguments ({w.raw}) have no place in a preset (its args are "
                         "fixed): give them with --set args=[...] when you render or submit it")
            continue
        value = _literal(w, facts)
        if value is None:
            value = w.text
            notes.append(f"args.{i}: {w.raw} depends on the shell at run time; kept as the text {w.text!r}, which "
                         "the preset passes verbatim: replace it with its value (--set args=...)")
        args.append(value)
    preset["args"] = args
    key_lines["args"] = launch.line
    launch_text = "\n".join(facts.lines[command.line - 1:command.end_line])
    for var_name, var in sorted(launch.scope.items()):
        if var.extended and re.search(rf"\$\{{?{var_name}\b", launch_text):
            for at_line, added in var.extended:
                notes.append(f"args: line {at_line} adds {' '.join(added.split())!r} to ${var_name} on one path only "
                             "(an if, a loop, && or ||); the preset's launch is the one without it: add it to args "
                             "(--set args=[...]) where the job needs it")
    # environment, setup
    env: dict[str, str] = {}
    setup: list[str] = []
    done_constructs: set[tuple[int, int]] = set()
    builds_launch = _builds_launch(facts, command)
    at = facts.commands.index(command)
    done_lines: set[tuple[int, int]] = set()
    for position, c in enumerate(facts.commands):
        if position > at and c.construct is None and c.depth == 0:
            if c.line > command.end_line:
                skipped.append((c.line, f"{_source(facts, c)}: runs after the launch; ntui's script ends with the "
                                        "launch"))
            continue
        if c is command:
            continue
        if c.function is not None:  # a function's body, ran by its call: the call line is what is kept
            continue
        if c.calls is not None:
            holds_launch = position < at and all(d.function is not None for d in facts.commands[position + 1:at + 1])
            start, end = c.calls
            if holds_launch:
                skipped.append((c.line, f"{_source(facts, c)}: calls the function (lines {start}-{end}) that runs "
                                        "the launch; the preset's launch is that launch, the function's other lines "
                                        "are not imported"))
            elif c.calls not in done_constructs:
                done_constructs.add(c.calls)
                setup += facts.lines[start - 1:end]
                setup.append(_source(facts, c))
            else:
                setup.append(_source(facts, c))
            continue
        if (c.line, c.end_line) in done_lines:
            continue  # another command of the same line (a && b, a | b): the line is kept once
        done_lines.add((c.line, c.end_line))
        if c.construct is not None:
            if c.construct not in done_constructs:
                done_constructs.add(c.construct)
                start, end = c.construct
                if position < at:
                    setup += facts.lines[start - 1:end]
                else:
                    skipped.append((start, "a compound command after the launch: not imported"))
            continue
        words = c.words
        if c in builds_launch:
            skipped.append((c.line, f"{_source(facts, c).splitlines()[0].strip()[:60]}...: builds the launch line "
                                    "from values ntui sets itself (the rendezvous, the ranks); the preset's "
                                    "launcher, script and args are that launch"))
            continue
        if words and words[0].text == "export" or assignments(c) and len(assignments(c)) == len(words):
            kept: list[str] = []
            for var_name, var_value in assignments(c):
                if var_name in NTUI_ENV:
                    skipped.append((c.line, f"{var_name}: ntui sets it (the rendezvous and layout, R1, R4, N7)"))
                    continue
                plain = _literal(var_value, facts) if var_value is not None else None
                if var_value is not None and plain is not None and words[0].text == "export":
                    env[var_name] = plain
                    key_lines[f"env.{var_name}"] = c.line
                else:
                    kept.append(var_name)
            if kept:
                setup.append(_source(facts, c, command))
            continue
        if c.heredoc:  # the command, its here-document and the line that ends it
            setup.append("\n".join(facts.lines[c.line - 1:c.end_line + len(c.heredoc) + 1]).strip())
            continue
        setup.append(_source(facts, c, command))
    for var_name, task_value in launch.task_env:
        if var_name in NTUI_ENV:
            continue
        plain = _literal(task_value, facts)
        if plain is not None:
            env[var_name] = plain
        else:
            skipped.append((launch.line, f"{var_name}={task_value.raw}: set by each task from its own variables; "
                                         "ntui's launch sets the ranks' variables itself (Q1)"))
    for var_name, plain_value in exported.items():
        if var_name not in NTUI_ENV and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var_name):
            env.setdefault(var_name, plain_value)
            key_lines.setdefault(f"env.{var_name}", launch.line)
    if env:
        preset["env"] = env
    if setup:  # the script's lines in the shell it ran in (bash's defaults, its own `set`s), not ntui's -euo
        preset["setup"] = [SETUP_OPEN, *setup, SETUP_CLOSE]  # pipefail, under which `[ "$RESUME" = 1 ]` or a
        key_lines["setup"] = command.line  # conda activate with RESUME unset would end the job
    for f in findings:
        if f.rule == "H2":
            fixes.append(f"sbatch: line {f.line}'s #SBATCH was ignored by sbatch and is not imported (H2)")
        if f.rule == "H4":
            fixes.append("the ranks: each task's own rank from ntui's launch (Q1), no longer the batch host's (H4)")
        if f.rule == "H6":
            fixes.append("MASTER_PORT: from the job id (R4), no longer fixed (H6)")
        if f.rule == "H8":
            fixes.append("the launcher's node count: the job's (H8)")
        if f.rule == "H9":
            fixes.append(f"{launch.launcher}: started on every node by srun (H9)")
        if f.rule == "H1":
            fixes.append("the #! line: first (H1)")
    text = _yaml_text(preset, facts.path, fixes, skipped, notes)
    return Imported(text, preset, list(dict.fromkeys(fixes)), skipped, key_lines, findings, notes)


#: Around an imported script's setup lines: they run as the script ran them, then ntui's launch as it is written.
SETUP_OPEN = "set +euo pipefail  # the script's own lines, in the shell sbatch gave them"
SETUP_CLOSE = "set -euo pipefail  # ntui's launch"


def _source(facts: ScriptFacts, c: Command, launch: Command | None = None) -> str:
    """The command's lines as written; a command that shares a line with the launch (``clear; srun ...``,
    ``cd run && srun ...``): its own words, never the launch with it."""
    if launch is not None and c is not launch and c.line <= launch.end_line and launch.line <= c.end_line:
        return " ".join(w.raw for w in c.words)
    return "\n".join(facts.lines[c.line - 1:c.end_line]).strip()


def _yaml_value(text: str | None) -> Any:
    if text is None:
        return True
    if re.fullmatch(r"[1-9][0-9]*|0", text):
        return int(text)
    return text


def _yaml_text(preset: dict[str, Any], source: str, fixes: Sequence[str], skipped: Sequence[tuple[int, str]],
               notes: Sequence[str]) -> str:
    def one_line(text: str) -> str:  # a YAML comment ends at its line: a value written over lines is one here
        return " ".join(text.split())

    notes, fixes = [one_line(n) for n in notes], [one_line(f) for f in fixes]
    skipped = [(n, one_line(why)) for n, why in skipped]
    head = [f"# Imported by ntui from {one_line(source)}."]
    if notes:
        head.append("# To check:")
        head += [f"#   - {n}" for n in notes]
    if fixes:
        head.append("# Fixed on the way:")
        head += [f"#   - {f}" for f in dict.fromkeys(fixes)]
    if skipped:
        head.append("# Not imported:")
        head += [f"#   - line {n}: {why}" for n, why in skipped]
    body = yaml.safe_dump(preset, sort_keys=False, default_flow_style=False, allow_unicode=True, width=110)
    return "\n".join(head) + "\n" + body



def _container_section(launch: Launch, facts: ScriptFacts, skipped: list[tuple[int, str]],
                       key_lines: dict[str, int]) -> dict[str, Any]:
    """The preset's ``container:`` from the launch line's runtime: its image, mounts and workdir (its other options
    are ntui's to write, K7)."""
    runtime = launch.container or "shifter"  # an #SBATCH --image alone: Shifter's
    section: dict[str, Any] = {"runtime": runtime}
    key_lines["container.runtime"] = launch.line
    if launch.image and runtime != "shifter":
        section["image"] = launch.image
        key_lines["container.image"] = launch.line
    mounts: Sequence[tuple[str, Word | str]]
    if runtime == "pyxis":
        given = launch.srun.get("container-mounts")
        mounts, sep = ([("", given)] if given else []), ","
        launch.workdir = launch.srun.get("container-workdir")
    else:
        mounts, sep = launch.mounts, MOUNT_OPTIONS.get("podman-hpc" if runtime == "podman" else
                                                        "apptainer" if runtime == "singularity" else runtime,
                                                        ((), ""))[1]
    values: list[str] = []
    for prefix, word in mounts:
        text = _literal(word, facts) if isinstance(word, Word) else (None if "$" in word else word)
        if text is None:
            shown = word.raw if isinstance(word, Word) else word
            skipped.append((launch.line, f"the mount {shown}: it depends on the environment at run time; "
                                         "write its path in container.mounts"))
            continue
        text = text[len(prefix):] if text.startswith(prefix) else text
        values += [v for v in (text.split(sep) if sep else [text]) if v]
    if values:
        section["mounts"] = values
        key_lines["container.mounts"] = launch.line
    if launch.workdir:
        section["workdir"] = launch.workdir
        key_lines["container.workdir"] = launch.line
    if launch.runtime_options:
        section["options"] = list(launch.runtime_options)
        key_lines["container.options"] = launch.line
    return section


