"""Test and demo stand-ins (never installed): a fake Slurm runner and a fake GPU watch stream.

:class:`FakeRunner` is a :class:`~ntui.core.slurm.runner.CommandRunner` answering from canned results;
:class:`FakeStream` stands in for :class:`~ntui.core.gpu.stream.GpuStream` (nothing runs; the test or the
screenshot scene feeds the ``nvidia-smi`` lines).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Union

from ntui.core.slurm.runner import CommandResult

__all__ = ["CAPTURE_VERSIONS", "FakeCall", "FakeRunner", "FakeRunnerUnmatched", "FakeStream", "Response", "capture",
           "capture_jobs", "result"]


@dataclass(frozen=True)
class FakeCall:
    """One call recorded by :class:`FakeRunner`."""

    argv: tuple[str, ...]
    timeout: float
    env: Mapping[str, str] | None
    input: str | None


Responder = Callable[[tuple[str, ...]], CommandResult]
#: A canned answer: a result, an exception to raise (e.g. SlurmTimeout), a callable on argv, or a list of
#: those handed out in turn (the last one repeats).
Response = Union[CommandResult, BaseException, Responder, "list[CommandResult | BaseException | Responder]"]


class FakeRunnerUnmatched(LookupError):
    """FakeRunner got a command it has no answer for."""


#: Real Slurm answers (Slurm 22.05.8 on the dev cluster), one ``NAME.stdout/.stderr/.rc`` triple each; the same
#: set per version under ``22.05/``, ``24.11/`` and ``26.05/`` (tests/data/slurm/README.md).
CAPTURES = Path(__file__).resolve().parents[1] / "data" / "slurm"
#: The Slurm versions with a capture directory, oldest first.
CAPTURE_VERSIONS = ("22.05", "24.11", "26.05")


def capture(name: str, argv: Sequence[str] = ("slurm",), *, version: str | None = None) -> CommandResult:
    """A captured Slurm answer from ``tests/data/slurm/[VERSION/]NAME.*`` as a :class:`CommandResult`."""
    where = CAPTURES / version if version else CAPTURES
    return CommandResult(
        tuple(argv),
        int((where / f"{name}.rc").read_text().strip()),
        (where / f"{name}.stdout").read_bytes().decode("utf-8", "replace"),
        (where / f"{name}.stderr").read_bytes().decode("utf-8", "replace"),
        0.0,
    )


def capture_jobs(version: str, accounting: bool = False) -> dict[str, str]:
    """The job id each role had in a version's captures (``jobs.txt`` / ``jobs_accounting.txt``: ``role=id``)."""
    text = (CAPTURES / version / ("jobs_accounting.txt" if accounting else "jobs.txt")).read_text()
    return dict(line.split("=", 1) for line in text.split() if "=" in line)


def result(
    argv: Sequence[str] | str = (),
    stdout: str = "",
    stderr: str = "",
    returncode: int = 0,
    duration_s: float = 0.0,
) -> CommandResult:
    """Shorthand to build a canned :class:`CommandResult` (``argv`` may be a space-separated string)."""
    args = tuple(argv.split()) if isinstance(argv, str) else tuple(argv)
    return CommandResult(args, returncode, stdout, stderr, duration_s)


class FakeRunner:
    """A :class:`CommandRunner` that answers from canned responses keyed by argv prefix.

    ``FakeRunner({"squeue": result(stdout=...), ("scontrol", "show", "job"): ..., "sbatch --parsable": r})``.
    String keys are split on whitespace. The longest matching prefix wins; ``argv[0]`` is compared by
    basename, so ``/opt/slurm/bin/squeue`` matches ``squeue``. ``handler`` (a callable on argv returning a
    result or ``None``) is asked first. Unmatched commands return ``default`` or raise
    :class:`FakeRunnerUnmatched`. Every call is recorded in ``history``; ``calls`` counts them (but ``--version``).
    The argv of a canned result is replaced by the actual argv.
    """

    def __init__(
        self,
        responses: Mapping[str | tuple[str, ...], Response] | None = None,
        *,
        handler: Callable[[tuple[str, ...]], CommandResult | None] | None = None,
        default: CommandResult | None = None,
    ) -> None:
        self._responses: dict[tuple[str, ...], list[CommandResult | BaseException | Responder]] = {}
        self.handler = handler
        self.default = default
        self.history: list[FakeCall] = []
        self._lock = threading.Lock()
        for key, response in (responses or {}).items():
            self.add(key, response)

    @property
    def calls(self) -> int:
        """The Slurm calls the app counts: every command but a client's ``--version`` (local, no RPC; the real
        runner does not count it either, see :func:`ntui.core.slurm.version.installed_version`)."""
        return sum(1 for c in self.history if c.argv[-1:] != ("--version",))

    def add(self, prefix: str | Sequence[str], response: Response) -> FakeRunner:
        """Register (or replace) the answer for an argv prefix; returns self for chaining."""
        key = tuple(prefix.split()) if isinstance(prefix, str) else tuple(prefix)
        if not key:
            raise ValueError("empty prefix")
        self._responses[key] = list(response) if isinstance(response, list) else [response]
        return self

    def argvs(self) -> list[tuple[str, ...]]:
        """The argv of every call so far, in order."""
        return [c.argv for c in self.history]

    def _lookup(self, argv: tuple[str, ...]) -> CommandResult | BaseException | Responder | None:
        norm = (os.path.basename(argv[0]), *argv[1:])
        best: tuple[str, ...] | None = None
        for key in self._responses:
            if norm[: len(key)] == key and (best is None or len(key) > len(best)):
                best = key
        if best is None:
            return None
        queue = self._responses[best]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        input: str | None = None,  # noqa: A002
    ) -> CommandResult:
        args = tuple(argv)
        if not args:
            raise ValueError("empty argv")
        with self._lock:
            self.history.append(FakeCall(args, timeout, dict(env) if env is not None else None, input))
            answer: CommandResult | BaseException | Responder | None = None
            if self.handler is not None:
                answer = self.handler(args)
            if answer is None:
                answer = self._lookup(args)
        if answer is None:
            if self.default is None:
                raise FakeRunnerUnmatched(f"FakeRunner has no response for {args!r}")
            answer = self.default
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            answer = answer(args)
        return CommandResult(args, answer.returncode, answer.stdout, answer.stderr, answer.duration_s)


class FakeStream:
    """A stand-in for :class:`~ntui.core.gpu.stream.GpuStream` (the pane's ``stream_factory``): records what
    the pane asked for and starts nothing; the caller feeds lines with :meth:`feed` or ``on_line`` and ends
    it with ``on_exit``. Every stream made is appended to ``made`` (tests reset it)."""

    made: ClassVar[list[FakeStream]] = []

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None,
        on_line: Callable[[str], None],
        on_exit: Callable[[int, str], None],
    ) -> None:
        self.argv = tuple(argv)
        self.env = env
        self.on_line = on_line
        self.on_exit = on_exit
        self.started = False
        self.stopped = False
        FakeStream.made.append(self)

    def start(self) -> None:
        self.started = True

    def stop(self, timeout: float = 5.0) -> None:
        self.stopped = True

    def feed(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.on_line(line)
