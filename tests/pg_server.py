"""A throwaway PostgreSQL server for the tests: Debian's binaries, a temporary data directory,
loopback only, started and stopped by the tests themselves.

PostgreSQL refuses to run as root, so as root the server runs as a dedicated system user
(``goldfive-pg``, created on first use) through ``runuser``. ``scripts/system-deps.sh`` (the
README's test command) installs the ``postgresql`` package when it is missing.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from goldfive.testing import free_port as _free_port

PG_USER = "goldfive-pg"


def pg_bindir() -> Path:
    """The newest installed PostgreSQL's bin directory (Debian layout)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError("PostgreSQL is not installed: run scripts/system-deps.sh (apt-get install postgresql)")
    return Path(found[-1]).parent


def _as_pg_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER], check=True)
    return ["runuser", "-u", PG_USER, "--", *cmd]


@dataclass
class PgServer:
    root: Path
    port: int
    bindir: Path

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def pg_ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(_as_pg_user([str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), *args]),
                              capture_output=True, text=True, check=check, timeout=60)

    def start(self) -> None:
        opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c synchronous_commit=off"
        self.pg_ctl("-o", opts, "-l", str(self.root / "server.log"), "-w", "start")

    def stop(self) -> None:
        self.pg_ctl("-m", "fast", "-w", "stop", check=False)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def start_postgres() -> PgServer:
    """initdb in a fresh temporary directory and start the server on a free loopback port."""
    bindir = pg_bindir()
    root = Path(tempfile.mkdtemp(prefix="goldfive-pg-"))
    if os.geteuid() == 0:
        _as_pg_user(["true"])  # creates the user
        info = pwd.getpwnam(PG_USER)
        os.chown(root, info.pw_uid, info.pw_gid)
    subprocess.run(_as_pg_user([str(bindir / "initdb"), "-D", str(root / "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]),
                   capture_output=True, text=True, check=True, timeout=120)
    server = PgServer(root, _free_port(), bindir)
    server.start()
    return server
