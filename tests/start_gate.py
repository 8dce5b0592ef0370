"""Start several child processes' real work at the same moment: a FIFO the test holds open for
writing. Each child, once everything is imported, calls :func:`wait_at_gate` (it says
``ready`` on stdout and blocks reading the FIFO); the test's :meth:`StartGate.release` closes
the last writer, and every child's read returns at once. No sleeps, no polling."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def wait_at_gate(go: str) -> None:
    """In the child: ``ready`` on stdout, then block until the test releases the gate."""
    with open(go, "rb") as f:  # the test holds the write end open, so this does not block
        print("ready", flush=True)
        f.read()  # EOF when the test closes its end


class StartGate:
    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self._fd = os.open(path, os.O_RDWR)  # a writer from the start: the children's opens never block

    def release(self, procs: list[subprocess.Popen[str]]) -> None:
        """Wait until every child said ``ready``, then let them all go."""
        for p in procs:
            assert p.stdout is not None
            line = p.stdout.readline().strip()
            assert line == "ready", f"a child did not reach the gate: {line!r}"
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
