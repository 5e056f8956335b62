"""A hand-written sbatch script, read (never run), checked against the rules, and imported into a preset.

**Reading** (:func:`read_script`): the ``#SBATCH`` lines as sbatch reads them (only above the first command, short
options by their long names), the variables the script sets, the setup lines before the launch, and the launch line:
``srun`` with its options, ``torchrun`` / ``python -m torch.distributed.run|launch``, ``accelerate launch`` /
``python -m accelerate.commands.launch``, or a Python program; inside ``bash -c '...'`` (its ``"$@"`` and ``"$0"``
followed) and inside a container (``shifter``, ``podman-hpc run``, ``apptainer|singularity exec``, srun's
``--container-image``). Words keep their quoting (:mod:`ntui.core.compose.shellwords`), so what the batch shell
expands once is told from what each task expands for itself.

**Checking** (:func:`check_script`): the H rules of the rule table (H1-H10: what makes a hand-written multi-node
launch go wrong), each finding at its line with the rule's fix; then the imported preset goes through every preset
rule, its problems shown at the script's lines they came from.

**Importing** (:func:`import_script`): a preset that renders to the same job (the same directives, the same launch
shape, program, arguments, environment and setup lines), with the H fixes applied and listed, and every line that
has no place in a preset named, never silently dropped.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ntui.core.compose.bashread import BATCH, Var, commands, task_commands
from ntui.core.compose.launchcli import LAUNCHER_CLIS, LauncherCli
from ntui.core.compose.shellwords import Command, ShellSyntax, Word
from ntui.core.compose.shellwords import commands as lexed
from ntui.core.compose.yamlsrc import LoadedPreset, load_yaml_with_lines
from ntui.core.problems import Problem, Severity, Source

__all__ = ["Imported", "Launch", "ScriptError", "ScriptFacts", "check_script", "import_script", "read_script"]

#: sbatch's short options, by their long names (sbatch.1).
SBATCH_SHORT = {"-N": "nodes", "-n": "ntasks", "-c": "cpus-per-task", "-t": "time", "-A": "account", "-q": "qos",
                "-C": "constraint", "-J": "job-name", "-o": "output", "-e": "error", "-p": "partition",
                "-G": "gpus", "-w": "nodelist", "-x": "exclude", "-D": "chdir", "-d": "dependency", "-a": "array",
                "-L": "licenses", "-M": "clusters", "-S": "core-spec", "-i": "input", "-m": "distribution",
                "-k": "no-kill", "-s": "oversubscribe", "-O": "overcommit", "-Q": "quiet", "-H": "hold",
                "-v": "verbose", "-W": "wait", "-B": "extra-node-info"}
#: sbatch options without a value.
SBATCH_FLAGS = {"exclusive", "requeue", "no-requeue", "hold", "overcommit", "oversubscribe", "quiet", "verbose",
                "wait", "no-kill", "contiguous", "test-only", "parsable", "use-min-nodes", "spread-job"}
#: sbatch options ntui writes itself, from the preset's logs (L1, L5): not imported.
SBATCH_NTUI = {"output", "error", "open-mode"}
#: srun's short options and which of them take a value (srun.1).
SRUN_SHORT = {"-N": "nodes", "-n": "ntasks", "-c": "cpus-per-task", "-G": "gpus", "-w": "nodelist", "-o": "output",
              "-e": "error", "-t": "time", "-J": "job-name", "-p": "partition", "-A": "account", "-C": "constraint",
              "-W": "wait", "-m": "distribution", "-D": "chdir", "-x": "exclude", "-l": "label", "-u": "unbuffered",
              "-K": "kill-on-bad-exit", "-k": "no-kill", "-Q": "quiet", "-v": "verbose", "-O": "overcommit",
              "-s": "oversubscribe", "-E": "preserve-env", "-X": "disable-status", "-i": "input", "-q": "qos"}
SRUN_FLAGS = {"label", "unbuffered", "kill-on-bad-exit", "no-kill", "quiet", "verbose", "overcommit", "oversubscribe",
              "preserve-env", "disable-status", "exclusive", "overlap", "pty", "exact", "whole", "multi-prog",
              "no-allocate", "quit-on-interrupt", "test-only", "spread-job", "use-min-nodes", "contiguous"}
#: srun options the srun launcher writes itself, or that only say how output looks (ntui writes each rank's log).
SRUN_NTUI = {"output", "error", "label", "unbuffered", "export", "kill-on-bad-exit", "open-mode", "gpu-bind",
             "cpus-per-task"}
#: srun options that are the job's shape: imported into the preset's sbatch section.
SRUN_SHAPE = {"nodes", "ntasks", "ntasks-per-node", "gpus-per-node", "gpus-per-task", "gpus", "gres",
              "cpus-per-task"}
#: What the batch shell and Slurm set: never "used but never set" (H7).
KNOWN_VARS = {"HOME", "USER", "LOGNAME", "PATH", "PWD", "OLDPWD", "SHELL", "HOSTNAME", "TMPDIR", "SCRATCH",
              "PSCRATCH", "CFS", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_VISIBLE_DEVICES", "CONDA_PREFIX",
              "VIRTUAL_ENV", "LANG", "TERM", "RANDOM", "SECONDS", "BASH_SOURCE", "LINENO", "PPID", "UID", "EUID",
              "HOST", "MODULEPATH", "XDG_RUNTIME_DIR", "IFS", "EPOCHSECONDS", "EPOCHREALTIME", "BASHPID"}
#: Where the site's shell sets them (the centres' own work and scratch directories).
KNOWN_VARS |= {"WORK", "WORKDIR", "SCRATCHDIR", "STORE", "PROJECT", "PROJWORK", "MEMBERWORK", "LOCAL_SCRATCH",
               "TMP", "TEMP", "SLURM_TMPDIR", "CUDA_HOME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "BASH_VERSION"}
#: Prefixes of what Slurm, its MPI plug-ins and the launchers set in a job.
SET_BY_SLURM = ("SLURM_", "SBATCH_", "SLURMD_", "PMI_", "PMIX_", "OMPI_")
#: Variables that differ per task: expanded once by the batch shell, every task gets the batch host's value (H4).
PER_TASK_VARS = {"SLURM_PROCID", "SLURM_NODEID", "SLURM_LOCALID", "SLURM_TASK_PID", "SLURMD_NODENAME",
                 "SLURM_STEP_NODELIST", "RANK", "LOCAL_RANK", "NODE_RANK", "GROUP_RANK"}
#: Launcher options that name a node's rank: a literal number or a batch-shell value is the same on every node.
RANK_OPTIONS = {"--node-rank", "--machine_rank"}
#: The rendezvous and layout ntui computes (R1, R4, R6, R8): variables a script exports for it are not imported.
NTUI_ENV = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK", "LOCAL_WORLD_SIZE",
            "NNODES", "GPUS_PER_NODE", "NUM_NODES", "NODES", "HEAD_NODE", "HEAD_NODE_IP", "PYTHONUNBUFFERED",
            "SLURM_UNBUFFEREDIO", "SRUN_CPUS_PER_TASK"}
#: Runtimes and what prefixes them.
CONTAINERS = ("shifter", "podman-hpc", "podman", "apptainer", "singularity", "ch-run")
#: torch.distributed.launch's flags that torchrun no longer has.
LEGACY_FLAGS = {"--use_env", "--use-env"}
#: Launcher options that name the rendezvous port.
PORT_OPTIONS = {"--master-port", "--main_process_port", "--rdzv-endpoint"}
_PY = re.compile(r"^(python|pypy)[0-9.]*$")
#: ``$(( SLURM_JOB_NUM_NODES * 4 ))`` (either order): accelerate's total processes as nodes times processes per node.
_NODES = r"\$?\{?SLURM_(?:JOB_NUM_NODES|NNODES)\}?"
_PER_NODE = re.compile(rf"\(\(\s*{_NODES}\s*\*\s*([0-9]+)\s*\)\)|\(\(\s*([0-9]+)\s*\*\s*{_NODES}\s*\)\)")


class ScriptError(ValueError):
    """A file that cannot be imported at all (not a batch script, no launch line, two, an unreadable line).
    ``findings``: what checking the script found before the import was refused (its traps are still its traps)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.problem = Problem(Source(path, line), "", message)
        self.findings: list[Finding] = []


@dataclass(frozen=True)
class Directive:
    line: int
    option: str  # the long name, no dashes
    value: str | None


@dataclass
class Launch:
    """The launch line, as every layer of it reads it."""

    line: int
    end_line: int
    launcher: str  # srun | torchrun | accelerate
    under_srun: bool
    srun: dict[str, str | None] = field(default_factory=dict)
    container: str | None = None
    image: str | None = None
    mounts: list[tuple[str, Word]] = field(default_factory=list)  # (the option's prefix to strip, its value word)
    workdir: str | None = None
    runtime_options: list[str] = field(default_factory=list)  # the runtime's options ntui does not write itself
    launcher_opts: list[tuple[str, str | None, Word | None]] = field(default_factory=list)  # documented spelling
    python: list[str] = field(default_factory=list)
    program: Word | None = None
    module: str | None = None
    args: list[Word] = field(default_factory=list)
    task_env: list[tuple[str, Word]] = field(default_factory=list)  # set by each task (a bash -c payload)
    batch_words: list[Word] = field(default_factory=list)  # every word the batch shell expands
    task_words: list[Word] = field(default_factory=list)  # every word each task's shell expands
    scope: dict[str, Var] = field(default_factory=dict)  # the batch shell's variables at the launch

    def opt(self, *names: str) -> tuple[str | None, Word | None] | None:
        """The value of the first of ``names`` given (None: not given)."""
        for name, value, word in self.launcher_opts:
            if name in names:
                return value, word
        return None


@dataclass
class ScriptFacts:
    path: str
    lines: list[str]
    directives: list[Directive]
    late_directives: list[Directive]  # after the first command: sbatch ignores them (H2)
    first_command: int
    commands: list[Command]
    launches: list[tuple[Command, Launch]]
    assigned: dict[str, tuple[int, Word | None]]  # name -> (line, value word) for every variable the script sets
    #: what srun (or the batch shell) starts that is no launch ntui knows: (line, the program's name)
    unknown_launches: list[tuple[int, str]] = field(default_factory=list)

    def directive(self, option: str) -> str | None:
        found = [d.value for d in self.directives if d.option == option]
        return found[-1] if found else None


def _directive(text: str, line: int) -> list[Directive]:
    """``#SBATCH --opt=value``, ``--opt value``, ``-N 2``, ``-N2`` (several per line); a ``#`` after them ends it."""
    rest = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
    try:  # sbatch splits a directive on blanks, quotes respected; no shell reads it (<ACCOUNT> is a word)
        words = shlex.split(rest, comments=True)
    except ValueError:
        words = rest.split()
    out: list[Directive] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("#"):
            break
        if w.startswith("--"):
            name, eq, value = w[2:].partition("=")
            if not eq and name not in SBATCH_FLAGS and i + 1 < len(words) and not words[i + 1].startswith("-"):
                value, i = words[i + 1], i + 1
            out.append(Directive(line, name, value if (eq or value) else None))
        elif w.startswith("-") and len(w) >= 2:
            name = SBATCH_SHORT.get(w[:2], w[1:2])
            short_value = w[2:] or None
            if short_value is None and name not in SBATCH_FLAGS and i + 1 < len(words):
                short_value, i = words[i + 1], i + 1
            out.append(Directive(line, name, short_value))
        i += 1
    return out


def read_script(text: str, path: str) -> ScriptFacts:
    """Read a batch script (module docstring). Raises :class:`ScriptError` for a file that is not one, a line the
    reader cannot split, no launch line or several."""
    lines = text.split("\n")
    if not text.strip():
        raise ScriptError(path, 0, "empty file: not a batch script")
    if "\0" in text:
        raise ScriptError(path, 0, "not a text file: not a batch script")
    cmds = commands(text)
    if _broken(text):
        try:
            lexed(text)
        except ShellSyntax as exc:
            raise ScriptError(path, exc.line, f"cannot read this line as shell ({exc.message})") from None
    first = next((n for n, line in enumerate(lines, 1) if line.strip() and not line.lstrip().startswith("#")),
                 len(lines) + 1)
    directives: list[Directive] = []
    late: list[Directive] = []
    for n, line in enumerate(lines, 1):
        if re.match(r"^#SBATCH\s", line):
            (directives if n < first else late).extend(_directive(line, n))
    if not directives and not lines[0].startswith("#!"):
        raise ScriptError(path, 1, "not a batch script: no #! line first and no #SBATCH line")
    assigned: dict[str, tuple[int, Word | None]] = {}
    launches: list[tuple[Command, Launch]] = []
    unknown: list[tuple[int, str]] = []
    for c in cmds:
        for name, value in _assignments(c):
            assigned.setdefault(name, (c.line, value))
        if c.words and c.words[0].text in ("for", "read", "select") and len(c.words) > 1:
            for w in c.words[1:]:
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", w.text):
                    assigned.setdefault(w.text, (c.line, None))
                if c.words[0].text == "for":
                    break
        launch = launch_of(c)
        if launch is not None:
            launches.append((c, launch))
        elif (other := _other_launch(c)) is not None:
            unknown.append((c.line, other))
    if any(x.under_srun or x.launcher != "srun" for _, x in launches):  # a python run in the batch shell beside
        launches = [(c, x) for c, x in launches if x.under_srun or x.launcher != "srun"]  # a launch: a setup step
    if not directives and any("partition" in x.srun or "job-name" in x.srun for _, x in launches):
        raise ScriptError(path, launches[0][1].line, "not a batch script: no #SBATCH line, and its srun asks for "
                          "its own allocation (-p, --job-name): it runs srun from a login node. Import the batch "
                          "script that runs the program, or write one with #SBATCH lines")
    return ScriptFacts(path, lines, directives, late, first, cmds, launches, assigned, unknown)


#: Launchers no preset has: their own refusal, never "no launch line".
OTHER_LAUNCHERS = {"deepspeed": "the deepspeed launcher is not a preset launcher yet: it starts every node's "
                                "processes itself over ssh from a hostfile; start the program with torchrun "
                                "(deepspeed's own scripts accept torchrun's environment) to import it",
                   "composer": "composer's launcher is not a preset launcher: start the program with torchrun to "
                               "import it",
                   "mpirun": "an mpirun launch is not a preset launch: srun starts the ranks in a preset",
                   "mpiexec": "an mpiexec launch is not a preset launch: srun starts the ranks in a preset"}


def _other_launch(c: Command) -> str | None:
    """The program srun starts (or a launcher the batch shell runs) when it is no launch ntui imports."""
    words, _ = _strip_prefixes(c.expanded if c.expanded is not None else c.words)
    if not words:
        return None
    head = os.path.basename(words[0].text)
    if head == "srun":
        _, i = _options(words[1:], SRUN_SHORT, SRUN_FLAGS)
        rest, _ = _strip_prefixes(words[1 + i:])
        return os.path.basename(rest[0].text) if rest and not _unknown(rest[0]) else None
    return head if head in OTHER_LAUNCHERS else None


def _broken(text: str) -> bool:
    """Whether the grammar had to recover somewhere (an unterminated quote, ...)."""
    from ntui.core.compose.bashread import has_error

    return has_error(text)


def _assignments(c: Command) -> list[tuple[str, Word | None]]:
    words = c.words
    if not words:
        return []
    if words[0].text in ("export", "declare", "local", "readonly", "typeset"):
        out: list[tuple[str, Word | None]] = []
        for w in words[1:]:
            if w.text.startswith("-"):
                continue
            name, eq, _ = w.text.partition("=")
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                out.append((name, _value_word(w) if eq else None))
        return out
    out = []
    for w in words:
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=", w.text)
        if m is None or w.parts[0].quote:
            break
        out.append((m.group(1), _value_word(w)))
    return out


def _value_word(w: Word) -> Word:
    """``NAME=value`` -> the value as a word of its own (its parts' quoting kept)."""
    from ntui.core.compose.shellwords import Part

    name_len = w.text.index("=") + 1
    parts = []
    skip = name_len
    for p in w.parts:
        if skip >= len(p.text):
            skip -= len(p.text)
            continue
        parts.append(Part(p.text[skip:], p.quote, p.line))
        skip = 0
    return Word(tuple(parts), w.raw[w.raw.index("=") + 1:] if "=" in w.raw else "", w.line)


# ---------------------------------------------------------------------------------------------- the launch line


def _unknown(word: Word) -> bool:
    """A word that is wholly one expansion the reader does not know (``$SRUN_ARGS``, ``${PROF_CMD}``): it may
    be empty, one word or several."""
    return len(word.parts) == 1 and word.parts[0].quote in (BATCH, "") and word.text.startswith("$") and bool(
        re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", word.text))


def _strip_prefixes(words: list[Word]) -> tuple[list[Word], list[tuple[str, Word]]]:
    """``exec``, ``time``, ``nohup``, ``env [-u VAR] A=1``, ``A=1 cmd``, an unknown expansion before a command (a
    profiler's prefix the script leaves empty): the command and the variables set for it."""
    env: list[tuple[str, Word]] = []
    i = 0
    while i < len(words):
        t = words[i].text
        head = os.path.basename(t)
        if head in ("exec", "time", "nohup", "command", "stdbuf") or (head == "env" and i + 1 < len(words)):
            i += 1
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=", t)
        if m and not words[i].parts[0].quote:
            env.append((m.group(1), _value_word(words[i])))
            i += 1
            continue
        if t.startswith("-") and i > 0 and os.path.basename(words[i - 1].text) in ("env", "stdbuf", "time"):
            i += 2 if t in ("-u", "--unset", "-C", "--chdir", "-o", "-f") and i + 1 < len(words) else 1
            continue
        if t.startswith("-") and i > 1 and words[i - 2].text in ("-u", "--unset") and \
                os.path.basename(words[i - 3].text if i > 2 else "") == "env":
            i += 1
            continue
        if _unknown(words[i]) and i + 1 < len(words) and not _unknown(words[i + 1]):
            i += 1
            continue
        break
    return [w for w in words[i:] if not w.parts or w.parts[0].quote != "<redirect>"], env


def _options(words: list[Word], short: dict[str, str], flags: set[str]) -> tuple[dict[str, str | None], int]:
    """Leading ``--opt[=v]``/``--opt v``/``-x v``/``-xv`` options -> long names; the index of the first other word."""
    out: dict[str, str | None] = {}
    i = 0
    while i < len(words):
        t = words[i].text
        if t == "--":
            return out, i + 1
        if _unknown(words[i]) and i + 1 < len(words):  # $SRUN_ARGS: options the script leaves to the environment
            i += 1
            continue
        if t.startswith("--"):
            name, eq, value = t[2:].partition("=")
            if not eq and name not in flags and i + 1 < len(words) and not words[i + 1].text.startswith("-"):
                value, i = words[i + 1].text, i + 1
            out[name] = value if (eq or name not in flags) else None
        elif t.startswith("-") and len(t) > 1:
            name = short.get(t[:2], t[1:2])
            short_value = t[2:] or None
            if name not in flags and short_value is None and i + 1 < len(words):
                short_value, i = words[i + 1].text, i + 1
            out[name] = short_value
        else:
            return out, i
        i += 1
    return out, i


def launch_of(c: Command) -> Launch | None:
    """The command as a launch line (module docstring), or None when it launches nothing."""
    words, _ = _strip_prefixes(c.expanded if c.expanded is not None else c.words)
    if not words:
        return None
    launch = Launch(c.line, c.end_line, "srun", under_srun=False)
    launch.scope = {k: v for k, v in c.scope.items() if isinstance(v, Var)}
    if os.path.basename(words[0].text) == "srun":
        srun, i = _options(words[1:], SRUN_SHORT, SRUN_FLAGS)
        launch.srun, launch.under_srun = srun, True
        if srun.get("container-image"):
            launch.container, launch.image = "pyxis", srun["container-image"]
        launch.batch_words += words
        return _program(words[1 + i:], launch, per_task=False)
    found = _program(words, launch, per_task=False)
    if found is None or found.program is None and found.module is None:
        return None
    if found.launcher == "srun" and not _PY.match(os.path.basename(words[0].text)) and not found.container:
        return None
    found.batch_words += words
    return found


def _program(words: list[Word], launch: Launch, *, per_task: bool,
             payload_args: Sequence[Word] | None = None) -> Launch | None:
    """Unwrap ``words`` (a command) down to the launcher and the program."""
    words, env = _strip_prefixes(list(words))
    if per_task:
        launch.task_env += env
    if not words:
        return None
    head = os.path.basename(words[0].text)
    if head in ("bash", "sh") and len(words) >= 3 and words[1].text in ("-c", "-lc", "-ec", "-xc"):
        return _payload(words[2], list(words[3:]), launch)
    if words[0].text == "$0" and payload_args:  # exec "$0" "$@": the payload's own words, after it
        return _program(list(payload_args[:1]) + _rest_args(words[1:], payload_args), launch, per_task=True)
    if head in CONTAINERS:
        return _container(head, words, launch, per_task, payload_args)
    if head == "torchrun" or (_PY.match(head) and _module(words) in ("torch.distributed.run",
                                                                     "torch.distributed.launch")):
        start = 1 if head == "torchrun" else _module_index(words) + 1
        launch.python = [] if head == "torchrun" else [w.text for w in words[:_module_index(words) - 1]]
        return _launcher("torchrun", LAUNCHER_CLIS["torchrun"], words[start:], launch, per_task, payload_args)
    if head == "accelerate" and len(words) > 1 and words[1].text == "launch":
        return _launcher("accelerate", LAUNCHER_CLIS["accelerate"], words[2:], launch, per_task, payload_args)
    if _PY.match(head) and _module(words) == "accelerate.commands.launch":
        return _launcher("accelerate", LAUNCHER_CLIS["accelerate"], words[_module_index(words) + 1:], launch,
                         per_task, payload_args)
    if _PY.match(head):
        i = 1
        python = [words[0].text]
        while i < len(words) and words[i].text.startswith("-") and words[i].text != "-m":
            python.append(words[i].text)
            i += 1
        launch.python = python
        if "-c" in python:  # python -c CODE: a line of code, no program file
            return None
        if i < len(words) and words[i].text == "-m":
            launch.module = words[i + 1].text if i + 1 < len(words) else ""
            launch.args = _rest_args(words[i + 2:], payload_args)
        elif i < len(words):
            launch.program = words[i]
            launch.args = _rest_args(words[i + 1:], payload_args)
        (launch.task_words if per_task else launch.batch_words).extend(words)
        return launch
    return None


def _module(words: list[Word]) -> str | None:
    i = _module_index(words)
    return words[i].text if i else None


def _module_index(words: list[Word]) -> int:
    for i, w in enumerate(words[1:4], 1):
        if w.text == "-m" and i + 1 < len(words):
            return i + 1
        if not w.text.startswith("-"):
            break
    return 0


def _rest_args(words: Sequence[Word], payload_args: Sequence[Word] | None) -> list[Word]:
    """Arguments, with ``"$@"`` replaced by the payload's own (``bash -c '...' bash ARGS``); in the batch shell
    (``payload_args`` None) ``"$@"`` stays: the script's own arguments."""
    out: list[Word] = []
    for w in words:
        if w.text in ("$@", "${@}") and payload_args is not None:
            out += list(payload_args[1:])
        elif w.parts and w.parts[0].quote == "<redirect>":
            continue
        else:
            out.append(w)
    return out


def _payload(payload: Word, after: list[Word], launch: Launch) -> Launch | None:
    """``bash -c 'PAYLOAD' $0 ARGS``: its commands, each task expanding its variables; the launch among them."""
    found: Launch | None = None
    for c in task_commands(payload, launch.scope):
        for name, value in _assignments(c):
            if value is not None:
                launch.task_env.append((name, value))
        words = c.expanded if c.expanded is not None else c.words
        got = _program(words, launch, per_task=True, payload_args=after)
        if got is not None:
            found = got
            launch.task_words += words
    return found


#: Each runtime's mount options (short and long spelling), and the separator of a list in one value.
_MOUNT_OPTIONS = {"shifter": (("-V", "--volume"), ";"), "podman-hpc": (("-v", "--volume"), ""),
                  "apptainer": (("-B", "--bind"), ","), "charliecloud": (("-b", "--bind"), "")}


#: Each runtime's options that ntui writes itself (K7) or reads into container.*; the rest go to container.options.
_OWNED_OPTIONS = {
    "shifter": {"--image": True, "--volume": True, "-V": True, "--workdir": True},
    "podman-hpc": {"--rm": False, "--gpu": False, "--net": True, "--network": True, "--ipc": True, "-e": True,
                   "--env": True, "-v": True, "--volume": True, "-w": True, "--workdir": True},
    "apptainer": {"--nv": False, "-B": True, "--bind": True, "--pwd": True},
    "charliecloud": {"-b": True, "--bind": True, "-c": True, "--cd": True},
}


def _other_options(words: Sequence[Word], runtime: str) -> list[str]:
    """The option words of a runtime's command that ntui does not write itself, as written."""
    owned, out, i = _OWNED_OPTIONS[runtime], [], 0
    while i < len(words):
        name = words[i].text.split("=", 1)[0]
        if name in owned:
            i += 2 if owned[name] and "=" not in words[i].text else 1
            continue
        out.append(words[i].text)
        i += 1
    return out


def _mount_words(words: Sequence[Word], runtime: str) -> list[tuple[str, Word]]:
    """The mount options among a runtime's option words: (the text before the value in the same word, the word)."""
    names, _ = _MOUNT_OPTIONS[runtime]
    out = []
    for i, w in enumerate(words):
        if w.text in names and i + 1 < len(words):
            out.append(("", words[i + 1]))
        elif w.text.startswith(tuple(f"{n}=" for n in names if n.startswith("--"))):
            out.append((w.text.split("=", 1)[0] + "=", w))
    return out


def _container(head: str, words: list[Word], launch: Launch, per_task: bool,
               payload_args: Sequence[Word] | None) -> Launch | None:
    if head == "shifter":
        opts, i = _options(words[1:], {"-V": "volume", "-E": "env", "-m": "module"}, {"clearenv"})
        launch.container = "shifter"
        launch.image = opts.get("image") or launch.image
        launch.mounts = _mount_words(words[1:1 + i], "shifter")
        launch.workdir = opts.get("workdir")
        launch.runtime_options = _other_options(words[1:1 + i], "shifter")
        return _program(words[1 + i:], launch, per_task=per_task, payload_args=payload_args)
    if head in ("podman-hpc", "podman"):
        if len(words) < 2 or words[1].text != "run":
            return None
        opts, i = _options(words[2:], {"-v": "volume", "-e": "env", "-w": "workdir", "-i": "interactive",
                                       "-t": "tty"},
                           {"rm", "interactive", "tty", "gpu", "mpi", "nccl", "openmpi-pmix", "cuda-mpi",
                            "privileged", "init", "read-only", "detach"})
        launch.container = head
        if 2 + i >= len(words):
            return None
        launch.image = words[2 + i].text
        launch.mounts = _mount_words(words[2:2 + i], "podman-hpc")
        launch.workdir = opts.get("workdir")
        launch.runtime_options = _other_options(words[2:2 + i], "podman-hpc")
        return _program(words[3 + i:], launch, per_task=per_task, payload_args=payload_args)
    if head == "ch-run":
        opts, i = _options(words[1:], {"-b": "bind", "-c": "cd", "-j": "join", "-w": "write", "-t": "private-tmp"},
                           {"join", "write", "private-tmp", "no-passwd", "home"})
        launch.container = "charliecloud"
        if 1 + i >= len(words):
            return None
        launch.image = words[1 + i].text
        rest = words[2 + i:]
        if rest and rest[0].text == "--":
            rest = rest[1:]
        launch.mounts = _mount_words(words[1:1 + i], "charliecloud")
        launch.workdir = opts.get("cd")
        launch.runtime_options = _other_options(words[1:1 + i], "charliecloud")
        return _program(list(rest), launch, per_task=per_task, payload_args=payload_args)
    if len(words) < 2 or words[1].text not in ("exec", "run"):
        return None
    opts, i = _options(words[2:], {"-B": "bind", "-e": "cleanenv", "-C": "containall", "-H": "home",
                                   "-c": "contain", "-W": "workdir"},
                       {"nv", "rocm", "cleanenv", "containall", "contain", "no-home", "writable-tmpfs", "fakeroot",
                        "userns", "nvccli", "compat", "no-mount", "writable"})
    launch.container = head
    if 2 + i >= len(words):
        return None
    launch.image = words[2 + i].text
    launch.mounts = _mount_words(words[2:2 + i], "apptainer")
    launch.workdir = opts.get("pwd")
    launch.runtime_options = _other_options(words[2:2 + i], "apptainer")
    return _program(words[3 + i:], launch, per_task=per_task, payload_args=payload_args)


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
        mounts, sep = launch.mounts, _MOUNT_OPTIONS.get("podman-hpc" if runtime == "podman" else
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


def _launcher(kind: str, cli: LauncherCli, words: list[Word], launch: Launch, per_task: bool,
              payload_args: Sequence[Word] | None) -> Launch:
    launch.launcher = kind
    i = 0
    while i < len(words):
        t = words[i].text
        if t == "--":
            i += 1
            break
        if not t.startswith("-"):
            break
        name, eq, value = t.partition("=")
        full = cli.full(name) or (cli.short.get(name) if name in cli.short else None)
        if full is None:
            options = cli.prefixed(name) if name.startswith("--") else []
            full = options[0] if len(options) == 1 else name
        word: Word | None = words[i] if eq else None
        flag = full in cli.flags or full in LEGACY_FLAGS or (
            full not in cli.valued and i + 1 < len(words) and words[i + 1].text.endswith(".py"))
        if not eq and not flag and i + 1 < len(words):
            value, word, i = words[i + 1].text, words[i + 1], i + 1
        launch.launcher_opts.append((full, value if (eq or not flag) else None, word))
        i += 1
    rest = words[i:]
    module = launch.opt("--module", "-m") is not None
    if rest and launch.opt("--no-python", "--no_python") is not None:  # the program is a command: unwrap it
        inner = _program(rest, Launch(launch.line, launch.end_line, "srun", launch.under_srun), per_task=per_task,
                         payload_args=payload_args)
        if inner is not None:
            launch.program, launch.module, launch.args, launch.python = (inner.program, inner.module, inner.args,
                                                                         inner.python)
            launch.task_env += inner.task_env
            (launch.task_words if per_task else launch.batch_words).extend(words)
            return launch
    if rest:
        if module:
            launch.module = rest[0].text
        else:
            launch.program = rest[0]
        launch.args = _rest_args(rest[1:], payload_args)
    (launch.task_words if per_task else launch.batch_words).extend(words)
    return launch


# ---------------------------------------------------------------------------------------------- checking


@dataclass(frozen=True)
class Finding:
    line: int
    rule: str
    message: str
    severity: Severity = Severity.ERROR
    field: str = ""

    def problem(self, path: str) -> Problem:
        return Problem(Source(path, self.line), self.field, f"{self.message} ({self.rule})", self.severity,
                       self.rule)


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _the_launch(facts: ScriptFacts) -> tuple[Command, Launch]:
    if not facts.launches:
        other = next(((line, name) for line, name in facts.unknown_launches if name in OTHER_LAUNCHERS), None)
        if other is not None:
            raise ScriptError(facts.path, other[0], OTHER_LAUNCHERS[other[1]])
        started = [f"{name} (line {line})" for line, name in facts.unknown_launches
                   if name not in ("hostname", "nvidia-smi", "echo", "true", "sleep", "env", "printenv", "date")]
        raise ScriptError(facts.path, 0, "no launch line: no srun, torchrun, accelerate launch or python program "
                          "was found (ntui imports a script whose job is one distributed launch)" + (
                              f"; srun starts {', '.join(started)}, which is no launcher a preset has"
                              if started else ""))
    if len(facts.launches) > 1:
        where = ", ".join(str(launch.line) for _, launch in facts.launches)
        raise ScriptError(facts.path, facts.launches[1][1].line,
                          f"two launch lines (lines {where}): a preset launches one program; keep one, or import "
                          "each from a script of its own")
    return facts.launches[0]


def check_script(facts: ScriptFacts) -> list[Finding]:
    """The H rules (module docstring) on the script as written."""
    out: list[Finding] = []
    if not facts.lines[0].startswith("#!"):
        first = next((n for n, line in enumerate(facts.lines, 1) if line.startswith("#!")), None)
        out.append(Finding(1, "H1", "the first line is not the #! line" + (
            f" (it is on line {first})" if first else "") + ": sbatch refuses the script (\"This does not look like "
            "a batch script\"). Put #!/bin/bash first"))
    for d in facts.late_directives:
        out.append(Finding(d.line, "H2", f"#SBATCH --{d.option} comes after the first command (line "
                           f"{facts.first_command}): sbatch ignores it. Move it above line {facts.first_command}",
                           field=f"sbatch.{d.option}"))
    out += _port_variables(facts)
    out += _misassigned(facts)
    if not facts.launches:  # the import says why there is none; what the script's srun lines use is checked
        out += _unset(facts, None)
        return sorted(out, key=lambda f: f.line)
    command, launch = _the_launch(facts)
    nodes = _int(facts.directive("nodes") or launch.srun.get("nodes")) or 1
    per_node = _int(launch.srun.get("ntasks-per-node") or facts.directive("ntasks-per-node"))
    if launch.launcher != "srun" and launch.under_srun and per_node is not None and per_node > 1:
        out.append(Finding(launch.line, "H5", f"{per_node} tasks per node each start a {launch.launcher}: every "
                           f"node runs {per_node} launchers and {per_node} times the processes. One task per node "
                           "(--ntasks-per-node=1); the launcher starts the node's processes (G2)",
                           field="sbatch.ntasks-per-node"))
    if launch.launcher != "srun" and not launch.under_srun and nodes > 1:
        out.append(Finding(launch.line, "H9", f"{launch.launcher} runs in the batch shell, on the first node "
                           f"only, of {nodes}: the others never join and the rendezvous waits. Start it with "
                           "srun --ntasks-per-node=1"))
    said_h4: set[tuple[str, int]] = set()
    for word in [*launch.batch_words, *launch.task_words]:
        for var, line in _batch_expanded(word):
            if var not in PER_TASK_VARS or not launch.under_srun or (var, line) in said_h4:
                continue
            said_h4.add((var, line))
            out.append(Finding(line, "H4", f"{_excerpt(launch, word, var)}: ${var} is expanded once, by the batch "
                               "shell, before srun starts the tasks: every task gets the batch host's value (every "
                               "node is rank 0). Expand it in each task: srun bash -c '... $" + var + " ...', or "
                               f"write \\${var} inside a double-quoted launcher string (Q1)"))
    for name, value, opt_word in launch.launcher_opts:
        if opt_word is not None and opt_word.literal_vars and not opt_word.expanded_vars:
            var = opt_word.literal_vars[0]
            out.append(Finding(opt_word.line, "H3", f"{name} is the literal text {value!r}: ${var} inside single "
                               f"quotes reaches {launch.launcher} unexpanded (every job the same value). Write "
                               f"\"${var}\" (R6)", field="launcher.extra-args"))
        if name in RANK_OPTIONS and nodes > 1 and _int(value) is not None and not launch.task_words:
            out.append(Finding(launch.line, "H4", f"{name}={value} on every node of {nodes}: each node must "
                                   f"have its own; expand $SLURM_NODEID in each task (Q1)"))
        if name in ("--rdzv-conf", "--rdzv_conf") and value:
            options = sorted({kv.split("=", 1)[0] for kv in value.split(",")} & RDZV_OPTIONS)
            if options:
                out.append(Finding(opt_word.line if opt_word is not None else launch.line, "H12",
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
    nnodes = launch.opt("--nnodes", "--num_machines")
    if nnodes is not None and _int(nnodes[0]) is not None and _int(nnodes[0]) != nodes:
        out.append(Finding(launch.line, "H8", f"{launch.launcher} is told {nnodes[0]} node(s), the job asks for "
                           f"{nodes} (#SBATCH --nodes): the rendezvous waits for nodes that never come, or leaves "
                           "some out. Use $SLURM_JOB_NUM_NODES", field="sbatch.nodes"))
    out += _unexported(facts, command, launch)
    out += _tee(facts, command, launch)
    out += _one_task(facts, launch, nodes)
    out += _unset(facts, launch)
    return sorted(out, key=lambda f: f.line)


#: torchrun's and accelerate's rendezvous options, which --rdzv_conf cannot carry (H12).
RDZV_OPTIONS = {"rdzv_backend", "rdzv_endpoint", "rdzv_id", "nnodes", "nproc_per_node", "master_addr",
                "master_port", "main_process_ip", "main_process_port", "num_machines", "num_processes",
                "machine_rank", "node_rank", "rdzv-backend", "rdzv-endpoint", "rdzv-id"}
#: A variable that holds a rendezvous port (MASTER_PORT, RDZV_PORT, MAIN_PORT, MASTER_PORT_JOB, ...).
_PORT_VAR = re.compile(r"(?:^|_)PORT(?:$|_)")


def _fixed_port(what: str, port: int, line: int) -> Finding:
    if 32768 <= port <= 60999:
        return Finding(line, "H6", f"{what}: port {port} is in the kernel's ephemeral range (32768-60999): another "
                       "process can hold it. Derive it from the job id: $(( 15000 + SLURM_JOB_ID % 17000 )) (R12)")
    return Finding(line, "H6", f"{what}: port {port} is fixed: two jobs on one node collide. Derive it from the job "
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


def _port_variables(facts: ScriptFacts) -> list[Finding]:
    """H6: a port variable the script sets to a number (``${PORT:-29500}``'s default too) and uses."""
    out: list[Finding] = []
    for c in facts.commands:
        for name, value in _assignments(c):
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


def _misassigned(facts: ScriptFacts) -> list[Finding]:
    """H7: ``NAME = value`` runs a command NAME; the variable is never set."""
    out = []
    for c in facts.commands:
        if len(c.words) >= 2 and c.words[1].text in ("=", "+=") and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*",
                                                                                   c.words[0].text):
            name = c.words[0].text
            out.append(Finding(c.line, "H7", f"{name} {c.words[1].text} ...: the blanks around = make this a command "
                               f"named {name}, not an assignment: ${name} stays unset (and under set -e the script "
                               f"stops here). Write {name}=...", Severity.WARNING))
        elif len(c.words) >= 2 and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", c.words[0].text) and \
                not c.words[0].parts[0].quote and c.words[1].text.startswith("-"):
            name = c.words[0].text.split("=", 1)[0]
            out.append(Finding(c.line, "H7", f"{name}=... {c.words[1].text}: the blank ends the assignment, so "
                               f"{c.words[1].text} runs as a command and {name} is set for it only: ${name} stays "
                               f"unset. Quote the whole value: {name}=\"... {c.words[1].text} ...\"",
                               Severity.WARNING))
    return out


def _unexported(facts: ScriptFacts, command: Command, launch: Launch) -> list[Finding]:
    """H10: a rendezvous variable the batch shell sets but does not export, which the tasks need."""
    out: list[Finding] = []
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
        out.append(Finding(var.line, "H10", f"{name} is set but not exported: the tasks srun starts never see it "
                           f"({why}). Write export {name}=...", Severity.WARNING))
    return out


def _tee(facts: ScriptFacts, command: Command, launch: Launch) -> list[Finding]:
    """H11: the launch piped into ``tee`` without ``pipefail``: the job ends with tee's status."""
    at = facts.commands.index(command) if command in facts.commands else -1
    after = facts.commands[at + 1] if 0 <= at < len(facts.commands) - 1 else None
    if command.separator != "|" or after is None or not after.words or \
            os.path.basename(after.words[0].text) != "tee":
        return []
    if any(c.words and c.words[0].text == "set" and any("pipefail" in w.text for w in c.words)
           for c in facts.commands[:at]):
        return []
    return [Finding(launch.line, "H11", "the launch is piped into tee without pipefail: the job's exit status is "
                    "tee's (0), so a failed run is reported COMPLETED. Add set -o pipefail above it (ntui writes "
                    "every rank's log itself, L2)", Severity.WARNING)]


def _one_task(facts: ScriptFacts, launch: Launch, nodes: int) -> list[Finding]:
    """H13: srun starts the program itself, one task a node, on a node with several GPUs."""
    if launch.launcher != "srun" or not launch.under_srun:
        return []
    gpus = _int(launch.srun.get("gpus-per-node") or facts.directive("gpus-per-node"))
    gres = re.search(r"gpu(?::[A-Za-z0-9_-]+)?:([0-9]+)", launch.srun.get("gres") or facts.directive("gres") or "")
    gpus = gpus or (int(gres.group(1)) if gres else None)
    per_node = _int(launch.srun.get("ntasks-per-node") or facts.directive("ntasks-per-node"))
    ntasks = _int(launch.srun.get("ntasks") or facts.directive("ntasks"))
    capped = per_node is not None and per_node > 1 and ntasks is not None and ntasks < per_node * nodes
    if ntasks is not None and (per_node is None or capped):
        per_node = ntasks // nodes if ntasks % nodes == 0 else None
    devices = [_int(m.group(1)) for w in launch.args for m in [re.search(r"(?:devices|gpus)[= ]?([0-9]+)$",
                                                                         w.text)] if m]
    wants = capped or any(d is not None and d > 1 for d in devices) or any(
        re.fullmatch(r"--?(?:[a-z_]+\.)?(?:devices|gpus)", w.text) and _int(n.text) not in (None, 0, 1)
        for w, n in zip(launch.args, launch.args[1:], strict=False))
    if not gpus or gpus < 2 or per_node != 1 or not wants:
        return []
    option = "ntasks" if capped or not facts.directive("ntasks-per-node") else "ntasks-per-node"
    line = next((d.line for d in facts.directives if d.option == option), launch.line)
    return [Finding(line, "H13", f"one task a node for {gpus} GPUs: srun starts the program once a node, so one "
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


def _unset(facts: ScriptFacts, launch: Launch | None) -> list[Finding]:
    """H7: variables a value, an export or the launch uses before the script sets them (or never)."""
    out: list[Finding] = []
    said: set[str] = set()

    def say(var: str, line: int) -> None:
        if var in said or var in KNOWN_VARS or var.startswith(SET_BY_SLURM) or var.isdigit():
            return
        said.add(var)
        out.append(Finding(line, "H7", f"${var} is used but never set in the script: it is empty unless the "
                           "submitting shell exports it (sbatch passes its environment). Set it in the script",
                           Severity.WARNING))

    scope: dict[str, object] = {}
    for c in facts.commands:
        assigns = _assignments(c)
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


# ---------------------------------------------------------------------------------------------- importing


@dataclass
class Imported:
    """An imported preset: its YAML text, the loaded form, what was fixed, what was not imported, and for each
    preset key the script line it came from."""

    yaml_text: str
    preset: dict[str, Any]
    fixes: list[str]
    not_imported: list[tuple[int, str]]
    key_lines: dict[str, int]
    findings: list[Finding]
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


#: What names the directory the job starts in (sbatch's working directory unless the script moved).
SUBMIT_DIR = {"$SLURM_SUBMIT_DIR", "${SLURM_SUBMIT_DIR}"}
START_DIR = {"$PWD", "${PWD}", "`pwd`", "$(pwd)"}


def _never_set(word: Word | None, facts: ScriptFacts) -> bool:
    """A word that is wholly a variable the script never sets (nor Slurm, nor the shell)."""
    if word is None or not _unknown(word):
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


def import_script(facts: ScriptFacts) -> Imported:
    """The preset of the script (module docstring); the H findings come with it (and with a refusal, on its
    :attr:`ScriptError.findings`)."""
    findings = check_script(facts)
    try:
        return _import(facts, findings)
    except ScriptError as exc:
        exc.findings = findings
        raise


def _import(facts: ScriptFacts, findings: list[Finding]) -> Imported:
    command, launch = _the_launch(facts)
    if command.construct is not None:
        start, end = command.construct
        raise ScriptError(facts.path, command.line, f"the launch line is inside a shell construct (lines {start}-"
                          f"{end}: if, for, a function...): a preset launches once, unconditionally; move the launch "
                          "out of it to import the script")
    fixes: list[str] = []
    notes: list[str] = []
    skipped: list[tuple[int, str]] = []
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
        sbatch[d.option] = _yaml_value(d.value)
        key_lines[f"sbatch.{d.option}"] = d.line
    logs = "ntui writes every rank's own log (L2)"
    why_not = {"label": logs, "unbuffered": logs, "output": logs, "error": logs,
               "open-mode": "ntui appends to the logs (L5)",
               "export": "ntui's launch passes the whole environment (E3)",
               "kill-on-bad-exit": "ntui's launch stops the job when a rank fails",
               "cpus-per-task": "ntui's launch passes the job's (C1)", "gpu-bind": "ntui's launch sets it (G5)",
               "container-image": "the container is not imported (below)"}
    for opt, value in launch.srun.items():
        shown = f"srun --{opt}{'=' + value if value else ''}"
        if opt in SRUN_SHAPE and opt != "cpus-per-task" and value is not None and not value.startswith("$"):
            if str(sbatch.get(opt)) != value:
                fixes.append(f"sbatch.{opt}: srun's --{opt}={value} on line {launch.line} (the launch's shape) "
                             "is the job's in the preset")
            sbatch[opt] = _yaml_value(value)
            key_lines[f"sbatch.{opt}"] = launch.line
        elif opt in ("container-image", "container-mounts", "container-workdir") and launch.container == "pyxis":
            continue  # said with the container
        else:  # every option of the launch's srun is said, never dropped silently
            skipped.append((launch.line, f"{shown}: {why_not.get(opt, 'not in a preset (ntui writes the srun line)')}"))
    if launch.launcher != "srun" and launch.under_srun and _int(str(sbatch.get("ntasks-per-node"))) not in (None, 1):
        fixes.append(f"sbatch.ntasks-per-node: was {sbatch['ntasks-per-node']}, now 1: one {launch.launcher} per "
                     "node (H5, G2)")
        sbatch["ntasks-per-node"] = 1
    if launch.image and "image" not in sbatch and launch.container == "shifter":
        sbatch["image"] = launch.image
        key_lines["sbatch.image"] = launch.line
    ntasks, per_node, nodes_given = (_int(str(sbatch.get(k))) for k in ("ntasks", "ntasks-per-node", "nodes"))
    if ntasks is not None and per_node and nodes_given is None and ntasks % per_node == 0 and ntasks > per_node:
        sbatch["nodes"] = ntasks // per_node
        key_lines["sbatch.nodes"] = next((d.line for d in facts.directives if d.option == "ntasks"), 0)
        fixes.append(f"sbatch.nodes: {ntasks // per_node}, the nodes {ntasks} tasks of {per_node} a node fill "
                     "(the script gives no --nodes)")
    elif ntasks is not None and per_node and ntasks != (nodes_given or 1) * per_node:
        where = next((d.line for d in facts.directives if d.option == "ntasks"), launch.line)
        raise ScriptError(facts.path, where, f"the job's task counts disagree: --ntasks={ntasks} against "
                          f"--ntasks-per-node={per_node} on {nodes_given or 1} node(s); a preset has one task "
                          "layout: keep one of them to import the script")
    preset["sbatch"] = sbatch
    # launcher
    launcher: dict[str, Any] = {"type": launch.launcher}
    key_lines["launcher"] = launch.line
    extra: list[str] = []
    nodes = _int(str(sbatch.get("nodes"))) or 1
    if launch.launcher == "torchrun":
        nproc = launch.opt("--nproc-per-node")
        if nproc is not None and _int(nproc[0]) is not None:
            launcher["nproc-per-node"] = int(nproc[0] or 0)
        elif nproc is not None:
            gpus = _int(str(sbatch.get("gpus-per-node")))
            launcher["nproc-per-node"] = gpus or 1
            fixes.append(f"launcher.nproc-per-node: was {nproc[0]!r}, now {gpus or 1} (the job's GPUs per node)")
    if launch.launcher == "accelerate":
        total = launch.opt("--num_processes")
        per = _PER_NODE.search(total[0] or "") if total is not None else None
        if total is not None and _int(total[0]) is not None:
            launcher["nproc-per-node"] = max(1, int(total[0] or 0) // nodes)
        elif per is not None:
            launcher["nproc-per-node"] = int(per.group(1) or per.group(2))
        elif total is not None and _never_set(total[1], facts):
            raise ScriptError(facts.path, total[1].line if total[1] else launch.line,
                              f"--num_processes is {total[0]}, which the script never sets: accelerate gets no "
                              "process count. Set it (NAME=value, no blanks around =) to import the script")
        elif total is not None:
            launcher["nproc-per-node"] = _int(str(sbatch.get("gpus-per-node"))) or 1
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
    for opt_name, value, _ in launch.launcher_opts:
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
        extra.append(opt_name if value is None else f"{opt_name}={value}")
    if extra:
        launcher["extra-args"] = extra
    if launch.python and launch.python != ["python"]:
        launcher["python"] = " ".join(launch.python)
    preset["launcher"] = launcher
    if launch.launcher == "srun" and not launch.under_srun:
        fixes.append("the launch: the program ran once, in the batch shell; the preset starts it with srun, one "
                     "process per task (as many as GPUs per node where the job asks for GPUs, G1)")
    # container
    if launch.container is not None or "image" in sbatch:
        preset["container"] = _container_section(launch, facts, skipped, key_lines)
    # program
    if launch.module is not None:
        raise ScriptError(facts.path, launch.line, f"the program is a module (-m {launch.module}): a preset runs a "
                          "script file; import a script that runs it by its path")
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
    if program is None:
        raise ScriptError(facts.path, launch.line, f"the program {launch.program.raw} depends on the environment "
                          "at run time: write its path")
    preset["script"] = program if os.path.isabs(program) else os.path.normpath(os.path.join(script_dir, program))
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
    # environment, setup
    env: dict[str, str] = {}
    setup: list[str] = []
    done_constructs: set[tuple[int, int]] = set()
    for c in facts.commands:
        if c.line >= command.line and c is not command and c.construct is None and c.depth == 0:
            if c.line > command.end_line:
                skipped.append((c.line, f"{_source(facts, c)}: runs after the launch; ntui's script ends with the "
                                        "launch"))
            continue
        if c is command:
            continue
        if c.construct is not None:
            if c.construct not in done_constructs:
                done_constructs.add(c.construct)
                start, end = c.construct
                if start < command.line:
                    setup += facts.lines[start - 1:end]
                else:
                    skipped.append((start, "a compound command after the launch: not imported"))
            continue
        words = c.words
        if words and words[0].text == "export" or _assignments(c) and len(_assignments(c)) == len(words):
            kept: list[str] = []
            for var_name, var_value in _assignments(c):
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
                setup.append(_source(facts, c))
            continue
        setup.append(_source(facts, c) + ("\n" + "\n".join(c.heredoc) if c.heredoc else ""))
    for var_name, task_value in launch.task_env:
        if var_name in NTUI_ENV:
            continue
        plain = _literal(task_value, facts)
        if plain is not None:
            env[var_name] = plain
        else:
            skipped.append((launch.line, f"{var_name}={task_value.raw}: set by each task from its own variables; "
                                         "ntui's launch sets the ranks' variables itself (Q1)"))
    if env:
        preset["env"] = env
    if setup:
        preset["setup"] = setup
        key_lines["setup"] = command.line
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


def _source(facts: ScriptFacts, c: Command) -> str:
    return "\n".join(facts.lines[c.line - 1:c.end_line]).strip()


def _yaml_value(text: str | None) -> Any:
    if text is None:
        return True
    if re.fullmatch(r"[1-9][0-9]*|0", text):
        return int(text)
    return text


def _yaml_text(preset: dict[str, Any], source: str, fixes: Sequence[str], skipped: Sequence[tuple[int, str]],
               notes: Sequence[str]) -> str:
    head = [f"# Imported by ntui from {source}."]
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
