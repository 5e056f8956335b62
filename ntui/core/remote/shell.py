"""A shell inside a running job, on one of its nodes (Textual-free): the one home of what ``ntui attach`` and the
jobs view's ``x`` run.

The step is ``srun --jobid=ID --overlap --pty -N 1 -n 1 [-w NODE] bash``
(:func:`~ntui.core.slurm.srun.build_shell_argv`). Here it runs on this terminal
(:func:`~ntui.core.slurm.srun.run_interactive`); for a job of a cluster reached over ssh it runs on that cluster's
login node on this terminal, ``ssh -t`` over the cluster's shared master
(:meth:`~ntui.core.slurm.ssh.SshRunner.run_terminal`: the master opened first where none is up, the terminal's
settings put back however ssh ends).
"""

from __future__ import annotations

from dataclasses import dataclass

from ntui.core.remote.files import ssh_runner_of
from ntui.core.slurm.runner import CommandRunner
from ntui.core.slurm.srun import build_shell_argv
from ntui.core.slurm.ssh import SshRunner

__all__ = ["JobShell", "job_shell"]


@dataclass(frozen=True)
class JobShell:
    """The shell step of one job: its srun argv, and the cluster's ssh runner when the job is on a cluster reached
    over ssh (None: Slurm here)."""

    srun: tuple[str, ...]
    ssh: SshRunner | None = None
    bin_dir: str | None = None  # where Slurm's clients are here (the settings' slurm.bin-dir)

    @property
    def cluster(self) -> str | None:
        """The cluster reached over ssh the shell opens on (None: here)."""
        return self.ssh.name if self.ssh is not None else None

    @property
    def words(self) -> str:
        """The step as said before it runs: its argv and where."""
        where = f" on {self.cluster}" if self.cluster is not None else ""
        return f"{' '.join(self.srun)}{where}"

    def argv(self) -> list[str]:
        """What runs on this machine: over ssh, ``ssh ... -t HOST -- srun ...`` over the master; else srun's."""
        if self.ssh is not None:
            return self.ssh.ssh_argv(self.srun, terminal=True)
        return list(self.srun)

    def run(self) -> int:
        """Run the step on this process's terminal until it ends; its exit status (127: srun not found here; 255:
        ssh's own failure, said by ssh on the terminal). Raises ``SlurmError`` when ssh is not installed here."""
        if self.ssh is not None:
            return self.ssh.run_terminal(self.srun)
        from ntui.core.slurm import srun

        return srun.run_interactive(self.srun, bin_dir=self.bin_dir)


def job_shell(runner: CommandRunner, job_id: str, *, node: str | None = None, bin_dir: str | None = None) -> JobShell:
    """The shell step of job ``job_id`` (on ``node``, default srun's choice: the job's first) on the cluster
    ``runner`` reaches: over ssh when it is a cluster's ssh runner, else here. ValueError for an id or a node name
    that is not one."""
    return JobShell(tuple(build_shell_argv(job_id, node=node)), ssh_runner_of(runner), bin_dir)
