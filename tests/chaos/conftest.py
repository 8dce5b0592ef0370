"""Fixtures of the chaos suite: the seed, the scale (short or long pass) and the summary."""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass

import pytest

from tests.chaos.tally import TALLY

_SESSION_SEED: list[int] = []
SHORT_PASS_SEED = 20261130


def chaos_seed(config: pytest.Config) -> int:
    if not _SESSION_SEED:
        given = config.getoption("--chaos-seed", default=None)
        if given is not None:
            seed = int(given)
        elif config.getoption("--chaos-long", default=False):
            seed = int.from_bytes(os.urandom(4), "big")  # the long pass explores new ground
        else:
            seed = SHORT_PASS_SEED  # CI's short pass is the same every run: a red CI is a real one
        _SESSION_SEED.append(seed)
    return _SESSION_SEED[0]


@dataclass(frozen=True)
class Chaos:
    """What a chaos test needs: its own seeded Random, and the scale of this pass."""

    seed: int
    long: bool
    rng: random.Random

    def n(self, short: int, long: int) -> int:
        return long if self.long else short

    def deadline(self, short_s: float, long_s: float) -> float:
        """A monotonic time after which a loop starts nothing new (counts bound it too)."""
        return time.monotonic() + (long_s if self.long else short_s)

    def why(self, node: str) -> str:
        """Appended to assertion messages: how to reproduce."""
        return f"(reproduce: python -m pytest '{node}' --chaos-seed {self.seed}{' --chaos-long' if self.long else ''})"


@pytest.fixture
def chaos(request: pytest.FixtureRequest) -> Chaos:
    seed = chaos_seed(request.config)
    # Each test draws from its own stream, so one test's draws do not shift another's.
    return Chaos(seed, bool(request.config.getoption("--chaos-long", default=False)), random.Random(f"{seed}:{request.node.nodeid}"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    lines = TALLY.lines()
    if not lines:
        return
    long = bool(config.getoption("--chaos-long", default=False))
    terminalreporter.section(f"chaos {'long' if long else 'short'} pass, seed {chaos_seed(config)}")
    for line in lines:
        terminalreporter.write_line(line)
