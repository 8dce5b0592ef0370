"""SIGINT as a test found it: the state a test must leave, and the check that puts it back.

A test that leaves SIGINT ignored or blocked in the test process (a worker of the suite) breaks
the tests after it on that worker: a child process inherits both, so a Ctrl-C a later test sends
its child never reaches it (tests/cli/test_cli_interrupt.py failed so in CI); a handler left
behind swallows the Ctrl-C meant for the run. tests/conftest.py checks after every test."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SigintState:
    #: SIGINT's handler in this process (a callable, SIG_IGN or SIG_DFL).
    handler: Any
    #: Whether the calling thread (the test's: the main thread) blocks SIGINT.
    blocked: bool


def sigint_state() -> SigintState:
    return SigintState(signal.getsignal(signal.SIGINT), signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ()))


def put_back(before: SigintState, test: str) -> str | None:
    """Restore SIGINT to ``before`` if ``test`` changed it, and say how it changed (None: it
    did not)."""
    after = sigint_state()
    if after == before:
        return None
    signal.signal(signal.SIGINT, before.handler)
    signal.pthread_sigmask(signal.SIG_BLOCK if before.blocked else signal.SIG_UNBLOCK, {signal.SIGINT})
    changes = []
    if after.handler != before.handler:
        changes.append(f"its handler {before.handler!r} -> {after.handler!r}")
    if after.blocked != before.blocked:
        changes.append("blocked in the main thread" if after.blocked else "unblocked in the main thread")
    return f"{test} left SIGINT changed in the test process ({'; '.join(changes)}); put back for the tests after it"
