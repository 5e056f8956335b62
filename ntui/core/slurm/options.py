"""sbatch's and srun's options: one table of what each one is (sbatch.1, srun.1; Slurm 22.05-25.11).

Each :class:`Option` says whether it takes a value (``value``; ``optional``: only as ``--opt=VALUE``, so the next
word is never its value; ``none``: a bare flag), its short forms (sbatch's and srun's differ: ``-k`` is
``no-kill`` to both, ``-l`` is srun's ``label`` only), whether it is a ``#SBATCH`` directive (an sbatch option)
and whether srun takes it, what ntui reads it as (``int``, ``gpu``, ``time``), and whether a site's plug-in adds
it (Pyxis, the CSCS container engine: sbatch knows them only where the plug-in is installed).

Who reads it: the preset's ``sbatch:`` section (:mod:`ntui.core.compose.spec`: an unknown option, a flag given a
value), the rule table (:mod:`ntui.core.compose.rules`: V3, V4), the script writer
(:mod:`ntui.core.compose.render`: the srun line's options) and the reader of hand-written scripts (which words
of ``#SBATCH`` and ``srun`` lines are values). The sets below are views of :data:`OPTIONS`; a new option is one
row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "GPU_OPTIONS",
    "INT_OPTIONS",
    "OPTIONS",
    "SBATCH_ALIASES",
    "SBATCH_FLAGS",
    "SBATCH_OPTIONS",
    "SBATCH_PURE_FLAGS",
    "SBATCH_SHORT",
    "SITE_OPTIONS",
    "SRUN_FLAGS",
    "SRUN_OPTIONS",
    "SRUN_SHORT",
    "Option",
    "srun_word",
]

Takes = Literal["value", "optional", "none"]
Kind = Literal["", "int", "gpu", "time"]


@dataclass(frozen=True)
class Option:
    """One long option of sbatch or srun (or both)."""

    name: str
    takes: Takes = "value"
    sbatch_short: str = ""
    """``-N``: sbatch's short form ('' none)."""
    srun_short: str = ""
    sbatch: bool = True
    """An sbatch option, so a ``#SBATCH`` directive."""
    srun: bool = False
    """srun takes it (on its command line, inside the job)."""
    kind: Kind = ""
    """What ntui reads the value as: ``int`` (plain decimal), ``gpu`` (``[TYPE:]COUNT``), ``time``."""
    site: bool = False
    """Added by a site's plug-in (Pyxis' spank plugin, the CSCS container engine), not by Slurm."""
    aliases: tuple[str, ...] = ()
    """Other spellings sbatch accepts for it."""


def _o(name: str, takes: Takes = "value", sbatch_short: str = "", srun_short: str = "", *, sbatch: bool = True,
       srun: bool = False, kind: Kind = "", site: bool = False, aliases: tuple[str, ...] = ()) -> Option:
    return Option(name, takes, sbatch_short, srun_short, sbatch, srun, kind, site, aliases)


def _both(name: str, takes: Takes = "value", short: str = "", *, srun_short: str | None = None,
          kind: Kind = "") -> Option:
    """An option sbatch and srun both take, with the same short form unless told."""
    return _o(name, takes, short, short if srun_short is None else srun_short, srun=True, kind=kind)


def _srun(name: str, takes: Takes = "value", short: str = "") -> Option:
    """An option of srun's only."""
    return _o(name, takes, "", short, sbatch=False, srun=True)


_NONE: Takes = "none"
_OPT: Takes = "optional"

#: Every option, the job's shape first (in the order the rule table names them), then by name.
OPTIONS: tuple[Option, ...] = (
    # the job's shape
    _both("nodes", short="-N", kind="int"),
    _both("ntasks", short="-n", kind="int"),
    _o("ntasks-per-node", srun=True, kind="int", aliases=("tasks-per-node",)),
    _both("cpus-per-task", short="-c", kind="int"),
    _both("cpus-per-gpu", kind="int"),
    _both("mincpus", kind="int"),
    _both("gpus-per-node", kind="gpu"),
    _both("gpus-per-task", kind="gpu"),
    _both("gpus", short="-G", kind="gpu"),
    _both("gres", kind="gpu"),
    _both("time", short="-t", kind="time"),
    # the others sbatch takes as directives, by name (those srun also takes marked)
    _both("account", short="-A"),
    _o("acctg-freq"),
    _o("array", sbatch_short="-a"),
    _o("batch"),
    _o("bb"),
    _o("bbf"),
    _both("begin"),
    _both("chdir", short="-D"),
    _o("cluster-constraint"),
    _both("clusters", short="-M"),
    _both("comment"),
    _both("constraint", short="-C"),
    _both("container"),
    _both("container-id"),
    _both("contiguous", _NONE),
    _both("core-spec", short="-S"),
    _both("cores-per-socket"),
    _both("cpu-freq"),
    _both("deadline"),
    _both("delay-boot"),
    _both("dependency", short="-d"),
    _both("distribution", short="-m"),
    _both("error", short="-e"),
    _both("exclude", short="-x"),
    _both("exclusive", _OPT),
    _both("export"),
    _o("export-file"),
    _both("extra"),
    _both("extra-node-info", short="-B"),
    _o("get-user-env", _OPT),
    _o("gid"),
    _both("gpu-bind"),
    _both("gpu-freq"),
    _both("gpus-per-socket"),
    _both("gres-flags"),
    _both("hint"),
    _both("hold", _NONE, short="-H"),
    _o("ignore-pbs", _NONE),
    _both("image"),
    _both("input", short="-i"),
    _both("job-name", short="-J"),
    _o("kill-on-invalid-dep"),
    _both("licenses", short="-L"),
    _both("mail-type"),
    _both("mail-user"),
    _both("mcs-label"),
    _both("mem"),
    _both("mem-bind"),
    _both("mem-per-cpu"),
    _both("mem-per-gpu"),
    _o("module"),
    _both("network"),
    _both("nice", _OPT),
    _both("no-kill", _OPT, short="-k"),
    _o("no-requeue", _NONE),
    _o("nodefile"),
    _both("nodelist", short="-w"),
    _both("ntasks-per-core"),
    _both("ntasks-per-gpu"),
    _both("ntasks-per-socket"),
    _both("open-mode"),
    _both("output", short="-o"),
    _both("overcommit", _NONE, short="-O"),
    _both("oversubscribe", _NONE, short="-s"),
    _o("parsable", _NONE),
    _both("partition", short="-p"),
    _both("power"),
    _both("prefer"),
    _both("priority"),
    _both("profile"),
    _both("propagate", _OPT),
    _both("qos", short="-q"),
    _both("quiet", _NONE, short="-Q"),
    _both("reboot", _NONE),
    _o("requeue", _NONE),
    _both("reservation"),
    _both("resv-ports", _OPT),
    _o("signal"),
    _both("sockets-per-node"),
    _both("spread-job", _NONE),
    _both("switches"),
    _both("test-only", _NONE),
    _both("thread-spec"),
    _both("threads-per-core"),
    _both("time-min"),
    _both("tmp"),
    _both("tres-bind"),
    _both("tres-per-task"),
    _both("uid"),
    _both("use-min-nodes", _NONE),
    _both("verbose", _NONE, short="-v"),
    _o("wait", _NONE, sbatch_short="-W"),
    _both("wckey"),
    # added by a site's container plug-in (K5 says why a whole-script container cannot run ntui's launch)
    _o("container-image", srun=True, site=True),
    _o("container-mounts", srun=True, site=True),
    _o("container-workdir", srun=True, site=True),
    _o("container-name", srun=True, site=True),
    _o("container-env", srun=True, site=True),
    _o("environment", srun=True, site=True),
    # srun's own
    _srun("disable-status", _NONE, "-X"),
    _srun("exact", _NONE),
    _srun("kill-on-bad-exit", _OPT, "-K"),
    _srun("label", _NONE, "-l"),
    _srun("multi-prog", _NONE),
    _srun("no-allocate", _NONE, "-Z"),
    _srun("overlap", _NONE),
    _srun("preserve-env", _NONE, "-E"),
    _srun("pty", _OPT),
    _srun("quit-on-interrupt", _NONE),
    _srun("unbuffered", _NONE, "-u"),
    _srun("wait", "value", "-W"),
    _srun("whole", _NONE),
    _srun("cpu-bind"),
)


def _by_name(rows: tuple[Option, ...], command: Literal["sbatch", "srun"]) -> Mapping[str, Option]:
    out: dict[str, Option] = {}
    for o in rows:
        if getattr(o, command):
            out.setdefault(o.name, o)
    return out


#: sbatch's options (the names a ``#SBATCH`` line and a preset's ``sbatch:`` section may use), by name.
SBATCH: Mapping[str, Option] = _by_name(OPTIONS, "sbatch")
#: srun's options, by name (``wait`` is a value there, a flag to sbatch).
SRUN: Mapping[str, Option] = _by_name(OPTIONS, "srun")

SBATCH_OPTIONS = frozenset(SBATCH)
SRUN_OPTIONS = frozenset(SRUN)
#: sbatch options that take no value (``true`` in a preset = the bare flag) ...
SBATCH_PURE_FLAGS = frozenset(n for n, o in SBATCH.items() if o.takes == "none")
#: ... and all that may be bare (these take a value only as ``--opt=VALUE``).
SBATCH_FLAGS = frozenset(n for n, o in SBATCH.items() if o.takes != "value")
SRUN_FLAGS = frozenset(n for n, o in SRUN.items() if o.takes != "value")
#: Integer sbatch options (plain decimal only: YAML 1.1 reads 010 as 8 and 2:4 as 124).
INT_OPTIONS = tuple(n for n, o in SBATCH.items() if o.kind == "int")
#: GPU requests, each ``[TYPE:]COUNT`` (gres: ``gpu[:TYPE]:COUNT`` in a comma list).
GPU_OPTIONS = tuple(n for n, o in SBATCH.items() if o.kind == "gpu")
SITE_OPTIONS = tuple(n for n, o in SBATCH.items() if o.site)
SBATCH_SHORT: Mapping[str, str] = {o.sbatch_short: n for n, o in SBATCH.items() if o.sbatch_short}
SRUN_SHORT: Mapping[str, str] = {o.srun_short: n for n, o in SRUN.items() if o.srun_short}
SBATCH_ALIASES: Mapping[str, str] = {a: n for n, o in SBATCH.items() for a in o.aliases}


def srun_word(name: str, value: str | None = None) -> str:
    """``--name=value`` (``--name`` for a flag) for srun's command line; ValueError for an option srun does not
    have or a value it would not take, so the script writer cannot spell one wrong."""
    option = SRUN.get(name)
    if option is None:
        raise ValueError(f"srun has no option --{name}")
    if value is None:
        if option.takes == "value":
            raise ValueError(f"srun's --{name} needs a value")
        return f"--{name}"
    if option.takes == "none":
        raise ValueError(f"srun's --{name} takes no value")
    return f"--{name}={value}"
