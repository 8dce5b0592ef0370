"""The chaos suite's command-line options, registered by ``tests/conftest.py`` (options have
to be known before pytest collects, so they cannot live in ``tests/chaos/conftest.py`` alone).

``--chaos-long`` scales every count up (the long pass); ``--chaos-seed N`` reproduces a run.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("chaos", "adversarial (chaos) tests in tests/chaos")
    group.addoption("--chaos-long", action="store_true", default=False, help="run the long chaos pass (counts scaled up)")
    group.addoption("--chaos-seed", type=int, default=None, help="seed of the chaos pass (printed by every pass)")
