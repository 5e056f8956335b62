"""The rendezvous configuration in ``launcher.extra-args`` (R13): every ``--rdzv-conf``/``--rdzv_conf`` taken out,
its ``key=value`` items read as torch reads them, and merged with ntui's per-node keys into the one option the
launcher keeps (torchrun and accelerate keep only the last one given). The rule table judges what
:func:`split_rdzv_conf` finds; the script writer merges with :func:`merge_rdzv_conf`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ntui.core.compose.launchcli import read_extra_args

__all__ = ["RDZV_CONF_OPTIONS", "RDZV_NTUI_KEYS", "RdzvConf", "merge_rdzv_conf", "split_rdzv_conf"]

#: The rendezvous configuration (``key=value,...``): not owned but merged (R13). torchrun and accelerate
#: launch both take either spelling, as ``--opt=VALUE`` or ``--opt VALUE``, and keep only the last one.
RDZV_CONF_OPTIONS = ("--rdzv-conf", "--rdzv_conf")
#: Rendezvous configuration keys ntui sets per node (R8); a user copy is refused (R13).
RDZV_NTUI_KEYS = ("is_host",)


@dataclass(frozen=True)
class RdzvConf:
    """``launcher.extra-args`` with every rendezvous-configuration option taken out, its keys merged (R13)."""

    pairs: tuple[tuple[str, str], ...] = ()
    """The user's keys in first-seen order; a repeated key keeps its last value, as torch does."""
    rest: tuple[str, ...] = ()
    """The other extra args, in order."""
    errors: tuple[tuple[int, str], ...] = ()
    """(index in extra-args, message) for what torch would refuse or what would break R8."""

    @property
    def text(self) -> str:
        """The user's part of the one ``--rdzv-conf`` value: ``key=value,...`` ('' for none)."""
        return ",".join(f"{k}={v}" for k, v in self.pairs)


def split_rdzv_conf(launcher: str, extra_args: Sequence[str]) -> RdzvConf:
    """Take every ``--rdzv-conf``/``--rdzv_conf`` (``=VALUE`` or next word, read as the launcher reads
    ``extra_args``: :func:`~ntui.core.compose.launchcli.read_extra_args`) out of ``extra_args``."""
    keys: dict[str, str] = {}
    taken: set[int] = set()
    errors: list[tuple[int, str]] = []
    for word in read_extra_args(launcher, extra_args):
        name = extra_args[word.index].partition("=")[0]
        if name not in RDZV_CONF_OPTIONS:  # an abbreviation of it is R14's
            continue
        taken.add(word.index)
        if word.value is None or word.value_index is None:
            errors.append((word.index, f"{name} needs a value: {name}=KEY=VALUE[,KEY=VALUE...]"))
            continue
        taken.add(word.value_index)
        errors.extend((word.value_index, message) for message in _rdzv_items(name, word.value, keys))
    rest = tuple(arg for i, arg in enumerate(extra_args) if i not in taken)
    return RdzvConf(tuple(keys.items()), rest, tuple(errors))


def _rdzv_items(name: str, value: str, into: dict[str, str]) -> Iterator[str]:
    """Parse ``key=value,...`` as torch does (keys and values stripped; blank = none) into ``into``."""
    if not value.strip():
        return
    for item in value.split(","):
        key, _, val = (part.strip() for part in item.partition("="))
        if not key:
            yield (f"{name} {value!r} has an empty key (a stray ',' or '='); write KEY=VALUE[,KEY=VALUE...], "
                   "which torch requires")
        elif not val:
            yield f"{name}: {key!r} has no value; write {key}=VALUE (torch refuses a key alone)"
        elif key in RDZV_NTUI_KEYS:
            yield (f"{name}: {key} is ntui's: node 0 gets 1 and every other node 0, so node 0 hosts the "
                   f"rendezvous store (R8); one value for all nodes makes every node host, or none. Remove {key}; "
                   "the other keys are merged")
        else:
            into[key] = val


def merge_rdzv_conf(*parts: str) -> str:
    """One rendezvous-configuration value from several, later keys last (torch keeps only the last
    ``--rdzv-conf`` it is given, and the last value of a repeated key) (R13)."""
    return ",".join(part for part in parts if part)
