"""``ntui agent --stdio`` without ssh: the protocol's lines, the handshake, bounded reads from offsets, follows,
refusals in words, and that no value it is sent is ever run."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from ntui.core.remote import agent
from ntui.core.remote.files import FileRefused, LocalFiles
from ntui.core.remote.logs import Mirror, RemoteTail, entry_from_dict
from ntui.core.remote.protocol import (
    MAX_CHUNK,
    MAX_REQUEST,
    MAX_SWEEP_PART,
    VERSION,
    Chunk,
    ProtocolError,
    decode_line,
)

ROOT = Path(__file__).resolve().parents[2]


def _serve(*requests: dict[str, object] | bytes) -> list[dict[str, object]]:
    raw = b"".join(r if isinstance(r, bytes) else json.dumps(r).encode() + b"\n" for r in requests)
    out = io.BytesIO()
    assert agent.serve(io.BytesIO(raw), out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_handshake_names_the_version_and_refuses_another(tmp_path: Path) -> None:
    ok, other = _serve({"id": 1, "op": "hello", "version": VERSION}, {"id": 2, "op": "hello", "version": VERSION + 1})
    assert ok["ok"] is True and ok["version"] == VERSION and ok["id"] == 1 and isinstance(ok["pid"], int)
    assert other["ok"] is False and other["error"]["kind"] == "version"  # type: ignore[index]


def test_reads_are_bounded_and_start_at_their_offset(tmp_path: Path) -> None:
    log = tmp_path / "a.out"
    data = bytes(range(256)) * (MAX_CHUNK // 128)  # two chunks' worth, every byte value
    log.write_bytes(data)
    first, second, end, tail = _serve(
        {"id": 1, "op": "read", "path": str(log), "offset": 0, "limit": 10 * MAX_CHUNK},
        {"id": 2, "op": "read", "path": str(log), "offset": MAX_CHUNK, "limit": 10 * MAX_CHUNK},
        {"id": 3, "op": "read", "path": str(log), "offset": len(data) + 5},
        {"id": 4, "op": "read", "path": str(log), "offset": 7, "from_end": True})
    got = [Chunk.from_dict(a) for a in (first, second, end, tail)]
    assert got[0].data == data[:MAX_CHUNK] and got[0].size == len(data)
    assert got[1].data == data[MAX_CHUNK:] and got[1].end == len(data)
    assert got[2].data == b"" and got[2].size == len(data)  # past the end: nothing, and the size says it was cut
    assert (got[3].offset, got[3].data) == (len(data) - 7, data[-7:])
    assert got[0].inode == log.stat().st_ino


def test_refusals_and_bad_lines_are_answered_in_words_and_the_agent_goes_on(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("x")
    secret.chmod(0)
    answers = _serve(b"not json\n", b"[1]\n", {"id": 3, "op": "rm", "path": "/"},
                     {"id": 4, "op": "read", "path": str(tmp_path)}, {"id": 5, "op": "read", "path": 7},
                     {"id": 6, "op": "read", "path": "/x", "offset": -1},
                     {"id": 7, "op": "stat", "path": "a\0b"}, b"x" * (MAX_REQUEST + 10) + b"\n",
                     {"id": 8, "op": "stat", "path": str(secret)})
    kinds = [a["error"]["kind"] if not a["ok"] else "ok" for a in answers]  # type: ignore[index]
    assert kinds == ["bad-request", "bad-request", "bad-request", "not-a-file", "bad-request", "bad-request",
                     "bad-request", "bad-request", "ok"]
    assert "unknown op 'rm'" in answers[2]["error"]["message"]  # type: ignore[index]
    if os.geteuid() != 0:  # root reads every file
        (refused,) = _serve({"id": 1, "op": "cat", "path": str(secret)})
        assert refused["error"]["kind"] == "denied"  # type: ignore[index]


def test_a_hostile_path_is_only_ever_a_file_name(tmp_path: Path) -> None:
    marker = Path("/tmp") / f"ntui-pwned-{uuid.uuid4().hex}"
    hostile = [f"; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", f"x\ntouch {marker}",
               f"'; touch {marker}; '", f"| touch {marker}"]
    for name in hostile:
        for op in ("stat", "read", "cat", "list", "follow"):
            (answer,) = _serve({"id": 1, "op": op, "path": name, "wait": 0})
            assert not answer["ok"] or answer.get("exists") is False, (op, name, answer)
    # a file really named so is read as that file
    weird = tmp_path / f"a; touch {marker.name} $(touch {marker.name})"
    weird.write_text("hello\n")
    (answer,) = _serve({"id": 1, "op": "cat", "path": str(weird)})
    assert base64.b64decode(answer["data"]) == b"hello\n"  # type: ignore[arg-type]
    assert not marker.exists()


def test_a_follow_answers_when_the_file_grows_and_after_its_wait_when_not(tmp_path: Path) -> None:
    log = tmp_path / "grow.out"
    log.write_bytes(b"one\n")
    files = LocalFiles()
    quiet = files.follow(str(log), 4, inode=log.stat().st_ino, wait=0.3)
    assert quiet.exists and quiet.data == b"" and quiet.size == 4

    def append() -> None:
        time.sleep(0.3)
        with open(log, "ab") as f:
            f.write(b"two\n")

    t = threading.Thread(target=append)
    t.start()
    grown = files.follow(str(log), 4, inode=log.stat().st_ino, wait=20)
    t.join()
    assert grown.data == b"two\n" and grown.offset == 4
    log.write_bytes(b"x\n")  # cut
    cut = files.follow(str(log), 8, inode=log.stat().st_ino, wait=20)
    assert cut.size == 2 and cut.data == b""


def test_the_tail_prints_whole_lines_and_says_a_cut_or_a_replaced_file(tmp_path: Path) -> None:
    log = tmp_path / "t.out"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(50)) + b"half")
    tail = RemoteTail(LocalFiles(), str(log), lines=3)
    first = tail.start()
    assert first.lines == ["line 47", "line 48", "line 49"] and tail.partial == "half"
    with open(log, "ab") as f:
        f.write(b" done\nnext\n")
    assert tail.poll().lines == ["half done", "next"]
    log.write_bytes(b"a\n")
    cut = tail.poll()
    assert (cut.reset, cut.lines) == ("truncated", ["a"])
    other = tmp_path / "other"
    other.write_bytes(b"b\nc\n")
    os.replace(other, log)
    replaced = tail.poll()
    assert (replaced.reset, replaced.lines) == ("replaced", ["b", "c"])


def test_a_small_start_window_keeps_only_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "big.out"
    log.write_bytes(b"".join(b"%06d\n" % i for i in range(100_000)))
    tail = RemoteTail(LocalFiles(), str(log), lines=1000, start_bytes=70)
    got = tail.start().lines
    assert got == [f"{i:06d}" for i in range(100_000 - len(got), 100_000)] and 0 < len(got) <= 10


def test_the_mirror_copies_what_a_file_gains_and_starts_over_when_it_is_cut(tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "job-1.out").write_bytes(b"a\n" * 200_000)
    local = tmp_path / "local"
    local.mkdir()
    mirror = Mirror(LocalFiles(), local)
    (copy,) = mirror.add([str(remote / "job-1.out")])
    assert mirror.sync() == 400_000 and copy.read_bytes() == (remote / "job-1.out").read_bytes()
    assert copy.stat().st_mtime == (remote / "job-1.out").stat().st_mtime
    with open(remote / "job-1.out", "ab") as f:
        f.write(b"end\n")
    assert mirror.sync() == 4 and copy.read_bytes().endswith(b"a\nend\n")
    (remote / "job-1.out").write_bytes(b"new\n")
    mirror.sync()
    assert copy.read_bytes() == b"new\n"
    assert mirror.sync() == 0


def test_refusals_reach_the_caller_as_file_refused(tmp_path: Path) -> None:
    with pytest.raises(FileRefused) as caught:
        LocalFiles().read(str(tmp_path), 0)
    assert caught.value.kind == "not-a-file"


def test_a_history_entry_crosses_as_its_fields() -> None:
    from dataclasses import asdict

    from ntui.core.records.history import GpuSummary, HistoryEntry

    entry = HistoryEntry(token="t", job_id="12", cluster="c", preset="p", preset_path=None, overrides=("a=1",),
                         job_name="n", launcher="torchrun", nodes=2, world_size=8, log_dir="/d", log_stem="n",
                         script="#!/bin/bash\n", script_path=None, created_at=1.0, submitted_at=2.0,
                         status="submitted", gpu=GpuSummary(0.5, 0.1, 0.9, 8, None, 0, ""))
    sent = json.loads(json.dumps({**asdict(entry), "added_later": 1}))
    assert entry_from_dict(sent) == entry
    del sent["token"]
    assert entry_from_dict(sent) is None


def test_the_agent_command_speaks_on_its_standard_streams(tmp_path: Path) -> None:
    log = tmp_path / "x.out"
    log.write_text("hi\n")
    lines = [{"id": 1, "op": "hello", "version": VERSION}, {"id": 2, "op": "cat", "path": str(log)},
             {"id": 3, "op": "bye"}, {"id": 4, "op": "stat", "path": str(log)}]
    proc = subprocess.run([sys.executable, "-m", "ntui", "agent", "--stdio"], cwd=ROOT, capture_output=True,
                          timeout=120, input=b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    assert proc.returncode == 0, proc.stderr
    answers = [decode_line(x) for x in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3]  # nothing after bye
    assert base64.b64decode(answers[1]["data"]) == b"hi\n"
    with pytest.raises(ProtocolError):
        decode_line(b"{")


def test_a_submissions_facts_are_written_to_the_history_there_and_read_back(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NTUI_STATE_DIR", str(tmp_path / "state"))
    token = "0123456789abcdef0123456789abcdef"
    intent = {"fact": "intent", "token": token, "preset": "train", "preset_path": None, "overrides": ["a=1"],
              "job_name": "train", "launcher": "torchrun", "nodes": 2, "world_size": 8, "log_dir": "/l",
              "log_stem": "train", "script": "#!/bin/bash\n"}
    answers = _serve({"id": 1, "op": "record", **intent},
                     {"id": 2, "op": "record", "fact": "submitted", "token": token, "job_id": "31", "cluster": "c"},
                     {"id": 3, "op": "job", "job_id": "31"},
                     {"id": 4, "op": "record", "fact": "intent", "token": "../../x"},
                     {"id": 5, "op": "record", "fact": "erase", "token": token})
    assert [a["ok"] for a in answers] == [True, True, True, False, False]
    entry = entry_from_dict(answers[2]["job"]["entry"])  # type: ignore[index]
    assert entry is not None and (entry.job_id, entry.cluster, entry.status, entry.world_size, entry.overrides) == (
        "31", "c", "submitted", 8, ("a=1",))
    assert not (tmp_path / "x").exists() and not list(tmp_path.glob("**/*erase*"))


# ---------------------------------------------------------------- a sweep's manifest, sent in parts


def _manifest(seed: str) -> tuple[bytes, str]:
    from ntui.core.jobfiles.manifest import Manifest, digest_of, encode_manifest

    data = encode_manifest(Manifest(("lr", "note"), tuple((f"{i}e-4", f"{seed} {i:06d}") for i in range(4000)), ""))
    assert len(data) > 2 * MAX_SWEEP_PART  # three parts at least
    return data, digest_of(data)


def _part(log_dir: Path, data: bytes, digest: str, offset: int, *, total: int | None = None) -> dict[str, object]:
    part = data[offset:offset + MAX_SWEEP_PART]
    return agent.sweep_file({"part": "manifest", "log_dir": str(log_dir), "log_stem": "train", "digest": digest,
                             "offset": offset, "total": total or len(data), "data": base64.b64encode(part).decode()})


def _send(log_dir: Path, data: bytes, digest: str) -> dict[str, object]:
    """Every part, in order: the last answer."""
    answers = [_part(log_dir, data, digest, offset) for offset in range(0, len(data), MAX_SWEEP_PART)]
    return answers[-1]


def _hidden(log_dir: Path) -> list[str]:
    return sorted(p.name for p in log_dir.iterdir() if p.name.startswith("."))


def test_a_cut_manifest_uploads_staging_file_goes_with_the_next_upload(tmp_path: Path) -> None:
    """The link dropped after the first part: the hidden staging file stays while it may still be an upload's, and
    the next upload of the stem removes it once it is stale (never another stem's, never a file not ntui's)."""
    log_dir = tmp_path / "logs"
    cut, cut_digest = _manifest("cut")
    assert _part(log_dir, cut, cut_digest, 0)["done"] is False  # ... and no second part came
    staging = log_dir / f".train-sweep-{cut_digest}.manifest.part"
    assert _hidden(log_dir) == [staging.name]
    other_stem = log_dir / f".eval-sweep-{cut_digest}.manifest.part"
    other_stem.write_bytes(b"another stem's upload")
    (log_dir / ".train-notes.part").write_bytes(b"not a staging file")

    fresh, digest = _manifest("fresh")
    assert _part(log_dir, fresh, digest, 0)["done"] is False  # written to a moment ago: maybe an upload's, kept
    assert staging.exists()
    old = time.time() - agent.STAGING_STALE_S - 1
    for p in (staging, other_stem):
        os.utime(p, (old, old))
    assert _send(log_dir, fresh, digest)["done"] is True  # the next run: sent again from 0, to its end
    assert not staging.exists()  # the cut upload's, stale: gone
    assert _hidden(log_dir) == [".eval-sweep-" + cut_digest + ".manifest.part", ".train-notes.part"]
    assert [p.name for p in log_dir.iterdir() if not p.name.startswith(".")] == [f"train-sweep-{digest}.manifest"]
    assert (log_dir / f"train-sweep-{digest}.manifest").read_bytes() == fresh


def test_a_manifest_upload_that_fails_there_leaves_no_staging_file(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    data, digest = _manifest("x")
    assert _part(log_dir, data, digest, 0)["done"] is False
    with pytest.raises(agent.AgentError, match="send from 0 again"):  # a part past what the staging file holds
        _part(log_dir, data, digest, 2 * MAX_SWEEP_PART)
    assert _hidden(log_dir) == []
    bad = bytes(data[:-1]) + bytes([data[-1] ^ 1])  # the last part's bytes are not the digest's
    with pytest.raises(agent.AgentError, match="not the"):
        _send(log_dir, bad, digest)
    assert list(log_dir.iterdir()) == []
