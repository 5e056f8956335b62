"""A sweep's files, as both sides see them: the manifest (task index -> values) and the job file.

**The manifest** ``<log_dir>/<stem>-sweep-<digest>.manifest`` holds every task's values exactly as the preset
wrote them (strings, never retyped by YAML). It is a sequence of NUL-terminated UTF-8 records (no value can hold
a NUL: the preset loader refuses one), so bash reads a task's values with ``mapfile -d ''`` and nothing in a
value is ever parsed by a shell::

    ntui-sweep-manifest v1 \\0 K \\0 N \\0 name_1 \\0 ... name_K \\0 metric \\0
    value(task 0, name_1) \\0 ... value(task 0, name_K) \\0
    ...
    value(task N-1, name_1) \\0 ... value(task N-1, name_K) \\0

The header is :func:`header_records` long (4 + K records), so task ``i``'s values are the K records after the
first ``4 + K + i*K``. ``digest`` is the first 16 hex digits of the file's SHA-256: the name says what the file
holds, so the rendered script (which names it) stays the same text for the same sweep, the file can be written
before ``sbatch`` (a task that starts at once finds it) and a resubmission of some of its tasks reads the very
same file. ``tr '\\0' '\\n' < FILE`` shows it.

**The script's side** (:func:`task_lines`): after ``set -euo pipefail`` the batch script of array task
``$SLURM_ARRAY_TASK_ID`` loads its K values into the bash array ``NTUI_SWEEP`` with one ``mapfile -d '' -s SKIP
-n K`` (bash 4.4+), and stops with a message when the manifest is missing or has no such task. The launch line
and the exports then use ``"${NTUI_SWEEP[j]}"`` inside double quotes: expanded once, in the batch shell, never
split, globbed or evaluated (:mod:`ntui.core.compose.sweep`).

**The job file** ``<log_dir>/<stem>-<jobid>.sweep`` (JSON, :class:`SweepJob`) is written by the submission next
to the script ``<stem>-<jobid>.sbatch``: which manifest, which task indices were submitted (``0-5``, or ``1,4``
for a resubmission of the failed ones), the concurrency cap, and, once every task ended, each task's final
state (so ``ntui sweep`` and ``ntui resubmit --failed`` work after Slurm forgot the tasks). Readers find it from
the history entry's log dir and stem (:func:`job_file_path`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ntui.core.jobfiles.machinery import MARK

__all__ = [
    "JOB_FILE_EXT",
    "MAGIC",
    "MANIFEST_EXT",
    "SHELL_ARRAY",
    "Manifest",
    "ManifestError",
    "SweepJob",
    "TaskRecord",
    "array_of_script",
    "digest_of",
    "encode_manifest",
    "format_indices",
    "header_records",
    "is_sweep_script",
    "job_file_path",
    "listing",
    "manifest_name",
    "manifest_of_script",
    "manifest_path",
    "parse_indices",
    "parse_manifest",
    "read_job_file",
    "read_manifest",
    "task_lines",
    "write_job_file",
    "write_manifest",
]

MAGIC = "ntui-sweep-manifest v1"
JOB_FORMAT = "ntui-sweep-job v1"
MANIFEST_EXT = ".manifest"
JOB_FILE_EXT = ".sweep"
#: The bash array a task's values are loaded into (index j = the j-th parameter, in manifest order).
SHELL_ARRAY = "NTUI_SWEEP"
#: The shell variable that names the manifest in the script (the reader's fallback finds it there).
SHELL_PATH_VAR = "NTUI_SWEEP_MANIFEST"
#: A manifest larger than this is refused by the reader (4,000,001 tasks of short values fit).
MAX_MANIFEST_BYTES = 512 * 1024 * 1024


class ManifestError(ValueError):
    """A manifest or job file that is not in this format (or cannot be read)."""


@dataclass(frozen=True)
class Manifest:
    """Task index -> values (the user's strings), the parameter names, and the metric regex ("" for none)."""

    names: tuple[str, ...]
    tasks: tuple[tuple[str, ...], ...]
    metric: str = ""

    def values(self, index: int) -> dict[str, str]:
        return dict(zip(self.names, self.tasks[index], strict=True))

    @property
    def size(self) -> int:
        return len(self.tasks)


def header_records(names: Sequence[str]) -> int:
    """Records before task 0's values: magic, K, N, the K names, the metric."""
    return 4 + len(names)


def encode_manifest(manifest: Manifest) -> bytes:
    """The manifest's bytes. Raises ValueError for a NUL in any record or a task of the wrong width."""
    k = len(manifest.names)
    records: list[str] = [MAGIC, str(k), str(len(manifest.tasks)), *manifest.names, manifest.metric]
    for i, task in enumerate(manifest.tasks):
        if len(task) != k:
            raise ValueError(f"task {i} has {len(task)} values for {k} parameters")
        records.extend(task)
    for r in records:
        if "\x00" in r:
            raise ValueError("a manifest record cannot hold a NUL byte")
    return b"".join(r.encode("utf-8") + b"\x00" for r in records)


def parse_manifest(data: bytes) -> Manifest:
    """The manifest in ``data``; :class:`ManifestError` when it is not one (or is cut short)."""
    if not data.endswith(b"\x00"):
        raise ManifestError("not an ntui sweep manifest (no NUL-terminated records)")
    try:
        records = data[:-1].decode("utf-8").split("\x00")
    except UnicodeDecodeError as exc:
        raise ManifestError("not valid UTF-8") from exc
    if len(records) < 4 or records[0] != MAGIC:
        raise ManifestError(f"not an ntui sweep manifest (first record {records[0][:40]!r}, want {MAGIC!r})")
    try:
        k, n = int(records[1]), int(records[2])
    except ValueError as exc:
        raise ManifestError("bad parameter or task count") from exc
    head = 4 + k
    if k < 0 or n < 0 or len(records) != head + k * n:
        raise ManifestError(f"{len(records)} records for {k} parameters x {n} tasks: cut short or extended")
    names = tuple(records[3:3 + k])
    values = records[head:]
    tasks = tuple(tuple(values[i * k:(i + 1) * k]) for i in range(n))
    return Manifest(names, tasks, records[3 + k])


def digest_of(data: bytes) -> str:
    import hashlib  # loaded on first use: rendering a script does not need it (CLI start, issue 19)
    return hashlib.sha256(data).hexdigest()[:16]


def manifest_name(stem: str, digest: str) -> str:
    return f"{stem}-sweep-{digest}{MANIFEST_EXT}"


def manifest_path(log_dir: str, stem: str, data: bytes) -> str:
    """Where the manifest with these bytes lives (its name carries their digest)."""
    return f"{log_dir}/{manifest_name(stem, digest_of(data))}"


def write_manifest(path: str, data: bytes) -> None:
    """Write the manifest atomically (readers see no file or the whole one); an identical file is kept."""
    from ntui.core.paths import atomic_write

    try:
        with open(path, "rb") as fh:
            if fh.read(len(data) + 1) == data:
                return
    except OSError:
        pass
    atomic_write(Path(path), data, mode=0o600)


def read_manifest(path: str) -> Manifest:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise ManifestError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{path} is larger than {MAX_MANIFEST_BYTES} bytes")
    return parse_manifest(data)


def task_lines(path: str, names: Sequence[str]) -> list[str]:
    """The batch-script lines that load this array task's values into ``NTUI_SWEEP`` (see the module doc)."""
    k = len(names)
    head = header_records(names)
    q = shlex.quote
    return [
        f"{MARK}Sweep: this array task's values from the manifest (index -> {', '.join(names)}), NUL-delimited",
        "# and read with mapfile: no value is ever parsed by the shell (W10). Each one reaches the program verbatim.",
        f"{SHELL_PATH_VAR}={q(path)}",
        'ntui_task="${SLURM_ARRAY_TASK_ID:-}"',
        'case "$ntui_task" in ""|*[!0-9]*)',
        '    echo "ntui: this script is a sweep: run it as an array task (sbatch --array), not alone" >&2; exit 1 ;;',
        "esac",
        f'if [ ! -r "${SHELL_PATH_VAR}" ]; then',
        f'    echo "ntui: the sweep manifest ${SHELL_PATH_VAR} is missing (ntui submit writes it)" >&2',
        "    exit 1",
        "fi",
        f'mapfile -d \'\' -t -s $(( {head} + ntui_task * {k} )) -n {k} {SHELL_ARRAY} < "${SHELL_PATH_VAR}"',
        f'if [ "${{#{SHELL_ARRAY}[@]}}" -ne {k} ]; then',
        f'    echo "ntui: task $ntui_task has no values in ${SHELL_PATH_VAR}" >&2',
        "    exit 1",
        "fi",
    ]


# ---------------------------------------------------------------- the job file


@dataclass(frozen=True)
class TaskRecord:
    """A task's final state, kept in the job file once every task of the job ended."""

    state: str
    exit_code: str | None = None
    elapsed_s: int | None = None
    start: str | None = None
    end: str | None = None
    node_list: str | None = None
    reason: str | None = None
    source: str = ""


@dataclass(frozen=True)
class SweepJob:
    """One submission of a sweep: the manifest it reads, the task indices it ran (a resubmission of the failed
    tasks runs some), the concurrency cap, and, once resolved, each task's final state."""

    manifest: str  # file name, in the same directory as the job file
    tasks: int  # tasks in the manifest
    indices: tuple[int, ...]  # the indices this job ran
    parallel: int | None = None
    resubmit_of: str | None = None
    states: Mapping[int, TaskRecord] = field(default_factory=dict)

    def to_json(self) -> str:
        import json  # loaded on first use: rendering a script does not need it (CLI start, issue 19)
        data: dict[str, object] = {
            "format": JOB_FORMAT, "manifest": self.manifest, "tasks": self.tasks,
            "indices": format_indices(self.indices), "parallel": self.parallel, "resubmit_of": self.resubmit_of,
        }
        if self.states:
            data["states"] = {str(i): {k: v for k, v in vars(r).items() if v not in (None, "")}
                              for i, r in sorted(self.states.items())}
        return json.dumps(data, indent=1) + "\n"


def job_file_path(log_dir: str, stem: str, job_id: str) -> str:
    return f"{log_dir}/{stem}-{job_id}{JOB_FILE_EXT}"


def write_job_file(path: str, job: SweepJob) -> None:
    from ntui.core.paths import atomic_write

    atomic_write(Path(path), job.to_json(), mode=0o600)


def read_job_file(path: str) -> SweepJob | None:
    """The job file at ``path``; None when there is none. :class:`ManifestError` for one that is not ours."""
    import json  # loaded on first use: rendering a script does not need it (CLI start, issue 19)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(64 * 1024 * 1024)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ManifestError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw.decode("utf-8"))  # a UnicodeDecodeError is a ValueError: damaged, said below
        if data.get("format") != JOB_FORMAT:
            raise ManifestError(f"{path}: not an ntui sweep job file")
        states = {int(i): TaskRecord(**{k: v for k, v in r.items() if k in TaskRecord.__dataclass_fields__})
                  for i, r in (data.get("states") or {}).items()}
        parallel = data.get("parallel")
        return SweepJob(str(data["manifest"]), int(data["tasks"]), parse_indices(str(data["indices"])),
                        int(parallel) if parallel is not None else None, data.get("resubmit_of"), states)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        if isinstance(exc, ManifestError):
            raise
        raise ManifestError(f"{path}: unreadable sweep job file ({exc})") from exc


def format_indices(indices: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2,5`` (Slurm's ``--array`` syntax)."""
    nums = sorted(set(indices))
    parts: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(parts)


def parse_indices(text: str) -> tuple[int, ...]:
    """``0-2,5`` or ``1,4%2`` (the ``%`` cap is ignored) -> ``(0, 1, 2, 5)``; step syntax ``0-8:2`` too."""
    body = text.split("%", 1)[0].strip()
    out: list[int] = []
    for part in body.split(","):
        part = part.strip()
        if not part:
            continue
        rng, _, step_text = part.partition(":")
        lo, sep, hi = rng.partition("-")
        start = int(lo)
        stop = int(hi) if sep else start
        step = int(step_text) if step_text else 1
        if start < 0 or stop < start or step < 1:
            raise ValueError(f"bad index range {part!r}")
        out.extend(range(start, stop + 1, step))
    return tuple(sorted(set(out)))


def manifest_of_script(script: str) -> str | None:
    """The manifest path a rendered sweep script names (the readers' fallback without a job file)."""
    prefix = f"{SHELL_PATH_VAR}="
    for line in script.splitlines():
        if line.startswith(prefix):
            try:
                words = shlex.split(line[len(prefix):])
            except ValueError:
                return None
            return words[0] if words else None
    return None


def array_of_script(script: str) -> str | None:
    """The ``#SBATCH --array=`` value of a rendered script."""
    for line in script.splitlines():
        if line.startswith("#SBATCH --array="):
            try:
                words = shlex.split(line[len("#SBATCH --array="):])
            except ValueError:
                return None
            return words[0] if words else None
        if line and not line.startswith("#"):
            break
    return None


def is_sweep_script(script: str) -> bool:
    return f"\n{SHELL_PATH_VAR}=" in script


def listing(manifest: Manifest, limit: int = 50) -> list[str]:
    """The manifest for people: one line per task (``0  lr=3e-4  seed=1``), values shown as Python literals where
    they hold anything but plain printable text; at most ``limit`` lines and a count of the rest."""
    out: list[str] = []
    width = len(str(max(0, manifest.size - 1)))
    for i, task in enumerate(manifest.tasks[:limit]):
        out.append(f"{i:>{width}}  " + "  ".join(f"{n}={_shown(v)}" for n, v in zip(manifest.names, task,
                                                                                     strict=True)))
    if manifest.size > limit:
        out.append(f"... and {manifest.size - limit} more task(s)")
    return out


def _shown(value: str) -> str:
    plain = value and value.isprintable() and not any(c.isspace() for c in value) and "'" not in value \
        and '"' not in value
    return value if plain else repr(value)
