"""The fleet tests reuse the hub tests' helpers and their ``reap`` fixture."""

from tests.hub.conftest import reap  # noqa: F401
