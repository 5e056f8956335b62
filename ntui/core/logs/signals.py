"""Signals a process can die of, as the logs and Slurm name them, and which of them are a rank's own fault.

One table for every reader: torch elastic's negative exit codes (``exitcode: -6``), the words srun prints for a
task killed by a signal (libc's ``strsignal``: ``task 3: Aborted``, ``Segmentation fault``, ``Killed``),
faulthandler's ``Fatal Python error: Aborted``, and Slurm's exit codes (``0:6``, or a shell's ``134`` = 128 + 6).

A **fault** signal is how a process dies of its own failure: SIGABRT (a C++ ``terminate``, an NCCL abort,
``os.abort()``), SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, and SIGKILL (the kernel's OOM killer). The
others (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1/2, SIGALRM) are how launchers and Slurm stop ranks
after something else failed, or a request to stop: a consequence, never the cause. The numbers are Linux's.
"""

from __future__ import annotations

import re

__all__ = ["FAULT_SIGNALS", "exit_code_signal", "fault_cause", "is_fault", "signal_name", "signal_number",
           "signal_of_word"]

# number -> (name, what libc's strsignal says, lower case)
_SIGNALS: dict[int, tuple[str, str]] = {
    1: ("SIGHUP", "hangup"),
    2: ("SIGINT", "interrupt"),
    3: ("SIGQUIT", "quit"),
    4: ("SIGILL", "illegal instruction"),
    5: ("SIGTRAP", "trace/breakpoint trap"),
    6: ("SIGABRT", "aborted"),
    7: ("SIGBUS", "bus error"),
    8: ("SIGFPE", "floating point exception"),
    9: ("SIGKILL", "killed"),
    10: ("SIGUSR1", "user defined signal 1"),
    11: ("SIGSEGV", "segmentation fault"),
    12: ("SIGUSR2", "user defined signal 2"),
    13: ("SIGPIPE", "broken pipe"),
    14: ("SIGALRM", "alarm clock"),
    15: ("SIGTERM", "terminated"),
    31: ("SIGSYS", "bad system call"),
}
_BY_WORD: dict[str, str] = {word: name for name, word in _SIGNALS.values()}
_NUMBERS: dict[str, int] = {name: number for number, (name, _) in _SIGNALS.items()}
_NAMES: frozenset[str] = frozenset(_NUMBERS)

FAULT_SIGNALS: frozenset[str] = frozenset(
    {"SIGABRT", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP", "SIGSYS", "SIGKILL"}
)

#: what a fault signal most often means in a training job, said after its name
_CAUSES: dict[str, str] = {
    "SIGKILL": "likely the out-of-memory killer",
    "SIGSEGV": "a crash in native code",
    "SIGABRT": "an abort: a C++ exception, NCCL or CUDA",
    "SIGBUS": "a bad memory access, often /dev/shm full",
    "SIGFPE": "an arithmetic fault in native code",
    "SIGILL": "an instruction this CPU lacks",
}

_CORE_RE = re.compile(r"\s*\(core dumped\)\s*$", re.IGNORECASE)
_EXIT_RE = re.compile(r"^\s*(?P<code>\d+)(?::(?P<sig>\d+))?\s*$")


def signal_name(number: int) -> str | None:
    """``6`` -> ``"SIGABRT"`` (a negative number, as torch elastic's exit codes, counts as its absolute value)."""
    entry = _SIGNALS.get(abs(number))
    return entry[0] if entry else None


def signal_number(name: str) -> int | None:
    """``"SIGABRT"`` -> ``6``."""
    return _NUMBERS.get(name)


def signal_of_word(word: str) -> str | None:
    """srun's / faulthandler's word for a signal -> its name: ``Aborted (core dumped)`` -> ``SIGABRT``;
    a name as such (``SIGSEGV``) is kept; None for words that name no signal (``Exited with exit code 1``)."""
    text = _CORE_RE.sub("", word).strip()
    if text.upper() in _NAMES:
        return text.upper()
    return _BY_WORD.get(text.lower())


def is_fault(name: str | None) -> bool:
    """Whether a process that died of this signal failed by itself (see the module docstring)."""
    return name in FAULT_SIGNALS


def fault_cause(name: str | None) -> str | None:
    """The likely cause of a death by a fault signal, in words: ``SIGKILL`` -> ``likely the out-of-memory killer``."""
    return _CAUSES.get(name or "")


def exit_code_signal(exit_code: str | None) -> str | None:
    """The signal a Slurm exit code says the program died of: ``0:6`` (Slurm's ``exit:signal``) or a shell's
    128 + N (``134``, ``134:0``) -> ``SIGABRT``; None when it says no signal (``1:0``, ``0:0``, unknown)."""
    m = _EXIT_RE.match(exit_code or "")
    if m is None:
        return None
    sig = int(m["sig"] or 0)
    if sig:
        return signal_name(sig)
    code = int(m["code"])
    return signal_name(code - 128) if 128 < code < 160 else None
