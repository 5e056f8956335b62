"""Shared fixtures: keep the user's config and state out of every test."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent
# ``tests.support`` (fakes, demo data, screenshot scenes) is imported as a package from the repository root,
# also when pytest is started as ``pytest`` rather than ``python -m pytest``.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# ---------------------------------------------------------------- the user's own state stays out of every test
#: What a test session runs with instead of the user's own dirs (the real values, for a test that must know them).
USER_ENV = {k: os.environ.get(k) for k in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
                                           "XDG_DATA_HOME", "NTUI_STATE_DIR")}
_SESSION_HOME: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Give the whole test session (and every process it starts: ntui, sbatch, the jobs) a private HOME and XDG
    dirs, before any fixture runs. The per-test dirs below narrow it further; this covers what runs outside a
    test's own fixtures (module- and session-scoped ones, jobs whose environment was taken earlier)."""
    global _SESSION_HOME
    if _SESSION_HOME is not None:
        return
    _SESSION_HOME = Path(tempfile.mkdtemp(prefix="ntui-test-home-"))
    os.environ["HOME"] = str(_SESSION_HOME)
    for var, sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_STATE_HOME", ".local/state"),
                     ("XDG_CACHE_HOME", ".cache"), ("XDG_DATA_HOME", ".local/share")):
        os.environ[var] = str(_SESSION_HOME / sub)
    os.environ.pop("NTUI_STATE_DIR", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_HOME is not None:
        shutil.rmtree(_SESSION_HOME, ignore_errors=True)


#: The signals whose handlers a test may change (the CLI's Ctrl-C, a stub's relay) and must put back.
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2",
                                                     "SIGPIPE", "SIGCHLD", "SIGALRM", "SIGWINCH", "SIGTSTP", "SIGCONT"))


def _umask() -> str:
    """The process's umask as the kernel reports it (reading it with os.umask would set it, racing threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            return next((line.split()[1] for line in fh if line.startswith("Umask:")), "?")
    except OSError:
        return "?"


def _process_state() -> dict[str, object]:
    """What else of the process a test could change for every later one: the directory, the umask, the signal
    handlers, and the cluster a ``--cluster`` run of the CLI talks to (ntui.cli.common, when imported)."""
    state: dict[str, object] = {"cwd": os.getcwd(), "umask": _umask()}
    state.update({f"handler of {signal.Signals(s).name}": signal.getsignal(s) for s in _SIGNALS})
    common = sys.modules.get("ntui.cli.common")
    if common is not None:
        state["the CLI's --cluster target"] = (common.remote_cluster(), common._TARGET.files is not None)
    return state


def _restore(before: dict[str, object]) -> None:
    os.chdir(str(before["cwd"]))
    if before["umask"] != "?":
        os.umask(int(str(before["umask"]), 8))
    for s in _SIGNALS:
        with contextlib.suppress(TypeError, ValueError, OSError):  # None: a handler not set from Python
            signal.signal(s, before[f"handler of {signal.Signals(s).name}"])  # type: ignore[arg-type]
    common = sys.modules.get("ntui.cli.common")
    if common is not None:
        common.select_cluster(None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """A test leaves the process environment as it found it, its fixtures' teardowns included.

    The suite runs in one process: a variable a test sets and does not undo (``os.environ[...] =`` in a thread
    that raced another, a ``del`` skipped by an exception) points every later test at its directories, and those
    fail far from the cause. Such a change is undone here and reported as an error of the test that made it.
    The same for the rest of the process's state a test can change (:func:`_process_state`)."""
    before = dict(os.environ)
    state = _process_state()
    try:
        return (yield)
    finally:
        after = dict(os.environ)
        if after != before:
            changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
            os.environ.clear()
            os.environ.update(before)
            _ENV_LEAKS.append(f"{item.nodeid}: " + ", ".join(
                f"{k}={after.get(k)!r} (was {before.get(k)!r})" for k in changed))
        now = _process_state()
        if now != state:
            _restore(state)
            left = [k for k in state.keys() | now.keys() if state.get(k) != now.get(k) and _left_changed(k, now[k])]
            if left:
                _ENV_LEAKS.append(f"{item.nodeid}: " + ", ".join(
                    f"{k} {now.get(k)!r} (was {state.get(k)!r})" for k in sorted(left)))


def _left_changed(key: str, now: object) -> bool:
    """Whether a change is one the test left: any but a signal's handler put back to the default (asyncio's
    remove_signal_handler does that when an app ends, also where the process started with the signal ignored, as
    under nohup; it is undone all the same)."""
    return not key.startswith("handler of ") or now is not signal.SIG_DFL


#: Tests that left the environment (or the process's state) changed (see :func:`pytest_runtest_protocol`); the
#: session fails on any.
_ENV_LEAKS: list[str] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _ENV_LEAKS:
        sys.stderr.write("\ntests that left the process environment or state changed (undone after each):\n  "
                         + "\n  ".join(_ENV_LEAKS) + "\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that uses the dev cluster must be marked ``cluster``: scripts/test runs the tests not so marked in
    their own lane, beside the cluster lanes, so an unmarked one would never reach a cluster."""
    unmarked = [item.nodeid for item in items
                if "dev_cluster" in getattr(item, "fixturenames", ()) and item.get_closest_marker("cluster") is None]
    if unmarked:
        raise pytest.UsageError("these tests use the dev_cluster fixture but are not marked cluster: "
                                + ", ".join(unmarked))


settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("fuzz", max_examples=10_000, deadline=None)
settings.load_profile(os.environ.get("NTUI_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    return home


@pytest.fixture(autouse=True)
def _notifications_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each notification an app receives, also kept on it for :func:`tests.support.notes.notified` (Textual's own
    list forgets one whose time is up)."""
    if "textual.app" not in sys.modules:
        return  # a test that never imported Textual runs no app
    from textual.app import App

    from tests.support.notes import ATTR

    original = App._on_notify

    def on_notify(self: Any, event: Any) -> None:
        self.__dict__.setdefault(ATTR, []).append(event.notification)
        original(self, event)

    monkeypatch.setattr(App, "_on_notify", on_notify)


# ---------------------------------------------------------------- cluster hygiene between modules


#: Job states in which a job is still being torn down (its cleanup ran; the nodes free up on their own).
_ENDING = {"CANCELLED", "COMPLETING", "COMPLETED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"}


def _queued_jobs() -> dict[str, str] | None:
    """Every job the dev cluster still lists (id -> state), or None when squeue does not answer."""
    try:
        res = subprocess.run(["squeue", "-h", "-a", "-o", "%i %T"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0:
        return None
    return dict(line.split(None, 1) for line in res.stdout.splitlines() if len(line.split(None, 1)) == 2)


def _stdout_of(job_id: str) -> str:
    """The job's StdOut path (``scontrol show job -o``), or "" when the controller does not say."""
    try:
        res = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    for word in res.stdout.split():
        if word.startswith("StdOut="):
            return word.removeprefix("StdOut=")
    return ""


@pytest.fixture(scope="module", autouse=True)
def _cluster_jobs_cleaned_up(request: pytest.FixtureRequest,
                             tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A module of cluster tests leaves the queue as it found it.

    The suite runs serially on one two-node cluster, so a job one module leaves behind (a crashed test, a
    cleanup that failed) would hold the nodes and make a later test wait for it and time out far from the
    cause. After each module that has cluster tests, the jobs it added whose output goes under this test
    run's temporary directory (so: this run's jobs, not another session's on a shared dev cluster) are
    handled: those still pending or running are named in a warning and cancelled, and all of them are
    waited for (cancelled ones still completing too), so the next module starts on idle nodes.
    """
    module = request.module
    has_cluster = any(
        item.get_closest_marker("cluster") is not None
        for item in request.session.items
        if getattr(item, "module", None) is module
    )
    before = _queued_jobs() if has_cluster and os.environ.get("SLURM_CONF") else None
    yield
    if before is None:
        return
    ours = str(tmp_path_factory.getbasetemp().resolve()) + os.sep
    after = _queued_jobs() or {}
    added = {j: state for j, state in after.items() if j not in before and _stdout_of(j).startswith(ours)}
    if not added:
        return
    left = sorted((j for j, state in added.items() if state not in _ENDING), key=lambda j: (len(j), j))
    if left:
        warnings.warn(f"{module.__name__} left job(s) {', '.join(left)} pending or running in the dev "
                      "cluster's queue; cancelling them", stacklevel=1)
        subprocess.run(["scancel", *left], capture_output=True, timeout=30, check=False)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        now = _queued_jobs()
        if now is not None and not now.keys() & added.keys():
            return
        time.sleep(1)
    warnings.warn(f"jobs {', '.join(sorted(added))} are still listed 90 s after the module ended", stacklevel=1)
