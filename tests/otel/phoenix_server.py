"""Arize Phoenix, started on loopback for a test: a real OTel backend with its own client."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from goldfive.testing import free_port as _free_port

#: Phoenix imports a lot (pandas, pyarrow, SQLAlchemy, its migrations): on the CI machine it
#: answers its health check 10-15 s after the start.
START_TIMEOUT_S = 120


class Phoenix:
    def __init__(self, workdir: Path) -> None:
        self.port, self.grpc_port = _free_port(), _free_port()
        self.workdir = workdir
        self.log = workdir / "phoenix.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start_s = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def otlp_http(self) -> str:
        return f"{self.url}/v1/traces"

    def start(self) -> Phoenix:
        env = dict(os.environ, PHOENIX_PORT=str(self.port), PHOENIX_GRPC_PORT=str(self.grpc_port), PHOENIX_HOST="127.0.0.1",
                   PHOENIX_WORKING_DIR=str(self.workdir), PHOENIX_TELEMETRY_ENABLED="false")  # fmt: skip
        for name in [k for k in env if k.startswith("OTEL_") or k == "PHOENIX_SQL_DATABASE_URL"]:
            env.pop(name)
        began = time.monotonic()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = began + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"phoenix exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as r:
                    if r.status == 200:
                        self.start_s = time.monotonic() - began
                        return self
            except OSError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"phoenix did not answer within {START_TIMEOUT_S}s: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
