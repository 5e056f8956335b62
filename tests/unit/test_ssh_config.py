"""The settings' ``clusters:`` section and the runner each cluster gets (no ssh is run here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ntui.core.config import ClusterSettings, Settings, UnknownCluster, cluster_runner, load_settings
from ntui.core.slurm.runner import SubprocessRunner, TimeoutRunner
from ntui.core.slurm.ssh import CONTROL_PERSIST_S, SshRunner


def _load(tmp_path: Path, text: str) -> tuple[Settings, list[str]]:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    settings, problems = load_settings(path, environ={})
    return settings, [str(p).replace(str(path), "CFG") for p in problems]


def test_clusters_are_read_with_their_defaults(tmp_path: Path) -> None:
    settings, problems = _load(tmp_path, (
        "slurm:\n  timeout: 9\n"
        "clusters:\n"
        "  perlmutter:\n    ssh: perlmutter\n"
        "  uni:\n    ssh: me@login.uni.example\n    bin-dir: /opt/slurm/bin\n    persist: 3600\n"
        "    ssh-config: /etc/ntui/ssh_config\n"
    ))
    assert problems == []
    assert settings.clusters == (
        ClusterSettings(name="perlmutter", ssh="perlmutter"),
        ClusterSettings(name="uni", ssh="me@login.uni.example", bin_dir="/opt/slurm/bin", persist=3600,
                        ssh_config="/etc/ntui/ssh_config"),
    )
    assert settings.cluster("uni") is settings.clusters[1] and settings.cluster("nope") is None
    assert settings.slurm.timeout == 9
    assert Settings().clusters == ()


def test_each_problem_names_file_line_and_field_and_the_good_clusters_stay(tmp_path: Path) -> None:
    settings, problems = _load(tmp_path, (
        "clusters:\n"                                    # 1
        "  good:\n    ssh: good-host\n"                  # 2-3
        "  badhost:\n    ssh: '-oProxyCommand=touch /tmp/x'\n"  # 4-5
        "  nossh:\n    bin-dir: /x\n"                    # 6-7
        "  typo:\n    ssh: h\n    persit: 5\n"           # 8-10
        "  slow:\n    ssh: h\n    persist: -1\n"         # 11-13
        "  'bad name':\n    ssh: h\n"                    # 14-15
        "  flat: just-a-host\n"                          # 16
    ))
    assert [c.name for c in settings.clusters] == ["good"]
    assert problems == [
        "CFG:5: clusters.badhost.ssh: expected a host of your ssh config (an alias or user@host), got "
        "'-oProxyCommand=touch /tmp/x'",
        "CFG:6: clusters.nossh: no ssh: HOST (a host of your ~/.ssh/config)",
        "CFG:10: clusters.typo.persit: unknown setting (ssh, bin-dir, persist, ssh-config, renew, agent)",
        "CFG:13: clusters.slow.persist: expected a whole number of seconds > 0, got -1",
        "CFG:14: clusters.bad name: a cluster's name is letters, digits, '.', '_' and '-' (it is what --cluster "
        "takes)",
        "CFG:16: clusters.flat: expected a mapping with ssh: HOST (a host of your ~/.ssh/config)",
    ]


def test_clusters_that_is_not_a_mapping_is_one_problem(tmp_path: Path) -> None:
    settings, problems = _load(tmp_path, "queue:\n  idle-interval: 30\nclusters: [a, b]\n")
    assert settings.clusters == () and settings.queue.idle_interval == 30
    assert problems == ["CFG:3: clusters: expected a mapping of cluster names to {ssh: HOST}"]


def test_the_other_sections_problems_name_their_line_too(tmp_path: Path) -> None:
    _, problems = _load(tmp_path, "queue:\n  idle-interval: 30\n  nope: 1\nextra: 2\n")
    assert sorted(problems) == ["CFG:3: queue.nope: unknown setting", "CFG:4: extra: unknown section"]


def test_a_cluster_gets_an_ssh_runner_with_the_settings_timeouts_and_here_stays_local(tmp_path: Path) -> None:
    settings, _ = _load(tmp_path, "slurm:\n  timeout: 7\n  submit-timeout: 70\n"
                                  "clusters:\n  dev:\n    ssh: devhost\n    bin-dir: /opt/s/bin\n")
    runner = cluster_runner(settings, "dev", environ={"XDG_RUNTIME_DIR": "/run/user/4242"})
    assert isinstance(runner, TimeoutRunner) and (runner.query, runner.submit) == (7, 70)
    inner = runner.inner
    assert isinstance(inner, SshRunner)
    assert inner.target.host == "devhost" and inner.target.persist_s == CONTROL_PERSIST_S
    assert inner.target.control_dir == Path("/run/user/4242/ntui-ssh")
    argv = inner.ssh_argv(["squeue", "--me"])
    assert argv[-3:] == ["devhost", "--", "env SLURM_TIME_FORMAT=standard /opt/s/bin/squeue --me"]
    local = cluster_runner(settings, None)
    assert isinstance(local, TimeoutRunner) and isinstance(local.inner, SubprocessRunner)


def test_an_unknown_cluster_names_those_there_are(tmp_path: Path) -> None:
    settings, _ = _load(tmp_path, "clusters:\n  a:\n    ssh: a\n  b:\n    ssh: b\n")
    with pytest.raises(UnknownCluster, match="no cluster 'c': the settings name a, b"):
        cluster_runner(settings, "c")
    with pytest.raises(UnknownCluster, match="name no cluster"):
        cluster_runner(Settings(), "c")


def test_renew_and_agent_reach_the_runner_and_the_agent_start(tmp_path: Path) -> None:
    """A cluster's renew hint is said by its runner with a refused login; its agent: command is split into words
    (never given to a shell), and a bad one is named by line and field."""
    from ntui.core.remote.files import agent_command

    settings, problems = _load(tmp_path, (
        "clusters:\n"                                                        # 1
        "  nersc:\n    ssh: perlmutter\n    renew: sshproxy -u me\n"          # 2-4
        "    agent: '~/venvs/ntui/bin/ntui agent --stdio'\n"                 # 5
        "  odd:\n    ssh: h\n    agent: 'ntui \"agent'\n"                    # 6-8
    ))
    assert problems == ["CFG:8: clusters.odd.agent: expected a command on one line (e.g. ~/venvs/ntui/bin/ntui "
                        "agent --stdio), got 'ntui \"agent'"]
    nersc = settings.cluster("nersc")
    assert nersc is not None and nersc.renew == "sshproxy -u me"
    assert nersc.agent == ("~/venvs/ntui/bin/ntui", "agent", "--stdio")
    assert agent_command(nersc.agent, environ={}) == nersc.agent
    runner = cluster_runner(settings, "nersc")
    assert isinstance(runner, TimeoutRunner) and isinstance(runner.inner, SshRunner)
    assert runner.inner.target.renew == "sshproxy -u me"


def test_ntui_with_a_cluster_and_no_subcommand_opens_the_app_on_that_cluster_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import ntui.cli as cli
    import ntui.ui.app as app

    cfg = tmp_path / "cfg" / "ntui" / "config.yaml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("clusters:\n  alpha:\n    ssh: alpha-login\n  beta:\n    ssh: beta-login\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    opened: list[object] = []

    def run_app(clusters: object = None) -> int:
        opened.append(clusters)
        return 0

    monkeypatch.setattr(app, "run_app", run_app)
    assert cli.run(["--cluster", "beta"]) == 0
    assert cli.run([]) == 0
    assert opened == [("beta",), None]
    assert cli.run(["--cluster", "gamma"]) == 2
    assert opened == [("beta",), None]
    assert "no cluster 'gamma'" in capsys.readouterr().err
