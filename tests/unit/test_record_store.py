"""The job records as files (ntui.core.records.recordfiles, .index, .history): several hosts writing one state
directory at once and killed at random points, the mount-table check, the migration of the SQLite history v3,
damaged files set aside."""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ntui.core import fstype
from ntui.core.fstype import filesystem_of, is_network_fs, is_network_type, parse_mountinfo
from ntui.core.records.history import FinalRecord, GpuSummary, History, entry_from_facts
from ntui.core.records.recordfiles import HOST_ENV, parse_name, read_fact
from tests.support.waits import WAIT_BOUND_S

REPO = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------- several hosts, SIGKILL at random points

WRITER = textwrap.dedent('''
    import os, sys, time, uuid
    sys.path.insert(0, sys.argv[3])

    def say(*words):  # one write of a whole line: a kill can only cut the line off before its newline
        sys.stdout.write(" ".join(words) + "\\n")
        sys.stdout.flush()

    from ntui.core.records.history import FinalRecord, History
    host, n = sys.argv[1], int(sys.argv[2])
    h = History(__import__("pathlib").Path(os.environ["NTUI_STATE_DIR"]), warn=lambda w: say("W", w))
    shared = FinalRecord("COMPLETED", "0:0", None, None, None, 5, "nid001", "", "job")
    for i in range(n):
        token = uuid.uuid4().hex
        h.record_intent(token=token, preset="p", preset_path=None, overrides=[f"i={i}"], job_name=host,
                        launcher="srun", nodes=1, world_size=1, log_dir="/l", log_stem=host, script="#!/bin/bash\\n")
        say("intent", token)
        job = f"{abs(hash(host)) % 1000}{i:05d}"
        h.record_submitted(token, job, None, None)
        say("submitted", token, job)
        h.record_final("1", shared)  # every host resolves the same job at once
        say("final", token)
        h.entries(limit=5)  # and lists (syncs its own index) now and then
''')


def _writers(state: Path, hosts: list[str], n: int, rng: random.Random, round_no: int = 0) -> list[str]:
    """What each writer printed, each line tagged ``@host#round`` (the tag last: the fields keep their places)."""
    procs = []
    for host in hosts:
        env = dict(os.environ, NTUI_STATE_DIR=str(state), NTUI_HOSTNAME=host)
        procs.append(subprocess.Popen([sys.executable, "-c", WRITER, host, str(n), str(REPO)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    # Every writer has written its first intent before the kills' random delays start: a writer still starting
    # (an interpreter and the history's imports take seconds on a loaded machine) was killed before it wrote
    # anything, and the round tested nothing.
    first: list[str] = []
    deadline = time.monotonic() + WAIT_BOUND_S
    for p in procs:
        assert p.stdout is not None
        fd, line = p.stdout.fileno(), b""  # read from the pipe itself, byte by byte: communicate() reads it on
        while not line.endswith(b"\n"):
            while not select.select([fd], [], [], 0.1)[0]:
                assert time.monotonic() < deadline, "a writer wrote nothing"
            byte = os.read(fd, 1)
            assert byte, f"a writer ended before its first intent (exit {p.wait()})"
            line += byte
        first.append(line.decode())
    time.sleep(rng.uniform(0.3, 1.5))
    for p in procs:
        time.sleep(rng.uniform(0.0, 0.2))
        p.send_signal(signal.SIGKILL)
    out: list[str] = []
    for host, p, line in zip(hosts, procs, first, strict=True):
        stdout, _ = p.communicate(timeout=WAIT_BOUND_S)
        stdout = line + stdout
        # Only whole lines: the kill may land inside a write, leaving a fragment without its newline (and with
        # PYTHONUNBUFFERED set in the environment, inside one of a print's several writes).
        whole = stdout.split("\n")[:-1]
        out += [f"{ln} @{host}#{round_no}" for ln in whole]
    return out


def _from_files(records: Path) -> dict[str, object]:
    """The entries straight from the files, without any index."""
    facts: dict[str, list[dict[str, object]]] = {}
    for path in records.iterdir():
        parsed = parse_name(path.name)
        if parsed is not None:
            facts.setdefault(parsed.key, []).append(dict(read_fact(path, parsed.kind), _name=path.name))
    return {key: entry_from_facts(f) for key, f in facts.items()}


def test_several_hosts_writing_at_once_and_killed_lose_nothing_and_list_nothing_twice(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = History(state, warn=lambda w: None)
    first.record_intent(token="shared0000", preset="p", preset_path=None, overrides=[], job_name="shared",
                        launcher="srun", nodes=1, world_size=1, log_dir="/l", log_stem="s", script="")
    first.record_submitted("shared0000", "1", None, None)
    first.close()
    # Two final files from two hosts whatever the random kills below do: a record and Slurm's confirmation of it.
    for host, confirmed_by in (("login08", None), ("login09", "sacct")):
        with pytest.MonkeyPatch.context() as mp:  # undone whatever happens, and put back as it was, not deleted
            mp.setenv(HOST_ENV, host)
            h = History(state, warn=lambda w: None)
            rec = FinalRecord("COMPLETED", "0:0", None, None, None, 5, "nid001", "", "job", confirmed_by)
            assert (h.record_confirmation if confirmed_by else h.record_final)("1", rec)
            h.close()
    rng = random.Random(int(os.environ.get("NTUI_RELIABILITY_SEED", "21")))
    lines: list[str] = []
    for round_no in range(3):  # three rounds of four "login nodes", each killed at a random point
        lines += _writers(state, ["login01", "login02", "login03.nersc.gov", "nid004"], 200, rng, round_no)
    assert not [ln for ln in lines if ln.startswith("W ")], lines  # no writer ever saw a damaged file
    intents = {ln.split()[1] for ln in lines if ln.startswith("intent ")}
    submitted = {ln.split()[1]: ln.split()[2] for ln in lines if ln.startswith("submitted ")}
    assert len(intents) >= 8 and submitted

    reader = History(state, warn=lambda w: pytest.fail(w))
    try:
        entries = reader.entries()
        tokens = [e.token for e in entries]
        assert len(tokens) == len(set(tokens))  # none listed twice
        by_token = {e.token: e for e in entries}
        assert intents <= set(by_token)  # every intent a writer finished is there
        for token, job in submitted.items():
            assert by_token[token].job_id == job and by_token[token].status == "submitted"
        shared = reader.get("1")
        assert shared is not None and shared.final_state == "COMPLETED"  # many final files, one record
        finals = [p for p in reader.records.iterdir() if p.name.startswith("shared0000.final.")]
        assert len(finals) >= 2
        # the index equals the files: as they merge without it, and after a rebuild from scratch
        direct = {e.token: e for e in _from_files(reader.records).values() if e is not None}  # type: ignore[union-attr]
        assert {e.token: e for e in entries} == direct
        reader.rebuild_index()
        assert reader.entries() == entries
        # each host kept its own index; nothing was ever written in WAL mode here if the mount table said network
        assert {p.name for p in (state / "index").iterdir() if p.suffix == ".sqlite3"} >= {
            "login01.sqlite3", "login02.sqlite3", "login03.nersc.gov.sqlite3", "nid004.sqlite3"}
    finally:
        reader.close()


# ---------------------------------------------------------------- the mount table

MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:26 / /global/homes rw,relatime shared:5 - dvs /global/homes rw,nodwfs
31 22 0:27 / /pscratch rw shared:6 - lustre 10.1.1.1@o2ib:/scratch rw
32 22 0:28 / /global/cfs rw shared:7 - gpfs cfs rw
33 22 0:29 / /nfs/home rw shared:8 - nfs4 server:/home rw,vers=4.2
34 22 0:30 / /old/home rw shared:9 - nfs server:/old rw,vers=3
35 22 0:31 / /mnt/remote rw,nosuid shared:10 - fuse.sshfs user@host:/ rw
36 22 0:32 / /tmp rw shared:11 - tmpfs tmpfs rw
37 30 0:33 / /global/homes/a/alice/local\\040disk rw shared:12 - xfs /dev/sdb1 rw
garbage line
"""


@pytest.mark.parametrize(("path", "kind", "network"), [
    ("/global/homes/a/alice/.local/state/ntui", "dvs", True),
    ("/pscratch/sd/a/alice", "lustre", True),
    ("/global/cfs/cdirs/m42", "gpfs", True),
    ("/nfs/home/alice", "nfs4", True),
    ("/old/home/alice", "nfs", True),
    ("/mnt/remote/x", "fuse.sshfs", True),
    ("/tmp/ntui", "tmpfs", False),
    ("/var/lib", "ext4", False),
    ("/global/homes/a/alice/local disk/state", "xfs", False),  # a local mount inside a network one, escaped name
])
def test_the_mount_table_says_which_filesystems_are_shared(path: str, kind: str, network: bool) -> None:
    mount = filesystem_of(path, MOUNTINFO)
    assert mount is not None and mount.fstype == kind
    assert is_network_fs(path, MOUNTINFO) is network
    assert is_network_type(kind) is network


def test_an_unreadable_mount_table_counts_as_network() -> None:
    assert is_network_fs("/anything", "") is True  # no mount found: the unsafe guess is never made
    assert len(parse_mountinfo(MOUNTINFO)) == 9


@pytest.mark.parametrize("kind", ["nfs", "nfs4", "gpfs", "lustre", "dvs", "fuse.gcsfuse", "fuse"])
def test_wal_is_never_used_on_a_network_filesystem(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(f"22 1 8:1 / / rw - ext4 /dev/sda1 rw\n40 22 0:40 / {tmp_path} rw - {kind} srv:/x rw\n")
    monkeypatch.setattr(fstype, "MOUNTINFO", str(table))
    h = History(tmp_path / "state")
    try:
        assert h.network and h.index.journal_mode == "delete"
        h.record_intent(token="t1", preset="p", preset_path=None, overrides=[], job_name="j", launcher="srun",
                        nodes=1, world_size=1, log_dir="/l", log_stem="j", script="")
        assert h.has_token("t1")
        assert not list((tmp_path / "state" / "index").glob("*-wal"))
        assert not list((tmp_path / "state" / "index").glob("*-shm"))
    finally:
        h.close()
    table.write_text(f"22 1 8:1 / / rw - ext4 /dev/sda1 rw\n40 22 0:40 / {tmp_path} rw - xfs /dev/sdb rw\n")
    local = History(tmp_path / "state2")
    try:
        assert not local.network and local.index.journal_mode == "wal"
    finally:
        local.close()


def test_ntui_state_dir_overrides_the_state_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NTUI_STATE_DIR", str(tmp_path / "elsewhere"))
    h = History()
    try:
        assert h.root == tmp_path / "elsewhere" and (tmp_path / "elsewhere" / "records").is_dir()
    finally:
        h.close()


# ---------------------------------------------------------------- the SQLite history of schema 3

V3_SCHEMA = """
CREATE TABLE submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, token TEXT NOT NULL UNIQUE, job_id TEXT, cluster TEXT,
    preset TEXT NOT NULL, preset_path TEXT, overrides TEXT NOT NULL, job_name TEXT NOT NULL, launcher TEXT NOT NULL,
    nodes INTEGER NOT NULL, world_size INTEGER NOT NULL, log_dir TEXT NOT NULL, log_stem TEXT NOT NULL,
    script TEXT NOT NULL, script_path TEXT, created_at REAL NOT NULL, submitted_at REAL,
    status TEXT NOT NULL DEFAULT 'intent', final_state TEXT, exit_code TEXT, reason TEXT, start_time TEXT,
    end_time TEXT, elapsed_s INTEGER, node_list TEXT, verdict TEXT, record_source TEXT, resolved_at REAL,
    resubmit_of TEXT, gpu_util_mean REAL, gpu_idle_fraction REAL, gpu_mem_peak_fraction REAL, gpu_count INTEGER,
    gpu_energy_wh REAL, gpu_findings INTEGER, gpu_finding TEXT
);
PRAGMA user_version=3;
"""


def _v3_file(path: Path) -> list[tuple[object, ...]]:
    rows = [
        ("a" * 32, "101", "perlmutter", "perlmutter-torchrun", "/p/x.yaml", '["sbatch.nodes=2"]', "train", "torchrun",
         2, 8, "/l", "train", "#!/bin/bash\n#SBATCH --time=01:00:00\n", "/l/train-101.sbatch", 1000.0, 1001.0,
         "submitted", "TIMEOUT", "0:0", None, "2026-11-30T09:00:00", "2026-11-30T10:00:30", 3630, "nid[001-002]",
         "time limit", "sacct", 5000.0, None, 37.5, 0.25, 0.5, 8, 12.5, 2, "GPU 3 idle"),
        ("b" * 32, "102", None, "local-srun", None, "[]", "prep", "srun", 1, 2, "/l", "prep", "#!/bin/bash\n",
         None, 2000.0, 2001.0, "submitted", None, None, None, None, None, None, None, None, None, None, "101",
         None, None, None, None, None, None, None),
        ("c" * 32, None, None, "local-srun", None, "[]", "lost", "srun", 1, 2, "/l", "lost", "#!/bin/bash\n",
         None, 3000.0, None, "intent", *([None] * 18)),
        ("recovered-104", "104", None, "?", None, "[]", "found", "?", 0, 0, "/l", "found", "", None, 4000.0,
         4000.0, "recovered", *([None] * 18)),
    ]
    with sqlite3.connect(path) as conn:
        conn.executescript(V3_SCHEMA)
        conn.executemany(f"INSERT INTO submissions (token, job_id, cluster, preset, preset_path, overrides, job_name,"
                         f" launcher, nodes, world_size, log_dir, log_stem, script, script_path, created_at,"
                         f" submitted_at, status, final_state, exit_code, reason, start_time, end_time, elapsed_s,"
                         f" node_list, verdict, record_source, resolved_at, resubmit_of, gpu_util_mean,"
                         f" gpu_idle_fraction, gpu_mem_peak_fraction, gpu_count, gpu_energy_wh, gpu_findings,"
                         f" gpu_finding) VALUES ({','.join('?' * 35)})", rows)
    return rows


def test_a_v3_history_migrates_with_every_entry_kept_once(tmp_path: Path) -> None:
    rows = _v3_file(tmp_path / "history.sqlite3")
    h = History(tmp_path / "history.sqlite3")
    try:
        entries = {e.token: e for e in h.entries()}
        assert set(entries) == {r[0] for r in rows}
        t = entries["a" * 32]
        assert (t.job_id, t.cluster, t.preset_path, t.overrides, t.world_size, t.script_path, t.submitted_at) == (
            "101", "perlmutter", "/p/x.yaml", ("sbatch.nodes=2",), 8, "/l/train-101.sbatch", 1001.0)
        assert (t.final_state, t.exit_code, t.elapsed_s, t.node_list, t.verdict, t.record_source, t.resolved_at) == (
            "TIMEOUT", "0:0", 3630, "nid[001-002]", "time limit", "sacct", 5000.0)
        assert t.gpu == GpuSummary(37.5, 0.25, 0.5, 8, 12.5, 2, "GPU 3 idle")
        assert entries["b" * 32].resubmit_of == "101" and not entries["b" * 32].resolved
        assert [e.token for e in h.intents()] == ["c" * 32]
        assert entries["recovered-104"].status == "recovered" and h.get("104") is not None
        assert [e.job_id for e in h.unresolved()] == ["102", "104"]
        assert h.record_final("102", FinalRecord("COMPLETED", "0:0", None, None, None, 1, "nid001", "", "job"))
    finally:
        h.close()
    names = sorted(p.name for p in (tmp_path / "records").iterdir())
    assert len([n for n in names if ".v3." in n]) == 4
    again = History(tmp_path / "history.sqlite3")  # once: the second open adds nothing
    try:
        assert sorted(p.name for p in (tmp_path / "records").iterdir()) == names
        assert again.get("102").final_state == "COMPLETED"  # type: ignore[union-attr]
    finally:
        again.close()


# ---------------------------------------------------------------- damaged files


def test_damaged_files_are_set_aside_with_one_warning_each_and_the_rest_stays(tmp_path: Path) -> None:
    h = History(tmp_path, warn=lambda w: None)
    h.record_intent(token="good", preset="p", preset_path=None, overrides=[], job_name="j", launcher="srun",
                    nodes=1, world_size=1, log_dir="/l", log_stem="j", script="")
    h.record_submitted("good", "7", None, None)
    h.close()
    records = tmp_path / "records"
    (records / "cut.intent.host-1-1.json").write_text('{"v":1,"kind":"intent","token":"cut","pre')
    (records / "junk.final.host-1-2.json").write_bytes(b"\x00\xff garbage")
    (records / "typed.submitted.host-1-3.json").write_text(
        json.dumps({"v": 1, "kind": "submitted", "token": "typed", "job_id": 12, "submitted_at": "now"}))
    (records / "README").write_text("not a record file: ignored")
    said: list[str] = []
    h = History(tmp_path, warn=said.append)
    try:
        assert len(said) == 3 and all("damaged" in w and "moved to" in w for w in said)
        for name in ("cut.intent.host-1-1.json", "junk.final.host-1-2.json", "typed.submitted.host-1-3.json"):
            assert any(name in w for w in said)
            assert not (records / name).exists()
            assert list((tmp_path / "damaged").glob(f"{name}.damaged-*"))
        assert [e.job_id for e in h.entries()] == ["7"]
        h.record_intent(token="next", preset="p", preset_path=None, overrides=[], job_name="j", launcher="srun",
                        nodes=1, world_size=1, log_dir="/l", log_stem="j", script="")  # a submission goes on
        assert h.has_token("next")
    finally:
        h.close()
    quiet: list[str] = []
    History(tmp_path, warn=quiet.append).close()
    assert quiet == []  # warned once: the files are gone from the records


def test_a_damaged_old_database_and_a_damaged_index_break_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from ntui import cli

    state = tmp_path / "state"
    state.mkdir()
    (state / "history.sqlite3").write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    monkeypatch.setenv("NTUI_STATE_DIR", str(state))
    assert cli.run(["history", "--no-resolve"]) == 0
    err = capsys.readouterr().err
    assert "history.sqlite3 cannot be read" in err and "moved to" in err and "Traceback" not in err
    h = History(state, warn=lambda w: None)
    h.record_intent(token="x", preset="p", preset_path=None, overrides=[], job_name="j", launcher="srun",
                    nodes=1, world_size=1, log_dir="/l", log_stem="j", script="")
    index = h.index_path
    h.close()
    index.write_bytes(b"not sqlite at all" * 100)
    for side in index.parent.glob(index.name + "-*"):
        side.unlink()
    said: list[str] = []
    again = History(state, warn=said.append)
    try:
        assert again.has_token("x") and any("index" in w and "rebuilt" in w for w in said)
    finally:
        again.close()
