"""Benchmark: ntui's CLI on a cluster reached over ssh with 100 ms of round trip on the link, against the same CLI
on the login node (Slurm here, no ssh), in one run.

    eval "$(scripts/dev-cluster env)"        # optional: the benchmark reads the 22.05 dev cluster's env itself
    nice -n 19 .venv/bin/python bench/ssh_netem.py [--sets 7] [--delay-ms 50] [--link auto|netem|userspace]

Needs root (a network namespace, a private sshd, Slurm commands as another user); without root, ``ip`` or
``tc``, or Debian's openssh-server, it says so and exits 0. Starts the 22.05 dev cluster (niced) when it is not
up, and stops it at the end only then.

The link: a network namespace of its own (``ip netns add``) holds the *laptop*: ``ntui --cluster far`` runs
there with ssh and no Slurm on its PATH, and can reach nothing but the cluster side's address on a private /30.
The *login node* is this namespace: the dev cluster (its slurmctld listens on this namespace's loopback) and a
private sshd (``tests/support/sshd.py``'s keys and configuration, listening on the /30's address too), whose
sessions see the dev cluster's ``SLURM_CONF``. Each way the link holds every packet ``--delay-ms`` (50 ms: a
100 ms round trip): ``tc qdisc ... netem delay`` on both ends of a veth pair where the kernel has ``sch_netem``,
else (``--link auto``) a user-space delay line between two TUN devices (``bench/delayline.py``; its own lateness
is printed). The measured TCP round trip is printed with the figures.

Slurm's clients run as the system account ``games`` on both sides (``setpriv`` shims: ``bin-dir`` of the cluster
in the settings, ``NTUI_SLURM_BIN_DIR`` here), so that slurmctld's own count of RPCs by user (``sdiag``) is this
benchmark's alone while other sessions use the dev cluster as root. A held job of that user is the one the
commands list, show; it is cancelled at the end.

Each *set* of calls starts with no ssh master, then runs, interleaved so the machine's load weighs on both alike:
``jobs`` over ssh (opens the master), ``jobs`` here, ``jobs`` over ssh (master reused), then ``show JOB`` and
``check PRESET`` here and over ssh. Per call: wall time of the whole ``ntui`` process, ssh channels (sshd's
"Starting session" lines), bytes on the link (the cluster side's device counters, both ways: IP packets on a
TUN device, Ethernet frames on a veth), slurmctld RPCs of the user (``sdiag`` before and after, as root). Per
set: ssh logins ("Accepted publickey"), expected 1. Printed: medians over the sets, remote / local, the extra
time in round trips, the first call against the later ones. Two floors beside them: one channel over the master
(``ssh HOST true``) and ntui's own start (``ntui --version``).

What it cannot measure: the app (its keys and panes over ssh) runs on the login node only for now
(``ntui --cluster NAME`` without a subcommand is refused); logs, GPU samples and records over the agent are not
in these commands.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.delayline import setns  # noqa: E402
from ntui.core.slurm.sdiag import parse_sdiag_rpc_by_user  # noqa: E402
from tests.support import sshd as sshd_support  # noqa: E402

HOST = "far"  # the cluster's name in ntui's settings and its host in the ssh config
BENCH_USER = "games"  # a system account nothing else on the dev cluster uses (bench/rpc_load.py: nobody, daemon)
SLURM_TOOLS = ("squeue", "scontrol", "sacct", "scancel", "sbatch", "srun", "sinfo", "sacctmgr", "sstat", "sattach")
PRESET = REPO / "presets" / "local-accelerate.yaml"


def say(words: str) -> None:
    print(f"ssh_netem: {words}", file=sys.stderr, flush=True)


def sh(argv: Sequence[str], *, check: bool = True, env: Mapping[str, str] | None = None,
       timeout: float = 120) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, env=env,
                         stdin=subprocess.DEVNULL, check=False)
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {res.returncode}: {(res.stderr or res.stdout).strip()}")
    return res


def why_not() -> str | None:
    """Why the benchmark cannot run here (it then exits 0), or None."""
    if os.geteuid() != 0:
        return "needs root (a network namespace, a private sshd, Slurm commands as another user)"
    for tool, package in (("ip", "iproute2"), ("tc", "iproute2"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian's {package})"
    return sshd_support.why_not()


# ---------------------------------------------------------------- the dev cluster


def dev_cluster_env() -> dict[str, str]:
    out = sh([str(REPO / "scripts" / "dev-cluster"), "env"]).stdout
    env = dict(os.environ)
    for line in out.splitlines():
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export "):].partition("=")
            env[key] = value.strip("'\"")
    return env


def cluster_is_up(env: Mapping[str, str]) -> bool:
    try:
        res = sh(["sinfo", "-h", "-o", "%n"], check=False, env=env, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0 and bool(res.stdout.strip())


def slurm_conf_value(env: Mapping[str, str], key: str) -> str | None:
    for line in Path(env["SLURM_CONF"]).read_text().splitlines():
        name, _, value = line.partition("=")
        if name.strip().lower() == key.lower():
            return value.split("#")[0].strip()
    return None


def make_shims(directory: Path, uid: int, env: Mapping[str, str]) -> Path:
    """``squeue``/``scontrol``/... that run the real tool as ``uid`` (the real paths found before)."""
    shims = directory / "slurm-as-user"
    shims.mkdir()
    setpriv = shutil.which("setpriv")
    for tool in SLURM_TOOLS:
        real = shutil.which(tool, path=env.get("PATH"))
        if real is None:
            continue
        path = shims / tool
        path.write_text(f'#!/bin/sh\nexec {setpriv} --reuid={uid} --regid={uid} --clear-groups {real} "$@"\n')
        path.chmod(0o755)
    return shims


def ensure_association(user: str, env: Mapping[str, str]) -> None:
    """With accounting (``AccountingStorageEnforce=associations``) the user needs one to submit its held job."""
    res = sh(["sacctmgr", "-n", "-P", "show", "assoc", f"user={user}", "format=account"], check=False, env=env)
    if res.returncode != 0 or res.stdout.strip():  # no accounting, or it has one
        return
    account, cluster = "ntuidev", slurm_conf_value(env, "ClusterName") or "ntuidev"
    say(f"sacctmgr: adding {user} to account {account} of cluster {cluster}")
    sh(["sacctmgr", "-i", "add", "user", user, f"account={account}", f"cluster={cluster}",
        f"DefaultAccount={account}"], env=env)


def rpcs_of(user: str, env: Mapping[str, str]) -> int:
    return parse_sdiag_rpc_by_user(sh(["sdiag"], env=env).stdout).get(user, 0)


# ---------------------------------------------------------------- the link


@dataclass
class Link:
    """The namespace and the link to it; ``device``: the cluster side's end (its counters are the link's)."""

    netns: str
    kind: str
    device: str
    cluster_addr: str
    laptop_addr: str
    line: subprocess.Popen[str] | None = None
    line_stats: str = ""

    def bytes(self) -> int:
        stats = Path("/sys/class/net") / self.device / "statistics"
        return int((stats / "rx_bytes").read_text()) + int((stats / "tx_bytes").read_text())

    def enter(self) -> None:
        """Move the calling process into the laptop's namespace (a ``preexec_fn``)."""
        setns(f"/run/netns/{self.netns}")


def _netem_link(netns: str, host_dev: str, ns_dev: str, subnet: str, delay_ms: float) -> Link | None:
    """veth + netem on both ends; None when the kernel has no ``sch_netem`` (nothing left behind)."""
    sh(["ip", "link", "add", host_dev, "type", "veth", "peer", "name", ns_dev])
    try:
        res = sh(["tc", "qdisc", "add", "dev", host_dev, "root", "netem", "delay", f"{delay_ms:g}ms"], check=False)
        if res.returncode != 0:
            say(f"tc netem refused ({res.stderr.strip()}): the kernel has no sch_netem")
            sh(["ip", "link", "del", host_dev], check=False)
            return None
        sh(["ip", "link", "set", ns_dev, "netns", netns])
        sh(["tc", "-n", netns, "qdisc", "add", "dev", ns_dev, "root", "netem", "delay", f"{delay_ms:g}ms"])
        sh(["ip", "addr", "add", f"{subnet}.1/30", "dev", host_dev])
        sh(["ip", "link", "set", host_dev, "up"])
        sh(["ip", "-n", netns, "addr", "add", f"{subnet}.2/30", "dev", ns_dev])
        sh(["ip", "-n", netns, "link", "set", ns_dev, "up"])
    except BaseException:
        sh(["ip", "link", "del", host_dev], check=False)
        raise
    return Link(netns, f"veth + tc netem delay {delay_ms:g}ms on both ends", host_dev, f"{subnet}.1", f"{subnet}.2")


def _userspace_link(netns: str, host_dev: str, ns_dev: str, subnet: str, delay_ms: float) -> Link:
    """Two TUN devices, ``bench/delayline.py`` holding each packet ``delay_ms`` each way."""
    line = subprocess.Popen([sys.executable, str(REPO / "bench" / "delayline.py"), "--netns", netns,
                             "--here", host_dev, "--there", ns_dev, "--delay-ms", f"{delay_ms:g}"],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    link = Link(netns, f"user-space delay line (TUN) {delay_ms:g} ms each way", host_dev, f"{subnet}.1",
                f"{subnet}.2", line=line)
    assert line.stdout is not None
    ready = line.stdout.readline().strip()
    if ready != "ready":
        line.kill()
        line.wait()
        raise RuntimeError(f"bench/delayline.py did not start (said {ready!r})")
    sh(["ip", "addr", "add", f"{subnet}.1", "peer", f"{subnet}.2", "dev", host_dev])
    sh(["ip", "link", "set", host_dev, "up"])
    sh(["ip", "-n", netns, "addr", "add", f"{subnet}.2", "peer", f"{subnet}.1", "dev", ns_dev])
    sh(["ip", "-n", netns, "link", "set", ns_dev, "up"])
    return link


def end_processes_in(netns: str, keep: int | None) -> None:
    """Kill what still runs in the laptop's namespace but ``keep`` (the delay line): all of it this benchmark's
    (an interrupted call's ssh, a master still logging in), by pid, so that the namespace goes with it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        found = [int(p) for p in sh(["ip", "netns", "pids", netns], check=False).stdout.split() if p.isdigit()]
        found = [p for p in found if p != keep]
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if not found:
            return
        time.sleep(0.5)


@contextlib.contextmanager
def delayed_link(kind: str, subnet: str, delay_ms: float) -> Iterator[Link]:
    """A namespace with ``subnet``.2 inside, ``subnet``.1 here, ``delay_ms`` each way; removed on exit."""
    tag = str(os.getpid())
    netns, host_dev, ns_dev = f"ntui-netem-{tag}", f"ntn{tag}c", f"ntn{tag}l"
    sh(["ip", "netns", "add", netns])
    link: Link | None = None
    try:
        sh(["ip", "-n", netns, "link", "set", "lo", "up"])
        if kind in ("auto", "netem"):
            link = _netem_link(netns, host_dev, ns_dev, subnet, delay_ms)
            if link is None and kind == "netem":
                raise RuntimeError("--link netem: the kernel has no sch_netem (--link auto falls back to a "
                                   "user-space delay line)")
        if link is None:
            link = _userspace_link(netns, host_dev, ns_dev, subnet, delay_ms)
        yield link
    finally:
        end_processes_in(netns, link.line.pid if link is not None and link.line is not None else None)
        if link is not None and link.line is not None:
            link.line.terminate()
            try:
                out, _ = link.line.communicate(timeout=30)
                link.line_stats = out.strip()
            except subprocess.TimeoutExpired:
                link.line.kill()
                link.line.wait()
        sh(["ip", "netns", "del", netns], check=False)  # takes its end of the link with it
        if link is not None and link.line is None:
            sh(["ip", "link", "del", host_dev], check=False)


def tcp_rtt(link: Link, port: int, samples: int = 9) -> float:
    """Median seconds of a TCP connect (one round trip) from the laptop's side to the sshd."""
    code = ("import socket, statistics, time\nts = []\n"
            f"for _ in range({samples}):\n"
            f"    s = socket.socket(); t = time.perf_counter(); s.connect(({link.cluster_addr!r}, {port}))\n"
            "    ts.append(time.perf_counter() - t); s.close(); time.sleep(0.05)\n"
            "print(statistics.median(ts))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         preexec_fn=link.enter, check=True)
    return float(res.stdout)


# ---------------------------------------------------------------- sshd on the cluster's side


@contextlib.contextmanager
def cluster_sshd(link: Link, slurm_conf: str) -> Iterator[sshd_support.Sshd]:
    """The tests' private sshd (``tests/support/sshd.py``: its keys and configuration), listening also on the
    link's address; its sessions see ``SLURM_CONF``. ``ssh_config``: host ``far`` at that address."""
    d = Path(tempfile.mkdtemp(prefix="ntui-netem-", dir="/tmp"))  # short: the masters' sockets live here
    proc: subprocess.Popen[bytes] | None = None
    try:
        for key in ("host_key", "id_client", "id_other"):
            sshd_support._keygen(d / key)
        (d / "authorized_keys").write_text((d / "id_client.pub").read_text())
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        port = sshd_support._free_port()
        extra = f'SetEnv SLURM_CONF="{slurm_conf}"\nListenAddress {link.cluster_addr}\n'
        sshd_config, _ = sshd_support._write_configs(d, port, sshd_support._free_port(), extra)
        log = d / "sshd.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([sshd_support.SSHD, "-D", "-e", "-f", str(sshd_config)],
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while proc.poll() is None and not sshd_support._accepts(port):
            if time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not listen within 60 s: {log.read_text(errors='replace')}")
            time.sleep(0.05)
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited {proc.returncode}: {log.read_text(errors='replace')}")
        client = d / "ssh_config_far"
        client.write_text(
            f"Host {HOST}\n  HostName {link.cluster_addr}\n  Port {port}\n  User root\n"
            f"  IdentityFile {d}/id_client\n  IdentitiesOnly yes\n  StrictHostKeyChecking accept-new\n"
            f"  UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
            "  PasswordAuthentication no\n  KbdInteractiveAuthentication no\n")
        yield sshd_support.Sshd(directory=d, port=port, ssh_config=client, log=log, pid=proc.pid)
    finally:
        sshd_support._end_masters(d)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        shutil.rmtree(d, ignore_errors=True)


def channels(server: sshd_support.Sshd) -> int:
    """Sessions sshd started so far (``LogLevel VERBOSE``: one "Starting session" per channel that runs a
    command)."""
    return server.log.read_text(errors="replace").count("Starting session:")


def masters(runtime: Path) -> list[Path]:
    return [p for p in runtime.rglob("*") if p.is_socket()]


def end_masters(server: sshd_support.Sshd, runtime: Path) -> None:
    """Close every master of ntui's socket directory and wait until it is gone."""
    for sock in masters(runtime):
        sh(["ssh", "-F", str(server.ssh_config), "-o", f"ControlPath={sock}", "-O", "exit", HOST], check=False)
    deadline = time.monotonic() + 30
    while masters(runtime) and time.monotonic() < deadline:
        time.sleep(0.05)


# ---------------------------------------------------------------- the calls


@dataclass
class Series:
    seconds: list[float] = field(default_factory=list)
    channels: list[int] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)
    rpcs: list[int] = field(default_factory=list)


@dataclass
class Bench:
    link: Link
    server: sshd_support.Sshd
    local_env: dict[str, str]
    laptop_env: dict[str, str]
    slurm_env: dict[str, str]
    results: dict[str, Series] = field(default_factory=dict)

    def call(self, label: str, argv: Sequence[str], *, remote: bool, count_rpcs: bool = True) -> None:
        series = self.results.setdefault(label, Series())
        ch0, b0 = channels(self.server), self.link.bytes()
        r0 = rpcs_of(BENCH_USER, self.slurm_env) if count_rpcs else 0
        preexec: Callable[[], None] | None = self.link.enter if remote else None
        t = time.perf_counter()
        res = subprocess.run(list(argv), capture_output=True, text=True, errors="replace", timeout=300, cwd=REPO,
                             env=self.laptop_env if remote else self.local_env, stdin=subprocess.DEVNULL,
                             preexec_fn=preexec, check=False)
        series.seconds.append(time.perf_counter() - t)
        if res.returncode != 0:
            raise RuntimeError(f"{label}: {' '.join(argv)} exited {res.returncode}: {res.stderr.strip()}")
        if count_rpcs:
            time.sleep(0.2)  # slurmctld counts an RPC once it has answered it
            series.rpcs.append(rpcs_of(BENCH_USER, self.slurm_env) - r0)
        series.channels.append(channels(self.server) - ch0)
        series.bytes.append(self.link.bytes() - b0)


def ntui(*words: str, remote: bool) -> list[str]:
    return [sys.executable, "-m", "ntui", *(("--cluster", HOST) if remote else ()), *words]


def run_sets(bench: Bench, sets: int, job_id: str, runtime: Path) -> list[int]:
    logins: list[int] = []
    commands = {"jobs": ("jobs",), "show JOB": ("show", job_id), "check PRESET": ("check", str(PRESET))}
    for i in range(sets):
        end_masters(bench.server, runtime)
        before = bench.server.logins()
        bench.call("jobs, first (opens the master)/remote", ntui("jobs", remote=True), remote=True)
        for label, words in commands.items():
            bench.call(f"{label}/local", ntui(*words, remote=False), remote=False)
            bench.call(f"{label}/remote", ntui(*words, remote=True), remote=True)
        logins.append(bench.server.logins() - before)
        say(f"set {i + 1}/{sets} done ({logins[-1]} login(s))")
    # floors: one channel over the master (no ntui), and ntui's own start here (no Slurm)
    sock = masters(runtime)
    for _ in range(sets):
        if sock:
            bench.call("ssh HOST true over the master/remote",
                       ["ssh", "-F", str(bench.server.ssh_config), "-o", f"ControlPath={sock[0]}",
                        "-o", "BatchMode=yes", HOST, "--", "true"], remote=True, count_rpcs=False)
        bench.call("ntui --version (start, no Slurm)/local", ntui("--version", remote=False), remote=False,
                   count_rpcs=False)
    return logins


# ---------------------------------------------------------------- the table


def _ms(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f}" if values else "-"


def _spread(values: Sequence[int]) -> str:
    if not values:
        return "-"
    lo, hi, med = min(values), max(values), statistics.median(values)
    return f"{med:g}" if lo == hi else f"{med:g} ({lo}-{hi})"


def report(bench: Bench, logins: list[int], rtt: float, sets: int) -> None:
    r = bench.results
    print(f"\nlink: {bench.link.kind}; TCP connect round trip from the laptop's side: {rtt * 1000:.1f} ms (median)")
    print(f"sets: {sets}; ssh logins per set (master closed before each): {logins}")
    head = (f"{'call':<36} {'local ms':>8} {'remote ms':>9} {'remote/local':>12} {'extra RTTs':>10} "
            f"{'channels':>9} {'link bytes':>16} {'RPCs local':>10} {'RPCs remote':>11}")
    print(head)
    print("-" * len(head))
    rows = ["jobs, first (opens the master)", "jobs", "show JOB", "check PRESET", "ssh HOST true over the master",
            "ntui --version (start, no Slurm)"]
    for row in rows:
        loc, rem = r.get(f"{row}/local", Series()), r.get(f"{row}/remote", Series())
        if row == "jobs, first (opens the master)":
            loc = r.get("jobs/local", Series())
        ratio = extra = "-"
        if loc.seconds and rem.seconds:
            lm, rm = statistics.median(loc.seconds), statistics.median(rem.seconds)
            ratio, extra = f"{rm / lm:.2f}", f"{(rm - lm) / rtt:.1f}"
        print(f"{row:<36} {_ms(loc.seconds):>8} {_ms(rem.seconds):>9} {ratio:>12} {extra:>10} "
              f"{_spread(rem.channels):>9} {_spread(rem.bytes):>16} {_spread(loc.rpcs) if row != rows[0] else '':>10} "
              f"{_spread(rem.rpcs):>11}")
    first, later = r.get("jobs, first (opens the master)/remote"), r.get("jobs/remote")
    if first and later:
        fm, lm = statistics.median(first.seconds), statistics.median(later.seconds)
        print(f"\nfirst call / later calls (jobs over ssh): {fm / lm:.2f}x; opening the master costs "
              f"{(fm - lm) * 1000:.0f} ms ({(fm - lm) / rtt:.1f} round trips)")
    for label in ("jobs", "show JOB", "check PRESET"):
        here, there = r.get(f"{label}/local"), r.get(f"{label}/remote")
        if here and there:
            same = sorted(here.rpcs) == sorted(there.rpcs)
            print(f"slurmctld RPCs, {label}: local {here.rpcs} remote {there.rpcs}: "
                  f"{'the same' if same else 'NOT the same'}")
    if bench.link.line_stats:
        print(f"delay line (packets, bytes, lateness past the delay): {bench.link.line_stats}")


# ---------------------------------------------------------------- main


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", type=int, default=7, help="repetitions of the whole set of calls (medians over them)")
    ap.add_argument("--delay-ms", type=float, default=50.0, help="added delay each way (50: a 100 ms round trip)")
    ap.add_argument("--link", choices=("auto", "netem", "userspace"), default="auto",
                    help="netem: tc netem on a veth pair; userspace: bench/delayline.py; auto: netem where the "
                         "kernel has it")
    ap.add_argument("--subnet", default="10.254.45", help="the private /30's first three octets (.1 cluster side, "
                                                          ".2 laptop side)")
    args = ap.parse_args()
    reason = why_not()
    if reason is not None:
        say(f"{reason}: nothing measured")
        return 0
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also where it was started with SIGINT ignored
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGHUP, _interrupted)
    slurm_env = dev_cluster_env()
    started = False
    work = Path(tempfile.mkdtemp(prefix="ntui-netem-work-"))
    job_id: str | None = None
    try:
        if not cluster_is_up(slurm_env):
            say("the dev cluster is not up: starting it (scripts/dev-cluster up, niced)")
            started = True
            sh(["nice", "-n", "19", str(REPO / "scripts" / "dev-cluster"), "up"], env=slurm_env, timeout=1800)
        import pwd

        uid = pwd.getpwnam(BENCH_USER).pw_uid
        shims = make_shims(work, uid, slurm_env)
        ensure_association(BENCH_USER, slurm_env)
        job_id = sh([str(shims / "sbatch"), "--parsable", "--hold", "-J", "ntui-netem", "-o", "/dev/null",
                     "-D", "/tmp", "--wrap", "true"], env=slurm_env).stdout.strip().split(";")[0]
        say(f"held job {job_id} of {BENCH_USER}")
        with delayed_link(args.link, args.subnet, args.delay_ms) as link, \
                cluster_sshd(link, slurm_env["SLURM_CONF"]) as server:
            runtime = server.directory / "rt"  # the laptop's XDG_RUNTIME_DIR: ntui's master sockets
            runtime.mkdir(mode=0o700)
            laptop_bin, config = work / "laptop-bin", work / "laptop-config"
            laptop_bin.mkdir()
            (laptop_bin / "ssh").symlink_to(shutil.which("ssh") or "/usr/bin/ssh")
            (config / "ntui").mkdir(parents=True)
            (config / "ntui" / "config.yaml").write_text(
                f"clusters:\n  {HOST}:\n    ssh: {HOST}\n    bin-dir: {shims}\n"
                f"    ssh-config: {server.ssh_config}\n    persist: 600\n")
            common = {"HOME": str(work), "XDG_CONFIG_HOME": str(config), "LANG": "C.UTF-8",
                      "PYTHONPATH": str(REPO), "NTUI_STATE_DIR": str(work / "state")}
            laptop_env = {**common, "PATH": str(laptop_bin), "XDG_RUNTIME_DIR": str(runtime)}
            local_env = {**slurm_env, **common, "NTUI_SLURM_BIN_DIR": str(shims)}
            rtt = tcp_rtt(link, server.port)
            bench = Bench(link, server, local_env, laptop_env, slurm_env)
            logins = run_sets(bench, args.sets, job_id, runtime)
        report(bench, logins, rtt, args.sets)
    except KeyboardInterrupt:
        say("interrupted: cleaning up")
        return 130
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        say(f"failed: {exc}")
        return 1
    finally:
        if job_id:
            sh(["scancel", job_id], check=False, env=slurm_env)
        shutil.rmtree(work, ignore_errors=True)
        if started:
            say("stopping the dev cluster this run started")
            sh([str(REPO / "scripts" / "dev-cluster"), "down"], check=False, env=slurm_env, timeout=600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
