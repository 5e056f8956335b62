"""One history, two clusters that number their jobs alike (a home shared by two machines, job ids that restarted):
every record keeps its cluster, a job id resolves to this cluster's job first, and nothing crashes on the
duplicates, in the core, the CLI and the jobs view's recent list."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ntui import cli
from ntui.core.records.history import FinalRecord, History
from ntui.core.records.record import recent_jobs
from ntui.core.slurm.scontrol import cluster_name, parse_cluster_name
from ntui.ui.widgets.recent_jobs import RecentJobsTable


def _job(h: History, token: str, job_id: str, cluster: str | None, log_dir: Path, *, when: float = 1000.0) -> None:
    log_dir.mkdir(parents=True, exist_ok=True)
    h.record_intent(token=token, preset="p", preset_path=None, overrides=[], job_name=f"train-{token}",
                    launcher="srun", nodes=1, world_size=1, log_dir=str(log_dir), log_stem="train",
                    script="#!/bin/bash\n", created_at=when)
    h.record_submitted(token, job_id, cluster, None, when=when)
    (log_dir / f"train-{job_id}.out").write_text(f"the batch log of {token}\n")


@pytest.fixture
def two(tmp_path: Path) -> Path:
    """A state dir with job 4 of cluster alpha (older), job 4 of beta (newer), and job 4 of an unknown cluster
    (written before records had one)."""
    state = tmp_path / "state"
    h = History(state, warn=lambda w: None)
    try:
        _job(h, "a4", "4", "alpha", tmp_path / "alpha", when=1000)
        _job(h, "b4", "4", "beta", tmp_path / "beta", when=2000)
        _job(h, "b5", "5", "beta", tmp_path / "beta", when=2100)
    finally:
        h.close()
    return state


def test_a_job_id_resolves_to_this_clusters_job_first(two: Path) -> None:
    for current, token in (("alpha", "a4"), ("beta", "b4"), ("ALPHA", "a4")):
        with History(two, cluster=current) as h:
            entry = h.get("4")
            assert entry is not None and entry.token == token, current
            assert h.others(entry) == sorted({"alpha", "beta"} - {entry.cluster})
    with History(two, cluster="gamma") as h:  # neither is ours: the newest, and asking for gamma's finds none
        got = h.get("4")
        assert got is not None and got.token == "b4"
        assert h.get("4", "gamma") is None
        assert h.get("4", "alpha") is not None and h.get("4", "alpha").token == "a4"  # type: ignore[union-attr]


def test_the_cluster_is_looked_up_only_when_an_id_is_on_several_clusters(two: Path) -> None:
    asked: list[int] = []

    def lookup() -> str | None:
        asked.append(1)
        return "alpha"

    with History(two, cluster=lookup) as h:
        assert h.get("5") is not None and asked == []  # one cluster has job 5: nothing to look up
        assert h.get("4").token == "a4" and h.get("4").token == "a4" and asked == [1]  # type: ignore[union-attr]


def test_a_record_of_an_unknown_cluster_is_kept_and_preferred_over_another_clusters(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with History(state, warn=lambda w: None) as h:
        _job(h, "old", "4", None, tmp_path / "old", when=500)
        _job(h, "b4", "4", "beta", tmp_path / "beta", when=2000)
    with History(state, cluster="alpha") as h:
        assert h.get("4").token == "old"  # type: ignore[union-attr]
        assert len(h.matches("4")) == 2


def test_recent_jobs_list_both_and_the_table_keys_them_apart(two: Path) -> None:
    with History(two, cluster="beta") as h:
        h.record_final("4", FinalRecord("COMPLETED", "0:0", None, None, None, 10, "nid001", "", "sacct"))
        loaded = recent_jobs(h, None, days=1e6, now=3000)
    assert sorted(j.job_id for j in loaded.jobs) == ["4", "4", "5"]
    assert len({j.key for j in loaded.jobs}) == 3
    finals = {j.entry.token: j.state for j in loaded.jobs if j.entry is not None}
    assert finals == {"a4": "", "b4": "COMPLETED", "b5": ""}  # beta's job 4 got the record, not alpha's


async def test_the_recent_list_shows_two_clusters_job_4_without_a_crash(two: Path) -> None:
    from textual.app import App, ComposeResult

    with History(two) as h:
        loaded = recent_jobs(h, None, days=1e6, now=3000)

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield RecentJobsTable(id="recent")

    app = One()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(RecentJobsTable)
        table.show_jobs(loaded, live=set(), now=3000, days=1e6)
        await pilot.pause()
        assert table.row_count == 3
        assert set(table.jobs) == {"5", "record:a4", "record:b4"}
        ids = sorted(str(table.get_row(k)[0]) for k in table.jobs)
        assert ids == ["4@alpha", "4@beta", "5"]
        table.show_jobs(loaded, live=set(), now=3000, days=1e6)  # again: the same keys, no DuplicateKey
        assert table.row_count == 3


def _slurm_conf(tmp_path: Path, name: str) -> Path:
    conf = tmp_path / f"{name}.conf"
    conf.write_text(f"# a site's slurm.conf\nSlurmctldHost=ctl\n  clustername = {name.upper()}  # comment\n")
    return conf


def test_the_cluster_name_comes_from_the_clients_slurm_conf(tmp_path: Path) -> None:
    assert parse_cluster_name("ClusterName=Perlmutter\n") == "perlmutter"
    assert parse_cluster_name("#ClusterName=x\n") is None
    assert cluster_name(env={"SLURM_CONF": str(_slurm_conf(tmp_path, "beta"))}) == "beta"
    assert cluster_name(env={"SLURM_CONF": str(tmp_path / "missing.conf")}) is None


def test_the_cli_picks_this_clusters_job_and_names_the_other(two: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NTUI_STATE_DIR", str(two))
    monkeypatch.setenv("SLURM_CONF", str(_slurm_conf(tmp_path, "alpha")))
    assert cli.run(["logs", "4", "-n", "5"]) == 0
    out, err = capsys.readouterr()
    assert "the batch log of a4" in out and "of cluster alpha" in err and "job 4 of beta" in err
    assert cli.run(["logs", "4", "-n", "5", "--cluster", "beta"]) == 0
    out, err = capsys.readouterr()
    assert "the batch log of b4" in out and "of alpha" in err
    assert cli.run(["history", "--no-resolve"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert ids == ["5", "4@beta", "4@alpha"]
    monkeypatch.setenv("PATH", str(tmp_path / "no-slurm"))  # not ntui's: Slurm would be asked, and is not here
    assert cli.run(["logs", "4", "--cluster", "gamma"]) != 0
    assert "no job 4 of cluster gamma" in capsys.readouterr().err


def test_an_index_damaged_in_its_middle_is_found_at_a_query_and_rebuilt(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    with History(state, warn=lambda w: None) as h:
        for n in range(300):
            _job(h, f"t{n}", str(n + 1), "alpha", tmp_path / "logs", when=1000 + n)
        index = h.index_path
    con = sqlite3.connect(index)
    try:
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        roots = [r[0] for r in con.execute("SELECT rootpage FROM sqlite_master WHERE tbl_name = 'entries'")]
    finally:
        con.close()
    with open(index, "r+b") as f:  # the entries' pages only: the files' table (what a sync reads) stays whole
        for root in roots:
            f.seek((root - 1) * page_size)
            f.write(b"\xa5" * page_size)
    con = sqlite3.connect(index)
    try:
        assert len(con.execute("SELECT name FROM files").fetchall()) == 600  # a sync passes ...
        with pytest.raises(sqlite3.DatabaseError):  # ... and the first query of the entries meets the damage
            con.execute("SELECT doc FROM entries ORDER BY created DESC").fetchall()
    finally:
        con.close()
    monkeypatch.setenv("NTUI_STATE_DIR", str(state))
    assert cli.run(["history", "--no-resolve", "-n", "500"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "index" in err and "rebuilt" in err
    rows = out.splitlines()[1:]
    assert len(rows) == 300 and rows[0].split()[0] == "300" and rows[-1].split()[0] == "1"
    assert list((state / "damaged").iterdir())
