"""A hand-written sbatch script, read as bash reads it (never run): its directives, its variables, its commands
and its launch.

The ``#SBATCH`` lines as sbatch reads them (only above the first command, short options by their long names, split
on blanks as sbatch splits them), the variables the script sets, its commands in the order its shell runs them
(:mod:`ntui.core.compose.bashread`: tree-sitter's bash grammar, the batch shell evaluated symbolically) and the
launch line: ``srun`` with its options, ``torchrun`` / ``python -m torch.distributed.run|launch``, ``accelerate
launch`` / ``python -m accelerate.commands.launch``, or a Python program; wherever the script builds it (``srun
$CMD``, ``srun bash -c "$LAUNCHER $ARGS"``, ``"${ARGS[@]}"``, a function), inside ``bash -c '...'`` (its ``"$@"``
and ``"$0"`` followed) and inside a container (``shifter``, ``podman-hpc run``, ``apptainer|singularity exec``,
srun's ``--container-image``), behind a wrapper with options (``${REPORTER} -o report --``, ``nsys profile``,
``numactl``, ``timeout``). Words keep their quoting and their lines, so what the batch shell expands once is
told from what each task expands for itself. Launchers no preset has (deepspeed, composer, mpirun) are named, so a
refusal says which; a template whose ``#SBATCH`` lines hold placeholders (``%RUN_NAME%``, ``{{ nodes }}``) is said
to be one. sbatch's and srun's options are read through the one option table (:mod:`ntui.core.slurm.options`).
Checking is :mod:`ntui.core.compose.scriptcheck`, importing :mod:`ntui.core.compose.scriptimport`.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from ntui.core.compose.bashread import BATCH, Var, commands, task_commands
from ntui.core.compose.launchcli import LAUNCHER_CLIS, LauncherCli
from ntui.core.compose.shellwords import Command, ShellSyntax, Word
from ntui.core.compose.shellwords import commands as lexed
from ntui.core.problems import Problem, Severity, Source
from ntui.core.slurm.options import SBATCH_ALIASES, SBATCH_FLAGS, SBATCH_SHORT, SRUN_FLAGS, SRUN_SHORT

__all__ = ["Directive", "Launch", "ScriptError", "ScriptFacts", "ScriptFinding", "launch_of", "read_script",
           "srun_program", "the_launch"]

#: sbatch options ntui writes itself, from the preset's logs (L1, L5): not imported.
SBATCH_NTUI = {"output", "error", "open-mode"}
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
#: The rendezvous and layout ntui computes (R1, R4, R6, R8), and what it sets for every job (N7, D3): variables a
#: script exports for them are not imported.
NTUI_ENV = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK", "LOCAL_WORLD_SIZE",
            "NNODES", "GPUS_PER_NODE", "NUM_NODES", "NODES", "HEAD_NODE", "HEAD_NODE_IP", "PYTHONUNBUFFERED",
            "PYTHONFAULTHANDLER", "SLURM_UNBUFFEREDIO", "SRUN_CPUS_PER_TASK"}
#: Runtimes and what prefixes them.
CONTAINERS = ("shifter", "podman-hpc", "podman", "apptainer", "singularity", "ch-run")
#: torch.distributed.launch's flags that torchrun no longer has.
LEGACY_FLAGS = {"--use_env", "--use-env"}
#: Launcher options that name the rendezvous port.
PORT_OPTIONS = {"--master-port", "--main_process_port", "--rdzv-endpoint", "--master_port"}
_PY = re.compile(r"^(python|pypy)[0-9.]*$")
#: ``$(( SLURM_JOB_NUM_NODES * 4 ))`` (either order): accelerate's total processes as nodes times processes per node.
_NODES = r"\$?\{?SLURM_(?:JOB_NUM_NODES|NNODES)\}?"
PER_NODE = re.compile(rf"\(\(\s*{_NODES}\s*\*\s*([0-9]+)\s*\)\)|\(\(\s*([0-9]+)\s*\*\s*{_NODES}\s*\)\)")


class ScriptError(ValueError):
    """A file that cannot be imported at all (not a batch script, no launch line, two, an unreadable line).
    ``findings``: what checking the script found before the import was refused (its traps are still its traps)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.problem = Problem(Source(path, line), "", message)
        self.findings: list[ScriptFinding] = []


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
    launcher: str  # srun | torchrun | accelerate | deepspeed (read for the checks; the import refuses it)
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
    wrappers: list[Word] = field(default_factory=list)  # a wrapper's words before the launcher (nsys profile -o x)
    direct: bool = False  # srun runs a .py file itself, no interpreter before it

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
    #: why the file is no batch script to import, said after checking it (its traps are still its traps)
    refusal: tuple[int, str] | None = None
    #: no #! line and no #SBATCH line anywhere: a shell fragment run with bash or sourced, never given to sbatch
    fragment: bool = False
    #: a construct's closing word that closes nothing (line, words): bash refuses the whole script (H17)
    stray_closer: tuple[int, str] | None = None

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
            out.append(Directive(line, SBATCH_ALIASES.get(name, name), value if (eq or value) else None))
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
    stray = _stray_closer(cmds)
    refusal: tuple[int, str] | None = stray
    fragment = not directives and not lines[0].startswith("#!")  # run with bash, or sourced: not for sbatch
    held = [(d, m.group(0)) for d in directives if (m := TEMPLATE.search(d.value or "")) is not None]
    if refusal is None and held:
        shown = ", ".join(dict.fromkeys(p for _, p in held))
        refusal = (held[0][0].line, f"a template, not a batch script: its #SBATCH lines hold placeholders ({shown}) "
                   "that a tool fills in before sbatch; import the script it writes")
    assigned: dict[str, tuple[int, Word | None]] = {}
    launches: list[tuple[Command, Launch]] = []
    unknown: list[tuple[int, str]] = []
    for c in cmds:
        for name, value in assignments(c):
            assigned.setdefault(name, (c.line, value))
        head = next((i for i, w in enumerate(c.words) if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", w.text)),
                    len(c.words))  # `IFS=' ' read -ra parts`: the assignments before it are the command's own
        if head < len(c.words) - 1 and c.words[head].text in ("for", "read", "select", "mapfile", "readarray"):
            for w in c.words[head + 1:]:
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", w.text):
                    assigned.setdefault(w.text, (c.line, None))
                if c.words[head].text == "for":
                    break
        launch = launch_of(c)
        if launch is not None:
            launches.append((c, launch))
        elif (other := _other_launch(c)) is not None:
            unknown.append((c.line, other))
    if any(x.under_srun or x.launcher != "srun" for _, x in launches):  # a python run in the batch shell beside
        launches = [(c, x) for c, x in launches if x.under_srun or x.launcher != "srun"]  # a launch: a setup step
    per_node = [x for _, x in launches if not x.under_srun and x.launcher != "srun"]
    nnodes = per_node[0].opt("--nnodes", "--num_machines") if per_node else None
    if refusal is None and not directives and nnodes is not None and (nnodes[0] or "").split(":")[-1] != "1":
        refusal = (per_node[0].line, f"not a batch script: no #SBATCH line, and it starts {per_node[0].launcher} "
                   f"itself on this machine for {nnodes[0]} nodes: a script each node runs. Import the batch script "
                   "that starts it on every node")
    under = next((x for _, x in launches if x.under_srun), None)
    if refusal is None and fragment and under is None and (launches or not unknown):  # srun runs something
        refusal = (1, "not a batch script: no #! line first and no #SBATCH line" + (  # else: the import says what
            ", and no srun starts its launch: it runs on the one machine it is run on" if launches else ""))
    own = under is not None and not directives and ("partition" in under.srun or "job-name" in under.srun)
    if refusal is None and own and under is not None and "nodelist" in under.srun:
        refusal = (under.line, f"not a batch script: no #SBATCH line, and its srun runs from a login node on the "
                   f"nodes it names (-w {under.srun['nodelist']}): a command for those machines. Import a batch "
                   "script, or drop -w to let Slurm place the job")
    if refusal is None and own and under is not None and any("$" in (v or "") for v in under.srun.values()):
        refusal = (under.line, "not a batch script: no #SBATCH line, and its srun asks for its own allocation "
                   "(-p, --job-name) from a login node with sizes from its arguments or the environment. Import the "
                   "batch script that runs the program, or write one with #SBATCH lines")
    return ScriptFacts(path, lines, directives, late, first, cmds, launches, assigned, unknown, refusal,
                       fragment and not any(line.startswith("#!") for line in lines), stray)


#: A construct's closing word and the words that open it.
_OPENERS = {"done": ("for", "while", "until", "select"), "fi": ("if",), "esac": ("case",), "then": ("if", "elif"),
            "do": ("for", "while", "until", "select"), "else": ("if",), "elif": ("if",)}


def _stray_closer(cmds: list[Command]) -> tuple[int, str] | None:
    """A construct's closing word (``done``, ``fi``...) where a command begins, closing nothing: bash refuses the
    whole script. Its cause is most often a quote left open above it that swallowed the construct's opening line:
    that quote's line is said, the line to fix (bash itself names the closing word's)."""
    for i, c in enumerate(cmds):
        if not c.words or c.words[0].text not in _OPENERS or len(c.words[0].parts) != 1 or c.words[0].parts[0].quote:
            continue
        closer = c.words[0].text
        opener = re.compile(rf"(?:^\s*|[;&|]\s*)({'|'.join(_OPENERS[closer])})\s")
        for before in reversed(cmds[:i]):
            for w in before.words:
                quoted = [p for p in w.parts if p.quote in ('"', "'")]
                if not quoted or quoted[-1].line == quoted[0].line:
                    continue  # a quote on one line: no construct swallowed
                # a quoted part that begins a line of the script (or follows ; & |) and opens the construct
                found = next(((m.group(1), p.line) for k, p in enumerate(quoted) if (m := opener.search(
                    p.text if k and p.line > quoted[k - 1].line else re.sub(r"^\s*(?=\S)", "x", p.text))) is not None),
                    None)
                if found is not None:
                    start, (word, swallowed) = quoted[0].line, found
                    return (start, f"a quote opened on line {start} runs on to line {quoted[-1].line} and swallows "
                            f"the `{word}` of line {swallowed}: the `{closer}` on line {c.line} closes "
                            f"nothing, and bash refuses the whole script (syntax error near unexpected token "
                            f"`{closer}'). Close or remove the stray quote on line {start}")
        return (c.line, f"`{closer}` on line {c.line} closes nothing: bash refuses the whole script (syntax error "
                "near unexpected token). Look above it for a quote left open or a construct never begun")
    return None


#: A template's placeholders in a directive (``%RUN_NAME%``, ``{{ nodes }}``, ``${{ inputs.n }}``), never one of
#: sbatch's own patterns (``%x-%j``, ``%A_%a``: a letter each).
TEMPLATE = re.compile(r"%[A-Z][A-Z0-9_]*[A-Z0-9]%|\$?\{\{[^}]*\}\}")

#: Launchers no preset has: their own refusal, never "no launch line".
OTHER_LAUNCHERS = {"deepspeed": "the deepspeed launcher is not a preset launcher yet: it starts every node's "
                                "processes itself over ssh from a hostfile; start the program with torchrun "
                                "(deepspeed's own scripts accept torchrun's environment) to import it",
                   "composer": "composer's launcher is not a preset launcher: start the program with torchrun to "
                               "import it",
                   "mpirun": "an mpirun launch is not a preset launch: srun starts the ranks in a preset",
                   "mpiexec": "an mpiexec launch is not a preset launch: srun starts the ranks in a preset",
                   "$@": "srun runs the script's own arguments (\"$@\"): the program is whatever sbatch is given, "
                         "not in the script. Import a script that names its program"}


def srun_program(c: Command) -> Word | None:
    """The word srun runs as its program (after its options and any prefixes), or None when ``c`` is no srun."""
    words, _ = strip_prefixes(c.expanded if c.expanded is not None else c.words)
    if not words or os.path.basename(words[0].text) != "srun":
        return None
    _, i = _options(words[1:], SRUN_SHORT, SRUN_FLAGS)
    rest, _ = strip_prefixes(words[1 + i:])
    return rest[0] if rest else None


def _other_launch(c: Command) -> str | None:
    """The program srun starts (or a launcher the batch shell runs) when it is no launch ntui imports."""
    words, _ = strip_prefixes(c.expanded if c.expanded is not None else c.words)
    if not words:
        return None
    head = os.path.basename(words[0].text)
    if head == "srun":
        _, i = _options(words[1:], SRUN_SHORT, SRUN_FLAGS)
        rest, _ = strip_prefixes(words[1 + i:])
        if rest and rest[0].text in ("$@", "${@}", "$*", "${*}"):
            return "$@"
        return os.path.basename(rest[0].text) if rest and not unknown_word(rest[0]) else None
    return head if head in OTHER_LAUNCHERS else None


def _broken(text: str) -> bool:
    """Whether the grammar had to recover somewhere (an unterminated quote, ...)."""
    from ntui.core.compose.bashread import has_error

    return has_error(text)


def assignments(c: Command) -> list[tuple[str, Word | None]]:
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
                out.append((name, value_word(w) if eq else None))
        return out
    out = []
    for w in words:
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=", w.text)
        if m is None or w.parts[0].quote:
            break
        out.append((m.group(1), value_word(w)))
    return out


def value_word(w: Word) -> Word:
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


def unknown_word(word: Word) -> bool:
    """A word that is wholly one expansion the reader does not know (``$SRUN_ARGS``, ``${PROF_CMD}``): it may
    be empty, one word or several."""
    return len(word.parts) == 1 and word.parts[0].quote in (BATCH, "") and word.text.startswith("$") and bool(
        re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", word.text))


#: Programs that run a command after their own options (a profiler, a binding, a time limit).
WRAPPERS = {"nsys", "ncu", "numactl", "taskset", "timeout", "nice", "ionice", "chrt", "strace", "perf", "valgrind",
            "likwid-pin", "hpcrun", "dcgmi"}
#: What a wrapper's command may start with: where its options end.
_HEADS = {"srun", "torchrun", "accelerate", "deepspeed", "bash", "sh", *CONTAINERS}


def _wrapped(words: list[Word], i: int) -> int:
    """Where the command of a wrapper with options starts (``${REPORTER} -o report -- accelerate launch``,
    ``nsys profile -o x python fit.py``, ``numactl --interleave=all torchrun ...``): after its ``--``, or at the
    first launcher or Python it runs; ``i`` when ``words[i]`` is no such wrapper."""
    head = os.path.basename(words[i].text)
    if not (unknown_word(words[i]) and i + 1 < len(words) and words[i + 1].text.startswith("-")) and \
            head not in WRAPPERS:
        return i
    for j in range(i + 1, min(len(words), i + 10)):
        t = words[j].text
        if t == "--" and j + 1 < len(words):
            return j + 1
        if os.path.basename(t) in _HEADS or _PY.match(os.path.basename(t)):
            return j
    return i


def strip_prefixes(words: list[Word], wrappers: list[Word] | None = None) -> tuple[list[Word],
                                                                                   list[tuple[str, Word]]]:
    """``exec``, ``time``, ``nohup``, ``env [-u VAR] A=1``, ``A=1 cmd``, an unknown expansion before a command (a
    profiler's prefix the script leaves empty), a wrapper with options (:func:`_wrapped`, its words added to
    ``wrappers``): the command and the variables set for it."""
    env: list[tuple[str, Word]] = []
    i = 0
    while i < len(words):
        t = words[i].text
        head = os.path.basename(t)
        if (after := _wrapped(words, i)) > i:
            if wrappers is not None:
                wrappers += words[i:after]
            i = after
            continue
        if head in ("exec", "time", "nohup", "command", "stdbuf") or (head == "env" and i + 1 < len(words)):
            i += 1
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=", t)
        if m and not words[i].parts[0].quote:
            env.append((m.group(1), value_word(words[i])))
            i += 1
            continue
        if t.startswith("-") and i > 0 and os.path.basename(words[i - 1].text) in ("env", "stdbuf", "time"):
            i += 2 if t in ("-u", "--unset", "-C", "--chdir", "-o", "-f") and i + 1 < len(words) else 1
            continue
        if t.startswith("-") and i > 1 and words[i - 2].text in ("-u", "--unset") and \
                os.path.basename(words[i - 3].text if i > 2 else "") == "env":
            i += 1
            continue
        if unknown_word(words[i]) and i + 1 < len(words) and not unknown_word(words[i + 1]):
            i += 1
            continue
        break
    return [w for w in words[i:] if not w.parts or w.parts[0].quote != "<redirect>"], env


def _options(words: list[Word], short: Mapping[str, str],
             flags: AbstractSet[str]) -> tuple[dict[str, str | None], int]:
    """Leading ``--opt[=v]``/``--opt v``/``-x v``/``-xv`` options -> long names; the index of the first other word."""
    out: dict[str, str | None] = {}
    i = 0
    while i < len(words):
        t = words[i].text
        if t == "--":
            return out, i + 1
        if unknown_word(words[i]) and i + 1 < len(words):  # $SRUN_ARGS: options the script leaves to the environment
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
            if name in flags and short_value and all(short.get(f"-{c}") in flags for c in short_value):
                out.update({short[f"-{c}"]: None for c in short_value})  # -ul: -u -l, flags given together
                short_value = None
            if name not in flags and short_value is None and i + 1 < len(words):
                short_value, i = words[i + 1].text, i + 1
            out[name] = short_value
        else:
            return out, i
        i += 1
    return out, i


def launch_of(c: Command) -> Launch | None:
    """The command as a launch line (module docstring), or None when it launches nothing."""
    wrappers: list[Word] = []
    words, env = strip_prefixes(c.expanded if c.expanded is not None else c.words, wrappers)
    if not words:
        return None
    launch = Launch(c.line, c.end_line, "srun", under_srun=False)
    launch.wrappers = wrappers
    launch.scope = {k: v for k, v in c.scope.items() if isinstance(v, Var)}
    launch.task_env += env  # OMP_NUM_THREADS=8 srun ...: srun passes it to every task
    if os.path.basename(words[0].text) == "srun":
        srun, i = _options(words[1:], SRUN_SHORT, SRUN_FLAGS)
        launch.srun, launch.under_srun = srun, True
        if srun.get("container-image"):
            launch.container, launch.image = "pyxis", srun["container-image"]
        launch.batch_words += words
        rest, _ = strip_prefixes(words[1 + i:])
        if rest and rest[0].text.endswith(".py") and not unknown_word(rest[0]):  # srun fit.py: the file itself
            launch.program, launch.args, launch.direct = rest[0], _rest_args(rest[1:], None), True
            return launch
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
    words, env = strip_prefixes(list(words), launch.wrappers)
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
    if head == "deepspeed":  # read for its checks; the import refuses it (OTHER_LAUNCHERS)
        return _launcher("deepspeed", DEEPSPEED, words[1:], launch, per_task, payload_args)
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
        assigned = assignments(c)
        for name, value in assigned:
            if value is not None:
                launch.task_env.append((name, value))
        if assigned and len(assigned) == len(c.words):
            continue  # NAME=value: an assignment of the task's shell, no command
        words = c.expanded if c.expanded is not None else c.words
        got = _program(words, launch, per_task=True, payload_args=after)
        if got is not None:
            found = got
            launch.task_words += words
    return found


#: The deepspeed launcher's options, enough to find its program and its ports.
DEEPSPEED = LauncherCli(
    title="deepspeed", version="deepspeed launcher",
    flags=frozenset({"--module", "--no_python", "--no_local_rank", "--no_ssh", "--no_ssh_check", "--force_multi",
                     "--save_pid", "--elastic_training", "--bind_cores_to_rank"}),
    valued=frozenset({"--hostfile", "--include", "--exclude", "--num_nodes", "--min_elastic_nodes",
                      "--max_elastic_nodes", "--num_gpus", "--num_accelerators", "--master_port", "--master_addr",
                      "--node_rank", "--launcher", "--launcher_args", "--enable_each_rank_log", "--autotuning",
                      "--bind_core_list", "--ssh_port", "--comment"}),
    short={"-H": "--hostfile", "-i": "--include", "-e": "--exclude"}, abbrev=False)


#: Each runtime's mount options (short and long spelling), and the separator of a list in one value.
MOUNT_OPTIONS = {"shifter": (("-V", "--volume"), ";"), "podman-hpc": (("-v", "--volume"), ""),
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
    names, _ = MOUNT_OPTIONS[runtime]
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



@dataclass(frozen=True)
class ScriptFinding:
    line: int
    rule: str
    message: str
    severity: Severity = Severity.ERROR
    field: str = ""

    def problem(self, path: str) -> Problem:
        return Problem(Source(path, self.line), self.field, f"{self.message} ({self.rule})", self.severity,
                       self.rule)


def int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def the_launch(facts: ScriptFacts) -> tuple[Command, Launch]:
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


