"""What the ``goldfive web`` tests share: a real server process, the URL it prints, Chromium.

:class:`WebProcess` starts ``goldfive web ...`` in its own session, reads everything it prints
(on a thread, so a full pipe never blocks the server) and finds the URL with the start's token
that it prints on start. Chromium is Debian's (``scripts/system-deps.sh``), driven by Playwright.
"""

from __future__ import annotations

import base64
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
from goldfive.testing import free_port  # noqa: F401  (the web tests take it from here)

CHROMIUM = "/usr/bin/chromium"
#: As root in a closed network: no sandbox, no background connections (they are refused anyway).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
#: The URL ``goldfive web`` prints on start: ``http://HOST:PORT/?token=TOKEN``.
START_URL = re.compile(r"(http://(\S+?):(\d+))/\?token=(\S+)")


class WebProcess:
    """``goldfive web ARGS...`` running as a child process in its own session."""

    def __init__(self, args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> None:
        # The caller's env as given; by default this process's, without a web token of its own.
        self.env = dict(os.environ) if env is None else dict(env)
        if env is None:
            self.env.pop("GOLDFIVE_WEB_TOKEN", None)
        self.env.pop("NO_COLOR", None)
        self.env["XDG_DATA_HOME"] = str(tmp_path / "data")
        self.db = tmp_path / "data" / "goldfive" / "runs.sqlite"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "goldfive_tui.cli", "web", *args],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self._out = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for chunk in iter(lambda: self.proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
            with self._lock:
                self._out += chunk

    def output(self) -> str:
        with self._lock:
            return ANSI.sub(b"", bytes(self._out)).decode("utf-8", "replace")

    def start_url(self, timeout: float = 30) -> re.Match[str]:
        """The printed URL with the token (groups: origin, host, port, token)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = START_URL.search(self.output())
            if found:
                return found
            if self.proc.poll() is not None:
                time.sleep(0.2)
                raise AssertionError(f"goldfive web exited {self.proc.returncode}: {self.output()}")
            time.sleep(0.05)
        raise AssertionError(f"goldfive web printed no URL with a token within {timeout} s: {self.output()!r}")

    def wait_http(self, url: str, expect: int = 200, **kw: object) -> httpx.Response:
        deadline = time.monotonic() + 30
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"goldfive web exited {self.proc.returncode}: {self.output()}")
            try:
                r = httpx.get(url, timeout=2, **kw)  # type: ignore[arg-type]
                if r.status_code == expect:
                    return r
                last = f"{r.status_code} {r.text[:200]!r}"
            except httpx.TransportError as exc:
                last = repr(exc)
            time.sleep(0.2)
        raise AssertionError(f"{url} did not answer {expect} within 30 s (last: {last})")

    def stop(self) -> None:
        """Ctrl-C to its process group, then SIGKILL to what is left of it (the tabs' app
        processes are in the same group; nothing may outlive the test). The leader is reaped
        only after that: until then its pid, the group's id, cannot be given to another
        process, so the SIGKILL cannot reach a stranger's group."""
        if self.proc.returncode is None:
            pid = self.proc.pid
            os.killpg(pid, signal.SIGINT)  # not reaped yet: the group is still ours
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and not _exited_unreaped(pid):
                time.sleep(0.05)
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self._reader.join(timeout=5)


def _exited_unreaped(pid: int) -> bool:
    """Whether child ``pid`` has exited, leaving it unreaped (a zombie keeps its pid)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def acked_pause(db: Path) -> bool:
    from goldfive.recording import open_recording

    if not db.exists():
        return False
    rec = open_recording(db)
    for ev in rec.events:
        if ev.WhichOneof("payload") == "control_acked" and ev.control_acked.kind == "PAUSE":
            return bool(ev.control_acked.ack.result == 1)
    return False


_SEQUENCE = re.compile(rb"\x1b\[([0-9;?$]*)([A-Za-z@])|\x1b\][^\x07]*\x07|\x1b.|[\r\n]|[^\x1b\r\n]+", re.S)


def terminal_rows(frames: list[bytes], width: int, height: int) -> list[str]:
    """The terminal screen the page shows after ``frames`` (the app's output as the browser
    received it; textual-serve's JSON meta frames are skipped): Textual draws by cursor
    positioning (``ESC[row;colH``) and text, which is all this follows."""
    rows = [[" "] * width for _ in range(height)]
    y = x = 0
    for frame in frames:
        if frame.startswith(b'["'):  # ["pong", ...] and the like
            continue
        for m in _SEQUENCE.finditer(frame):
            token = m.group(0)
            if m.group(2) is not None:
                if m.group(2) == b"H":
                    parts = [int(p) if p.isdigit() else 1 for p in m.group(1).split(b";")] + [1, 1]
                    y, x = parts[0] - 1, parts[1] - 1
                elif m.group(2) == b"J" and m.group(1) == b"2":
                    rows = [[" "] * width for _ in range(height)]
            elif token == b"\r":
                x = 0
            elif token == b"\n":
                y += 1
            elif not token.startswith(b"\x1b"):
                for ch in token.decode("utf-8", "replace"):
                    if 0 <= y < height and 0 <= x < width:
                        rows[y][x] = ch
                    x += 1
    return ["".join(r) for r in rows]


class RawResponse:
    """What a server answered to :func:`raw_request`: status, headers (lower-case names), body."""

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name.lower()), None)

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name.lower()]

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def raw_request(
    port: int, target: str = "/", *, method: str = "GET", headers: Sequence[tuple[str, str]] = (),
    websocket: bool = False, timeout: float = 10,
) -> RawResponse:
    """One request over a fresh socket, with exactly the headers given (Host, Origin and Cookie
    included: no client library adds or rewrites any). ``websocket``: an upgrade request; a 101
    is read up to its headers and the socket closed."""
    response, sock = exchange(port, target, method=method, headers=headers, websocket=websocket, timeout=timeout)
    sock.close()
    return response


def exchange(
    port: int, target: str = "/", *, method: str = "GET", headers: Sequence[tuple[str, str]] = (),
    websocket: bool = False, timeout: float = 10,
) -> tuple[RawResponse, socket.socket]:
    """:func:`raw_request`, handing back the socket too (open, for a websocket the server accepted)."""
    lines = [f"{method} {target} HTTP/1.1", *(f"{k}: {v}" for k, v in headers)]
    if websocket:
        key = base64.b64encode(os.urandom(16)).decode()
        lines += ["Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    else:
        lines.append("Connection: close")
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        first, *rest = head.decode("latin-1").split("\r\n")
        status = int(first.split()[1])
        parsed = [(k.strip().lower(), v.strip()) for k, _, v in (line.partition(":") for line in rest)]
        if status != 101:
            length = next((int(v) for k, v in parsed if k == "content-length"), None)
            while length is None or len(body) < length:
                chunk = s.recv(65536)
                if not chunk:
                    break
                body += chunk
    except BaseException:
        s.close()
        raise
    return RawResponse(status, parsed, body), s


def set_cookie(response: RawResponse) -> tuple[str, str, str]:
    """The one cookie a response sets: name, value and its attributes (lower-case)."""
    (line,) = response.all("set-cookie")
    pair, _, attrs = line.partition(";")
    name, _, value = pair.strip().partition("=")
    return name, value.strip('"'), attrs.lower()
