"""ntui.core.logs.signals: one table for torch elastic's exit codes, srun's words and Slurm's exit codes."""

from __future__ import annotations

import signal

import pytest

from ntui.core.logs.signals import FAULT_SIGNALS, exit_code_signal, is_fault, signal_name, signal_number, signal_of_word


def test_numbers_are_linuxs() -> None:
    for name in ("SIGHUP", "SIGINT", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL", "SIGSEGV", "SIGPIPE", "SIGTERM",
                 "SIGUSR1", "SIGUSR2", "SIGSYS"):
        assert signal_name(int(getattr(signal, name))) == name
        assert signal_number(name) == int(getattr(signal, name))
    assert signal_name(-6) == "SIGABRT"  # torch elastic's "exitcode: -6"
    assert signal_name(64) is None


@pytest.mark.parametrize(("word", "name"), [
    ("Aborted", "SIGABRT"), ("Aborted (core dumped)", "SIGABRT"), ("Segmentation fault", "SIGSEGV"),
    ("Killed", "SIGKILL"), ("Terminated", "SIGTERM"), ("Bus error (core dumped)", "SIGBUS"),
    ("SIGSEGV", "SIGSEGV"), ("Exited with exit code 1", None), ("Out Of Memory", None),
])
def test_srun_words(word: str, name: str | None) -> None:
    assert signal_of_word(word) == name


def test_faults_and_stops() -> None:
    assert {"SIGABRT", "SIGSEGV", "SIGKILL"} <= FAULT_SIGNALS
    assert not any(is_fault(s) for s in ("SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGPIPE", None))


@pytest.mark.parametrize(("code", "name"), [
    ("0:6", "SIGABRT"), ("0:11", "SIGSEGV"), ("0:9", "SIGKILL"), ("134", "SIGABRT"), ("139:0", "SIGSEGV"),
    ("137:0", "SIGKILL"), ("143:0", "SIGTERM"), ("1:0", None), ("0:0", None), ("15:0", None), ("", None),
    (None, None), ("x", None),
])
def test_slurm_exit_codes(code: str | None, name: str | None) -> None:
    assert exit_code_signal(code) == name
