"""A private OpenSSH server on the loopback address, for the SSH transport's tests (no Slurm needed).

:func:`private_sshd` starts Debian's ``sshd`` as a child (``sshd -D -f CONFIG -e``) on 127.0.0.1 and a free port,
with its own host key and configuration in a fresh directory, authorising one key it generates with
``ssh-keygen``; it yields a :class:`Sshd` whose ``ssh_config`` file names these hosts for ``ssh -F``:

* ``ntui-test``: the server, logging in with the authorised key (``StrictHostKeyChecking=accept-new``, its own
  known_hosts) as the current user, or as ``login_user``: a second local user (:func:`remote_user`, made by
  ``scripts/dev-cluster remote-user``), the "cluster side" of a laptop's ntui, whose home then holds the test's
  cluster-side state (its XDG directories under ``~/.ntui-test-XXXX``, made and chowned here, removed after);
* ``ntui-refused``: a port where nothing listens (connection refused);
* ``ntui-denied``: the server, with a key it does not authorise (permission denied).

sshd must run as root (it changes to the logged-in user); :func:`why_not` says why it cannot start here (a
missing second user included).
Every line sshd logs goes to ``log`` (``LogLevel VERBOSE``: one "Accepted publickey" per login).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
HOST = "ntui-test"
REFUSED = "ntui-refused"
DENIED = "ntui-denied"
#: The second local user's name: scripts/dev-cluster's ``remote-user`` (and ``up``) make it, under the same variable.
REMOTE_USER_ENV = "NTUI_DEV_REMOTE_USER"


def remote_user() -> str:
    """The second local user the cluster tests log in as (``$NTUI_DEV_REMOTE_USER``, default ``ntuiremote``)."""
    return os.environ.get(REMOTE_USER_ENV) or "ntuiremote"


def why_not(login_user: str | None = None) -> str | None:
    """Why a private sshd (logging in as ``login_user``, default the current user) cannot start here (a reason to
    skip), or None."""
    if os.geteuid() != 0:
        return "sshd needs root (it switches to the logged-in user); CI runs the tests as root"
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} not installed (Debian's openssh-server: scripts/bootstrap installs it)"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "OpenSSH's client (ssh, ssh-keygen) not installed"
    if login_user is not None:
        try:
            pwd.getpwnam(login_user)
        except KeyError:
            return (f"the local user {login_user} does not exist: run scripts/dev-cluster remote-user (up makes it "
                    "too)")
    return None


@dataclass(frozen=True)
class Sshd:
    directory: Path
    port: int
    ssh_config: Path
    log: Path
    pid: int
    #: who the sessions log in as
    user: str = ""
    #: the sessions' own directory: their XDG directories (state, config, cache) and what :meth:`user_dir` makes;
    #: under the login user's home when it is a second user, else under ``directory``
    home: Path = Path()
    #: the environment every session gets (sshd's ``SetEnv``)
    environment: tuple[tuple[str, str], ...] = ()

    def logins(self) -> int:
        """Logins the server accepted so far (one per master; a channel over a master is none)."""
        return self.log.read_text(errors="replace").count("Accepted publickey")

    @property
    def state_dir(self) -> Path:
        """Where ntui keeps its records in the sessions (``$NTUI_STATE_DIR``, else ``$XDG_STATE_HOME/ntui``)."""
        env = dict(self.environment)
        return Path(env["NTUI_STATE_DIR"]) if env.get("NTUI_STATE_DIR") else Path(env["XDG_STATE_HOME"]) / "ntui"

    def user_dir(self, name: str) -> Path:
        """A directory ``name`` under :attr:`home`, owned by the login user (a job's logs, a script it runs)."""
        path = self.home / name
        path.mkdir(parents=True, exist_ok=True)
        pw = pwd.getpwnam(self.user)
        rel = path.relative_to(self.home)
        for part in (rel, *rel.parents):
            os.chown(self.home / part, pw.pw_uid, pw.pw_gid)
        return path

    def run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``argv`` run in a session of its own (a login of its own, no master: count logins after it), quoted for
        the login shell; never raises on a non-zero exit."""
        return subprocess.run(["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", HOST, "--",
                               shlex.join(argv)], capture_output=True, text=True, errors="replace",
                              timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ntui-test", "-f", str(path)],
                   check=True, timeout=60, stdin=subprocess.DEVNULL)


def _accepts(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _write_configs(d: Path, port: int, refused_port: int, user: str, extra: str = "") -> tuple[Path, Path]:
    sshd_config = d / "sshd_config"
    sshd_config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n"
        f"AuthorizedKeysFile {d}/authorized_keys\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nUsePAM no\n"
        # the key files live under /tmp, which is writable by all: sshd's ownership checks would refuse them
        "StrictModes no\nMaxSessions 64\nMaxStartups 64\nLogLevel VERBOSE\nPrintMotd no\n" + extra
    )
    ssh_config = d / "ssh_config"
    common = (f"  User {user}\n  IdentitiesOnly yes\n  StrictHostKeyChecking accept-new\n"
              f"  UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
              "  PasswordAuthentication no\n  KbdInteractiveAuthentication no\n")
    ssh_config.write_text(
        f"Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {d}/id_client\n{common}"
        f"Host {DENIED}\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {d}/id_other\n{common}"
        f"Host {REFUSED}\n  HostName 127.0.0.1\n  Port {refused_port}\n  IdentityFile {d}/id_client\n{common}"
    )
    return sshd_config, ssh_config


@contextlib.contextmanager
def private_sshd(ready_timeout: float = 60.0, *, environment: dict[str, str] | None = None,
                 login_user: str | None = None) -> Iterator[Sshd]:
    """A running private sshd (see the module's docstring), killed and its directory removed on exit. The
    directory is short (``/tmp/ntui-sshd-XXXX``): the tests' master sockets live there too. ``environment``: set
    in every session it starts (sshd's ``SetEnv``), e.g. the dev cluster's ``SLURM_CONF``; over the defaults that
    give the cluster side its own state, config and cache directories (a session logs in with the login user's
    real home, where ntui's agent would otherwise write the user's own history): under the sshd's directory, or
    with ``login_user`` (a second local user, see :func:`remote_user`) under ``~login_user/.ntui-test-XXXX``, owned
    by that user, so the records its agent writes are in its home."""
    reason = why_not(login_user)
    if reason is not None:
        raise RuntimeError(reason)
    d = Path(tempfile.mkdtemp(prefix="ntui-sshd-", dir="/tmp"))
    user = login_user or pwd.getpwuid(os.getuid()).pw_name
    home = d
    if login_user is not None:
        pw = pwd.getpwnam(login_user)
        home = Path(tempfile.mkdtemp(prefix=".ntui-test-", dir=pw.pw_dir))
        os.chown(home, pw.pw_uid, pw.pw_gid)
        # sshd reads the authorised keys as the login user: the directory searchable, the file readable
        d.chmod(0o711)
    environment = {"XDG_STATE_HOME": str(home / "cluster-state"), "XDG_CONFIG_HOME": str(home / "cluster-config"),
                   "XDG_CACHE_HOME": str(home / "cluster-cache"), **(environment or {})}
    proc: subprocess.Popen[bytes] | None = None
    try:
        _keygen(d / "host_key")
        _keygen(d / "id_client")
        _keygen(d / "id_other")
        (d / "authorized_keys").write_text((d / "id_client.pub").read_text())
        (d / "authorized_keys").chmod(0o644)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        log = d / "sshd.log"
        for _attempt in range(5):  # another process may take the free port first: try another
            port, refused_port = _free_port(), _free_port()
            # one SetEnv line: sshd keeps the first value of a keyword, so a second SetEnv line would be ignored
            extra = "SetEnv " + " ".join(f'{k}="{v}"' for k, v in environment.items()) + "\n"
            sshd_config, ssh_config = _write_configs(d, port, refused_port, user, extra)
            with open(log, "wb") as out:
                proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(sshd_config)], stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + ready_timeout
            while proc.poll() is None and not _accepts(port):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"sshd did not listen within {ready_timeout:g} s: {log.read_text()}")
                time.sleep(0.05)
            if proc.poll() is None:
                break
            if "Address already in use" not in log.read_text(errors="replace"):
                raise RuntimeError(f"sshd exited {proc.returncode}: {log.read_text(errors='replace')}")
        else:
            raise RuntimeError(f"sshd found no free port: {log.read_text(errors='replace')}")
        yield Sshd(directory=d, port=port, ssh_config=ssh_config, log=log, pid=proc.pid, user=user, home=home,
                   environment=tuple(environment.items()))
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        _end_masters(d)
        shutil.rmtree(d, ignore_errors=True)
        if home != d:
            shutil.rmtree(home, ignore_errors=True)


def _end_masters(d: Path) -> None:
    """Stop every ssh master whose socket is under ``d`` (they outlive their client: ``ControlPersist``)."""
    for sock in d.rglob("*"):
        if sock.is_socket():
            subprocess.run(["ssh", "-F", str(d / "ssh_config"), "-o", f"ControlPath={sock}", "-O", "exit", HOST],
                           capture_output=True,
                           timeout=30, stdin=subprocess.DEVNULL, check=False)
