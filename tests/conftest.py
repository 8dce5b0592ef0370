import os

# Snapshot and TUI tests render colours; a NO_COLOR in the environment would change them.
os.environ.pop("NO_COLOR", None)

# The chaos suite's options (--chaos-long, --chaos-seed) must be registered before collection.
from tests.chaos.options import pytest_addoption  # noqa: E402,F401
