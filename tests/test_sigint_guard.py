"""The suite's SIGINT guard (tests/sigint_guard.py, used by tests/conftest.py after every test):
a test that leaves SIGINT changed is named, and SIGINT is put back for the tests after it.
These change SIGINT relative to what they found: a suite started in the background by a
non-interactive shell starts with SIGINT ignored."""

from __future__ import annotations

import signal

from tests.sigint_guard import put_back, sigint_state


def _mine(signum: int, frame: object) -> None:
    pass


def test_a_test_that_leaves_its_own_sigint_handler_is_named_and_the_handler_put_back() -> None:
    before = sigint_state()
    signal.signal(signal.SIGINT, _mine)
    said = put_back(before, "tests/x.py::test_handles")
    assert said is not None and said.startswith("tests/x.py::test_handles left SIGINT changed") and "_mine" in said
    assert sigint_state() == before and signal.getsignal(signal.SIGINT) == before.handler


def test_a_test_that_leaves_sigint_blocked_or_unblocked_is_named_and_the_mask_put_back() -> None:
    before = sigint_state()
    signal.pthread_sigmask(signal.SIG_UNBLOCK if before.blocked else signal.SIG_BLOCK, {signal.SIGINT})
    said = put_back(before, "tests/x.py::test_masks")
    assert said is not None and "tests/x.py::test_masks" in said and "blocked in the main thread" in said
    assert sigint_state() == before and (signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ())) == before.blocked


def test_a_test_that_puts_sigint_back_itself_passes() -> None:
    before = sigint_state()
    old = signal.signal(signal.SIGINT, _mine)
    signal.signal(signal.SIGINT, old)
    assert put_back(before, "tests/x.py::test_tidy") is None
