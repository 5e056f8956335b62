"""``ntui check``: a preset statically, then against this cluster's partitions (``--test-only``: and
``sbatch --test-only``); the partition check and the test-only call that ``submit`` and ``resubmit`` share.

Exit codes: 0 ok; 2 the preset has errors, or this cluster's partitions would refuse or never run the job
(:mod:`ntui.core.compose.sitecheck`); 3 Slurm refused or failed (``--test-only``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ntui.cli.common import EXIT_OK, EXIT_PROBLEMS, EXIT_SLURM, print_problems, remote_cluster
from ntui.cli.compose import add_preset_args, load_spec
from ntui.cli.slurm import cli_runner, slurm_failed
from ntui.core.compose.sitecheck import (
    check_against_cluster,
    check_array_size,
    check_launcher,
    check_requeue,
    check_test_only,
    cluster_limits,
)
from ntui.core.compose.spec import JobSpec
from ntui.core.compose.yamlsrc import LoadedPreset
from ntui.core.problems import Problem
from ntui.core.slurm.runner import CommandRunner, SlurmError

__all__ = ["configure", "site_check", "site_refused", "test_only", "test_only_remote"]


def configure(name: str, p: argparse.ArgumentParser) -> None:
    add_preset_args(p)
    p.add_argument("--test-only", action="store_true", help="also ask Slurm: sbatch --test-only")
    p.add_argument("--what-if", action="store_true",
                   help="what would start sooner: sbatch --test-only of a few shapes (fewer nodes, a shorter time, "
                        "another QOS or partition), one change each")
    p.set_defaults(func=cmd_check)


def site_refused(problems: Sequence[Problem], what: str) -> bool:
    """Print the site check's problems; True (and say so) when one is an error."""
    for p in problems:
        print(str(p), file=sys.stderr)
    errors = sum(p.is_error for p in problems)
    if errors:
        print(f"ntui: {what}: {errors} problem(s) with this cluster's partitions (see above)", file=sys.stderr)
    return bool(errors)


def site_check(spec: JobSpec, loaded: LoadedPreset | None = None) -> tuple[bool, int]:
    """``check`` runs what the form and ``submit`` run: the job against the cluster's partitions, whenever
    the cluster answers (no Slurm, no answer: nothing to check against). Returns (refused, warnings)."""
    runner = cli_runner()
    problems = check_against_cluster(spec, cluster_limits(runner), loaded=loaded)
    problems += check_array_size(spec, runner, loaded=loaded)  # a sweep: W7, MaxArraySize
    problems += check_requeue(spec, runner, loaded=loaded)  # a run that requeues: T7, JobRequeue
    if remote_cluster() is None:  # E4 looks at this machine's PATH, which a job on a cluster over ssh never sees
        problems += check_launcher(spec, loaded=loaded)  # torchrun/accelerate/python on the PATH the job inherits
    return site_refused(problems, "this cluster would not run it"), sum(not p.is_error for p in problems)


def test_only(spec: JobSpec, loaded: LoadedPreset | None = None) -> int:
    runner = cli_runner()
    parts = cluster_limits(runner)
    before = check_against_cluster(spec, parts, loaded=loaded) + check_array_size(spec, runner, loaded=loaded)
    if site_refused(before, "not sent to sbatch --test-only"):
        return EXIT_PROBLEMS
    try:
        res, after = check_test_only(spec, runner, parts, loaded=loaded, reported=before)
    except SlurmError as exc:
        return slurm_failed(exc)
    if res.ok:
        if site_refused(after, f"Slurm would accept it in partition {res.partition}, but it would never start"):
            return EXIT_PROBLEMS
        where = f" on {res.nodes}" if res.nodes else ""
        print(f"ok: would start at {res.start or '?'}{where}" + (f" in {res.partition}" if res.partition else ""))
        return 0
    print(f"sbatch --test-only: {res.reason}", file=sys.stderr)
    return EXIT_SLURM


def test_only_remote(spec: JobSpec, loaded: LoadedPreset, runner: CommandRunner, cluster: str) -> int:
    """``sbatch --test-only`` on the cluster, the script rendered here on its standard input (nothing is
    submitted, nothing written there: :func:`ntui.core.remotesubmit.test_only_there`), after the same checks as a
    submit there; exit codes as :func:`test_only`'s."""
    from ntui.core.remotesubmit import test_only_there

    parts = cluster_limits(runner)
    before = check_against_cluster(spec, parts, loaded=loaded) + check_array_size(spec, runner, loaded=loaded)
    if site_refused(before, "not sent to sbatch --test-only"):
        return EXIT_PROBLEMS
    try:
        result, problems = test_only_there(spec, runner, parts, loaded=loaded)
    except SlurmError as exc:
        return slurm_failed(exc)
    if not result.ok:
        print(f"sbatch --test-only on {cluster}: {result.reason}", file=sys.stderr)
        return EXIT_SLURM
    after = [p for p in problems if p not in before]
    if site_refused(after, f"Slurm would accept it in partition {result.partition}, but it would never start"):
        return EXIT_PROBLEMS
    where = f" on {result.nodes}" if result.nodes else ""
    print(f"ok: {cluster} would start it at {result.start or '?'}{where}"
          + (f" in {result.partition}" if result.partition else ""))
    return 0


def what_if(preset: str, overrides: tuple[str, ...], spec: JobSpec) -> int:
    """A table of shapes and Slurm's estimate for each (:mod:`ntui.core.waiting.whatif`): one ``scontrol show
    partition`` and one ``sacctmgr`` to plan them, then one ``sbatch --test-only`` per shape (at most
    :data:`~ntui.core.waiting.whatif.MAX_SHAPES`)."""
    from datetime import datetime

    from ntui.core.slurm.sacctmgr import user_associations
    from ntui.core.waiting.whatif import ShapeResult, input_from_spec, plan_shapes, preset_tester, run_shapes, summary
    from ntui.core.waiting.why import format_start

    runner = cli_runner()
    parts = cluster_limits(runner)
    job = input_from_spec(spec)
    assoc = user_associations(runner)
    qos = next((q for a, q in assoc.pairs if a == job.account), assoc.qos) if job.account else assoc.qos
    shapes = plan_shapes(job, partitions=parts, qos_choices=qos)
    now = datetime.now()
    width = max(len(s.label) for s in shapes) + 2

    def shown(r: ShapeResult) -> None:
        if r.ok and r.start is not None:
            where = f" on {r.nodes}" if r.nodes else ""
            said = f"starts {format_start(r.start, now)}{where}" + (f" in {r.partition}" if r.partition else "")
        elif r.ok:
            said = r.reason or "accepted"
        else:
            said = f"refused: {r.reason}"
        setting = f"--set {r.shape.override}" if r.shape.override else ""
        print(f"{r.shape.label:<{width}}{said}" + (f"   ({setting})" if setting else ""), flush=True)

    try:
        results = run_shapes(shapes, preset_tester(runner, preset, overrides), on_result=shown)
    except SlurmError as exc:
        return slurm_failed(exc)
    print(summary(results, now))
    return EXIT_OK if any(r.ok for r in results) else EXIT_SLURM


def cmd_check(args: argparse.Namespace) -> int:
    from ntui.cli.importscript import check_script_file, looks_like_script

    if looks_like_script(args.preset):  # a hand-written sbatch script, not a preset
        if args.overrides or args.test_only or args.what_if:
            print("ntui: --set, --test-only and --what-if apply to presets; `ntui import` the script first",
                  file=sys.stderr)
            return EXIT_PROBLEMS
        return check_script_file(args.preset)
    loaded, spec, problems = load_spec(args.preset, args.overrides)
    print_problems(problems)
    if spec is None:
        n = sum(1 for p in problems if p.is_error)
        print(f"{n} error(s)", file=sys.stderr)
        return EXIT_PROBLEMS
    cluster = remote_cluster()
    if args.what_if and cluster is not None:
        print("ntui: check --what-if gives sbatch a script file per shape: not over --cluster yet (the partition "
              "check and --test-only run without it)", file=sys.stderr)
        return EXIT_PROBLEMS
    if args.test_only and cluster is not None:
        from ntui.cli.common import close_cluster_files

        try:
            return test_only_remote(spec, loaded, cli_runner(), cluster)
        finally:
            close_cluster_files()
    if args.what_if:
        return what_if(args.preset, tuple(args.overrides or ()), spec)
    if args.test_only:
        return test_only(spec, loaded)
    refused, site_warnings = site_check(spec, loaded)
    if refused:
        return EXIT_PROBLEMS
    warn = len(problems) + site_warnings
    print(f"ok: {spec.name} ({spec.launcher}, {spec.nodes} node(s), world size {spec.world_size})"
          + (f", {warn} warning(s)" if warn else ""))
    return EXIT_OK
