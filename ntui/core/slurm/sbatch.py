"""``sbatch --parsable`` (submit) and ``sbatch --test-only`` (check without submitting)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ntui.core.slurm.common import (
    SUBMIT_TIMEOUT,
    _text,
)
from ntui.core.slurm.runner import (
    CommandResult,
    CommandRunner,
    ControllerUnreachable,
    SlurmError,
    check,
    classify,
)

# ---------------------------------------------------------------- sbatch --parsable


@dataclass(frozen=True)
class Submission:
    job_id: str
    cluster: str | None = None


_PARSABLE_RE = re.compile(r"^(\d+)(?:;(\S+))?$")


def build_sbatch_argv(script_path: str | None, extra_args: Sequence[str] = ()) -> list[str]:
    """``sbatch --parsable [EXTRA...] SCRIPT`` (extra args e.g. ``--hold``; they go before the script,
    where sbatch reads options); without a script path sbatch reads the script on its standard input (a
    cluster reached over ssh: the script is never a file there)."""
    return ["sbatch", "--parsable", *extra_args, *([str(script_path)] if script_path is not None else [])]


def parse_sbatch_parsable(stdout: str | bytes) -> Submission:
    """The job ID (and cluster) from ``sbatch --parsable`` stdout: the last line shaped ``N`` or ``N;cluster``
    (site wrappers may print lines before it). ``ValueError`` when there is none."""
    for line in reversed(_text(stdout).strip().splitlines()):
        m = _PARSABLE_RE.match(line.strip())
        if m:
            return Submission(job_id=m.group(1), cluster=m.group(2))
    raise ValueError("sbatch --parsable printed no job ID")


def submit(
    runner: CommandRunner,
    script_path: str | None,
    *,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = SUBMIT_TIMEOUT,
    script: str | None = None,
) -> Submission:
    """Submit a batch script: the file ``script_path``, or (``script_path`` None) the text ``script`` on sbatch's
    standard input. A printed job ID wins over noise on stderr (raising then would make the user submit twice);
    otherwise the typed error (``SlurmRejected`` with Slurm's reason, ...) is raised."""
    if (script_path is None) == (script is None):
        raise ValueError("submit takes a script path or a script's text, one of them")
    res = runner.run(build_sbatch_argv(script_path, extra_args), timeout=timeout, env=env, input=script)
    if res.returncode == 0:
        try:
            return parse_sbatch_parsable(res.stdout)
        except ValueError:
            pass
    check(res)
    raise SlurmError(
        "sbatch reported success but printed no job ID",
        argv=res.argv,
        stderr=res.stderr + res.stdout,
        returncode=res.returncode,
    )


# ---------------------------------------------------------------- sbatch --test-only


@dataclass(frozen=True)
class TestOnlyResult:
    """What ``sbatch --test-only`` said. ``ok=False`` carries Slurm's ``reason``. Note: a time limit above the
    partition's MaxTime still gives ``ok=True`` (22.05, 24.11, 26.05 alike: the job would pend with
    PartitionTimeLimit)."""

    __test__ = False  # not a pytest class

    ok: bool
    job_id: str | None = None
    start: str | None = None
    processors: int | None = None
    nodes: str | None = None
    partition: str | None = None
    reason: str | None = None
    raw: str = ""
    cluster: str | None = None  # 25.05+ name it ("on cluster C") when the answer comes from a federation member


#: ``Job N to start at T using P processors on nodes L in partition X`` (22.05, 24.11); 25.05+ print
#: ``Job N to start at T[ on cluster C] a using ...`` (a stray word from the format string): nothing between
#: the time and "using" is relied on, beyond an optional cluster name (docs/reliability.md, W1).
_TEST_ONLY_RE = re.compile(
    r"Job (?P<job>\d+) to start at (?P<start>\S+)(?: on cluster (?P<cluster>\S+))?"
    r"(?:(?: \S+)*? using (?P<procs>\d+) processors)?(?: on nodes (?P<nodes>\S+))?(?: in partition (?P<part>\S+))?"
)
_FAIL_RE = re.compile(r"(?:allocation failure|batch job submission failed):\s*(?P<reason>.+)", re.IGNORECASE)
_ERROR_RE = re.compile(r"error:\s*(?P<reason>.+)")


def build_test_only_argv(script_path: str, extra_args: Sequence[str] = ()) -> list[str]:
    return ["sbatch", "--test-only", *extra_args, str(script_path)]


def parse_sbatch_test_only(res: CommandResult) -> TestOnlyResult:
    """Pure parse of a ``sbatch --test-only`` result (the message is on stderr)."""
    raw = (res.stderr + ("\n" + res.stdout if res.stdout.strip() else "")).strip()
    m = _TEST_ONLY_RE.search(res.stderr) or _TEST_ONLY_RE.search(res.stdout)
    if res.returncode == 0 and m:
        return TestOnlyResult(
            ok=True,
            job_id=m.group("job"),
            start=m.group("start"),
            processors=int(m.group("procs")) if m.group("procs") else None,
            nodes=m.group("nodes"),
            partition=m.group("part"),
            raw=raw,
            cluster=m.group("cluster"),
        )
    if res.returncode == 0:
        return TestOnlyResult(ok=True, raw=raw)
    reason = ""
    for line in raw.splitlines():
        fm = _FAIL_RE.search(line)
        if fm:
            reason = fm.group("reason").strip()
    if not reason:
        for line in raw.splitlines():
            em = _ERROR_RE.search(line)
            if em:
                reason = em.group("reason").strip()
    if not reason:
        reason = next((ln.strip() for ln in raw.splitlines() if ln.strip()), f"exit code {res.returncode}")
    return TestOnlyResult(ok=False, reason=reason, raw=raw)


def test_only(
    runner: CommandRunner,
    script_path: str,
    *,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = SUBMIT_TIMEOUT,
) -> TestOnlyResult:
    """Validate a script without submitting. Rejections come back as ``ok=False``; an unreachable controller
    (``ControllerUnreachable``), a timeout or a missing sbatch raise."""
    res = runner.run(build_test_only_argv(script_path, extra_args), timeout=timeout, env=env)
    err = classify(res)
    if isinstance(err, ControllerUnreachable):
        raise err
    return parse_sbatch_test_only(res)


test_only.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
