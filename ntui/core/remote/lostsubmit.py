"""A submit whose answer was lost with the link: was the job submitted?

Over ssh the script goes on sbatch's standard input, so the job's ``Command`` does not name the submission (what
:mod:`ntui.core.records.reconcile` matches on a login node). Instead each remote submit carries its own tag in
the job's comment (``--comment=ntui-submit:TOKEN``); when sbatch's answer is lost (the link dropped, or ssh was
killed at its timeout while sbatch may still have run), :func:`find_lost_submit` asks the cluster, before anything
is submitted again: one ``squeue`` by the job's name, the tag in its comment; else one ``sacct`` of the last hour
by name (its comment is stored only where the cluster keeps comments, ``AccountingStoreFlags=job_comment``: a job
of that name without one is said as a possible match, never taken for ours). A sweep (a job array) is listed task by
task (``123_4``, pending ones folded as ``123_[5-9%2]``): the array's id, what sbatch answers, is said.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from ntui.core.slurm.runner import CommandRunner, SlurmError

__all__ = ["LostSubmit", "build_lookup_argvs", "find_lost_submit", "new_tag", "parse_lookup"]

TAG_PREFIX = "ntui-submit:"
_TAG_RE = re.compile(r"ntui-submit:[0-9a-f]{32}")
LOOKUP_TIMEOUT = 30.0


def new_tag() -> str:
    """A fresh tag for one submission (the job's comment)."""
    return f"{TAG_PREFIX}{uuid.uuid4().hex}"


@dataclass(frozen=True)
class LostSubmit:
    """What the cluster says of a submit whose answer was lost: ``job_id`` (ours: its comment holds our tag),
    else ``maybe`` (jobs of that name accounting lists without a comment to tell), ``asked``: whether the cluster
    answered at all (False: nothing is known)."""

    job_id: str | None
    maybe: tuple[str, ...] = ()
    asked: bool = True


def build_lookup_argvs(job_name: str) -> tuple[list[str], list[str]]:
    """``squeue`` (every state it still keeps) and ``sacct`` (the last hour) of the user's jobs named
    ``job_name``: job id and comment, ``|``-separated."""
    squeue = ["squeue", "--me", "--states=all", "--noheader", f"--name={job_name}", "--format=%i|%k"]
    sacct = ["sacct", "-X", "-n", "-P", f"--name={job_name}", "--starttime=now-3600", "--format=JobID,Comment"]
    return squeue, sacct


def parse_lookup(out: str, tag: str) -> tuple[str | None, tuple[str, ...]]:
    """(the job whose comment holds ``tag``, the jobs whose comment holds no ntui tag at all); an array's tasks
    are said by the array's id."""
    ours: str | None = None
    untagged: list[str] = []
    for line in out.splitlines():
        job, sep, comment = line.strip().partition("|")
        job = job.strip().split("_", 1)[0]
        if not sep or not job:
            continue
        if tag in comment:
            ours = ours or job
        elif not _TAG_RE.search(comment) and job not in untagged:
            untagged.append(job)
    return ours, tuple(untagged)


def find_lost_submit(runner: CommandRunner, job_name: str, tag: str) -> LostSubmit:
    """Ask the cluster for the job ``tag`` was submitted with (see the module's docstring). Both queries only
    read: the ssh runner asks them again over a reopened master when the link is still down."""
    squeue, sacct = build_lookup_argvs(job_name)
    answered = False
    maybe: tuple[str, ...] = ()
    for argv in (squeue, sacct):
        try:
            res = runner.run(argv, timeout=LOOKUP_TIMEOUT)
        except SlurmError:
            continue
        if res.returncode != 0:
            continue
        answered = True
        ours, untagged = parse_lookup(res.stdout, tag)
        if ours is not None:
            return LostSubmit(job_id=ours)
        if argv is sacct:
            maybe = untagged
    return LostSubmit(job_id=None, maybe=maybe, asked=answered)
