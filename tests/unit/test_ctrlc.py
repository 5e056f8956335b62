"""Ctrl-C in the CLI's follow loops: a flag between polls, a sleep cut short, the previous handler restored."""

from __future__ import annotations

import os
import signal
import threading
import time

from ntui.cli.ctrlc import CtrlC


def _sigint_after(seconds: float) -> threading.Thread:
    t = threading.Thread(target=lambda: (time.sleep(seconds), os.kill(os.getpid(), signal.SIGINT)))
    t.start()
    return t


def test_ctrl_c_sets_the_flag_instead_of_raising_and_the_handler_goes_back() -> None:
    before = signal.getsignal(signal.SIGINT)
    with CtrlC() as ctrl_c:
        assert signal.getsignal(signal.SIGINT) != before
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100):  # the handler runs in this thread, between two bytecodes
            if ctrl_c.pressed:
                break
        assert ctrl_c.pressed
        assert ctrl_c.sleep(60)  # already pressed: no sleep at all
    assert signal.getsignal(signal.SIGINT) == before


def test_a_sleep_is_cut_short_and_a_wait_ends() -> None:
    with CtrlC() as ctrl_c:
        t = _sigint_after(0.2)
        slept: list[str] = []

        def sleeper(seconds: float) -> None:
            slept.append("began")
            time.sleep(seconds)
            slept.append("ran to its end")

        # woken by the signal, not by the end of the sleep: the sleeper never returned on its own
        assert ctrl_c.sleep(60, sleeper) is True and ctrl_c.pressed
        assert slept == ["began"]
        t.join()
    event = threading.Event()
    with CtrlC() as ctrl_c:
        t = _sigint_after(0.2)
        assert ctrl_c.wait(event, 60) is False and ctrl_c.pressed
        t.join()
    event.set()
    with CtrlC() as ctrl_c:
        assert ctrl_c.wait(event, 60) is True and not ctrl_c.pressed


def test_outside_the_main_thread_it_installs_nothing() -> None:
    before = signal.getsignal(signal.SIGINT)
    seen: list[object] = []

    def other() -> None:
        with CtrlC() as ctrl_c:
            seen.append(signal.getsignal(signal.SIGINT))
            seen.append(ctrl_c.sleep(0.01))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [before, False]
