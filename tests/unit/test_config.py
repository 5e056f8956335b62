"""One settings object: the config file and the environment, read by one loader for the CLI and the app."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.config import (
    BIN_DIR_ENV,
    TIMEOUT_ENV,
    Settings,
    SettingsRunner,
    SlurmSettings,
    load_settings,
    slurm_runner,
)
from ntui.core.slurm.common import DEFAULT_TIMEOUT, SUBMIT_TIMEOUT
from ntui.core.slurm.runner import SubprocessRunner, TimeoutRunner
from tests.support.fakes import FakeRunner, result


def _cfg(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_defaults_are_the_slurm_clients_defaults(tmp_path: Path) -> None:
    settings, problems = load_settings(tmp_path / "missing.yaml", environ={})
    assert problems == []
    assert settings == Settings()
    assert (settings.slurm.timeout, settings.slurm.submit_timeout) == (DEFAULT_TIMEOUT, SUBMIT_TIMEOUT) == (15.0, 60.0)


def test_file_keys(tmp_path: Path) -> None:
    path = _cfg(tmp_path, "slurm:\n  timeout: 7\n  submit-timeout: 90\n  bin-dir: /opt/slurm/bin\n")
    settings, problems = load_settings(path, environ={})
    assert problems == []
    assert settings.slurm == SlurmSettings(timeout=7.0, submit_timeout=90.0, bin_dir="/opt/slurm/bin")


def test_recent_days_defaults_to_the_records_default_and_is_read_from_the_queue_section(tmp_path: Path) -> None:
    from ntui.core.records.record import DEFAULT_RECENT_DAYS

    assert Settings().queue.recent_days == DEFAULT_RECENT_DAYS == 7
    settings, problems = load_settings(_cfg(tmp_path, "queue:\n  recent-days: 2.5\n"), environ={})
    assert problems == [] and settings.queue.recent_days == 2.5
    settings, problems = load_settings(_cfg(tmp_path, "queue:\n  recent-days: 0\n"), environ={})
    assert settings.queue.recent_days == 7 and [p.field for p in problems] == ["queue.recent-days"]


def test_quiet_after_defaults_to_the_quiet_floor_and_is_read_from_the_progress_section(tmp_path: Path) -> None:
    from ntui.core.progress.quiet import QUIET_FLOOR_S

    assert Settings().progress.quiet_after == QUIET_FLOOR_S == 300
    settings, problems = load_settings(_cfg(tmp_path, "progress:\n  quiet-after: 45\n"), environ={})
    assert problems == [] and settings.progress.quiet_after == 45.0
    settings, problems = load_settings(_cfg(tmp_path, "progress:\n  quiet-after: soon\n"), environ={})
    assert settings.progress.quiet_after == 300 and [p.field for p in problems] == ["progress.quiet-after"]


def test_env_overrides_the_file(tmp_path: Path) -> None:
    path = _cfg(tmp_path, "slurm:\n  timeout: 7\n  submit-timeout: 90\nqueue:\n  idle-interval: 30\n")
    settings, problems = load_settings(path, environ={TIMEOUT_ENV: " 2.5 "})
    assert problems == []
    assert (settings.slurm.timeout, settings.slurm.submit_timeout) == (2.5, 2.5)
    assert settings.queue.idle_interval == 30.0  # the rest of the file still counts


@pytest.mark.parametrize("value", ["soon", "0", "-3", "1e9", "nan"])
def test_bad_env_value_is_a_problem_and_changes_nothing(tmp_path: Path, value: str) -> None:
    path = _cfg(tmp_path, "slurm:\n  timeout: 7\n")
    settings, problems = load_settings(path, environ={TIMEOUT_ENV: value})
    assert settings.slurm.timeout == 7.0 and settings.slurm.submit_timeout == 60.0
    assert [str(p) for p in problems] == [f"environment: ignoring {TIMEOUT_ENV}={value!r} (expected seconds > 0)"]


def test_env_applies_also_when_the_file_is_broken(tmp_path: Path) -> None:
    settings, problems = load_settings(_cfg(tmp_path, "slurm: [unclosed\n"), environ={TIMEOUT_ENV: "4"})
    assert settings.slurm.timeout == 4.0
    assert len(problems) == 1 and "ignored" in problems[0].message


def test_env_is_read_from_the_process_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIMEOUT_ENV, "3")
    assert load_settings(tmp_path / "missing.yaml")[0].slurm.timeout == 3.0


def test_slurm_runner_applies_the_timeouts_and_bin_dir() -> None:
    runner = slurm_runner(SlurmSettings(timeout=5.0, submit_timeout=50.0, bin_dir="/opt/slurm/bin"))
    assert isinstance(runner, TimeoutRunner) and isinstance(runner.inner, SubprocessRunner)
    assert str(runner.inner.slurm_bin_dir) == "/opt/slurm/bin"
    fake = FakeRunner(default=result())
    runner.inner = fake
    for argv in (["squeue", "--me"], ["/usr/bin/sbatch", "--test-only", "j.sh"], ["scancel", "5"]):
        runner.run(argv, timeout=1.0)
    assert [c.timeout for c in fake.history] == [5.0, 50.0, 5.0]


def test_cli_reads_the_same_settings_and_reports_their_problems(capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from ntui.cli.slurm import cli_runner
    from ntui.core.config import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("slurm:\n  timeout: 9\n  submit-timeout: fast\n")
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    runner = cli_runner()
    assert isinstance(runner, TimeoutRunner) and (runner.query, runner.submit) == (9.0, 60.0)
    assert capsys.readouterr().err == f"ntui: {path}:3: slurm.submit-timeout: expected a positive number, got 'fast'\n"


def test_settings_runner_reads_the_settings_on_the_first_call_only(tmp_path: Path) -> None:
    """The app's default runner: the same timeouts as the CLI, from settings read when Slurm is first asked."""
    (tmp_path / "sbatch").write_text("#!/bin/sh\necho 42\n")
    (tmp_path / "sbatch").chmod(0o755)
    reads: list[int] = []

    def slurm_settings() -> SlurmSettings:
        reads.append(1)
        return SlurmSettings(timeout=3.0, submit_timeout=7.0, bin_dir=str(tmp_path))

    runner = SettingsRunner(slurm_settings)
    assert reads == []  # nothing read before the first call
    res = runner.run(["sbatch", "--parsable"], timeout=99)
    runner.run(["sbatch", "--parsable"], timeout=99)
    assert res.stdout.strip() == "42"  # found under bin_dir, not on PATH
    assert reads == [1]
    inner = runner._inner()
    assert isinstance(inner, TimeoutRunner) and (inner.query, inner.submit) == (3.0, 7.0)


def test_bin_dir_from_the_environment(tmp_path: Path) -> None:
    """NTUI_SLURM_BIN_DIR (what `scripts/dev-cluster env --slurm 26.05` prints) wins over the file's bin-dir."""
    path = _cfg(tmp_path, "slurm:\n  bin-dir: /opt/slurm/bin\n  timeout: 7\n")
    settings, problems = load_settings(path, environ={BIN_DIR_ENV: f" {tmp_path} "})
    assert problems == [] and settings.slurm.bin_dir == str(tmp_path) and settings.slurm.timeout == 7.0
    assert load_settings(path, environ={BIN_DIR_ENV: ""})[0].slurm.bin_dir == "/opt/slurm/bin"
    settings, problems = load_settings(path, environ={BIN_DIR_ENV: str(tmp_path / "nope"), TIMEOUT_ENV: "4"})
    assert settings.slurm.bin_dir == str(tmp_path / "nope") and settings.slurm.timeout == 4.0
    assert [p.message for p in problems] == [f"{BIN_DIR_ENV}={str(tmp_path / 'nope')!r} is not a directory: "
                                             "Slurm's clients are looked up there, then on PATH"]


def test_installed_version_is_asked_once_per_bin_dir(tmp_path: Path) -> None:
    """The version of the clients a runner runs, asked once per process and bin dir (the app's runner, the
    CLI's and a bare SubprocessRunner under the same bin dir share the answer)."""
    from ntui.core.slurm.version import SlurmVersion, forget_versions, installed_version

    forget_versions()
    dirs = {}
    for release in ("24.11.5", "26.05.5"):
        d = tmp_path / release
        d.mkdir()
        sinfo = d / "sinfo"
        sinfo.write_text(f"#!/bin/sh\necho x >> {d}/calls\necho 'slurm-wlm {release}'\n")
        sinfo.chmod(0o755)
        dirs[release] = d
    old = SettingsRunner(lambda: SlurmSettings(bin_dir=str(dirs["24.11.5"])))
    new = slurm_runner(SlurmSettings(bin_dir=str(dirs["26.05.5"])))
    assert installed_version(old) == SlurmVersion((24, 11, 5)) and str(installed_version(new)) == "26.05.5"
    assert installed_version(SubprocessRunner(dirs["24.11.5"])) == SlurmVersion((24, 11, 5))
    assert [len((d / "calls").read_text().split()) for d in dirs.values()] == [1, 1]
    forget_versions()


def test_installed_version_is_not_one_of_the_counted_slurm_calls(tmp_path: Path) -> None:
    """`sinfo --version` is local (no RPC): the app's "N Slurm calls" does not count it, and a real runner's
    failure is asked again (sinfo may answer next time)."""
    from ntui.core.slurm.version import forget_versions, installed_version

    forget_versions()
    runner = SubprocessRunner(tmp_path)  # no sinfo there: PATH, with an empty PATH: none
    assert installed_version(runner, env={"PATH": str(tmp_path)}) is None
    sinfo = tmp_path / "sinfo"
    sinfo.write_text("#!/bin/sh\necho 'slurm 25.11.2'\n")
    sinfo.chmod(0o755)
    assert str(installed_version(runner, env={"PATH": str(tmp_path)})) == "25.11.2"
    assert runner.calls == 0
    forget_versions()
