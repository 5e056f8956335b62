"""A rank log's progress read on the cluster (``ntui.core.remote.logs.read_remote_progress``, the app's Progress tab
over ssh): through the agent's own functions (:class:`~ntui.core.remote.files.LocalFiles`) it reads what the login
node's reader reads, on real captures; a log that is not there is said as such; the entry asked of the cluster."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ntui.core.progress.read import read_progress
from ntui.core.records.history import HistoryEntry
from ntui.core.remote.files import LocalFiles
from ntui.core.remote.logs import copy_log_dir, read_remote_progress, remote_entry
from tests.support.remote_samples import RecordedFiles

DATA = Path(__file__).resolve().parents[1] / "data" / "progress"


@pytest.mark.parametrize("capture", ["transformers-5.24.0/hf-trainer.out", "tqdm-4.70.1/tqdm-long-partial.out"])
def test_the_remote_read_is_the_login_nodes(capture: str) -> None:
    path = DATA / capture
    there, here = read_remote_progress(LocalFiles(), str(path)), read_progress(path)
    assert (there.step, there.total, there.metrics) == (here.step, here.total, here.metrics)
    assert [(s.step, s.time) for s in there.samples] == [(s.step, s.time) for s in here.samples]
    assert there.step is not None


def test_a_log_not_there_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="on the cluster"):
        read_remote_progress(LocalFiles(), str(tmp_path / "nope.out"))


def test_the_entry_is_asked_of_the_cluster() -> None:
    entry = HistoryEntry(token="t", job_id="9", cluster=None, preset="p", preset_path=None, overrides=("a=1",),
                         job_name="j", launcher="torchrun", nodes=1, world_size=4, log_dir="/x", log_stem="j",
                         script="", script_path=None, created_at=1.0, submitted_at=2.0, status="submitted")
    files = RecordedFiles({"9": dataclasses.asdict(entry)})  # type: ignore[dict-item]
    assert remote_entry(files, "9") == entry
    assert remote_entry(files, "10") is None


def test_copy_log_dir_copies_the_wanted_files_of_the_entrys_directory(tmp_path: Path) -> None:
    there, here = tmp_path / "there", tmp_path / "here"
    there.mkdir()
    here.mkdir()
    (there / "j-9-gpu-n1.csv").write_text("a,b\n1,2\n")
    (there / "j-9-rank-0.out").write_text("0123456789\n")
    (there / "other.txt").write_text("no\n")
    entry = HistoryEntry(token="t", job_id="9", cluster=None, preset="p", preset_path=None, overrides=(),
                         job_name="j", launcher="torchrun", nodes=1, world_size=1, log_dir=str(there), log_stem="j",
                         script="", script_path=None, created_at=1.0, submitted_at=2.0, status="submitted")
    local = copy_log_dir(LocalFiles(), entry, lambda name: name.startswith("j-9-"), here, tail_bytes=4)
    assert local.log_dir == str(here) and local.log_stem == "j"
    assert sorted(p.name for p in here.iterdir()) == ["j-9-gpu-n1.csv", "j-9-rank-0.out"]
    assert (here / "j-9-gpu-n1.csv").read_text() == "a,b\n1,2\n"  # samples whole
    assert (here / "j-9-rank-0.out").read_text() == "789\n"  # the others their tail
    gone = copy_log_dir(LocalFiles(), entry.__class__(**{**dataclasses.asdict(entry), "overrides": (),
                                                          "log_dir": str(tmp_path / "nope")}),
                        lambda name: True, tmp_path / "here")
    assert gone.log_dir == str(here)
