import os

# Snapshot and TUI tests render colours; a NO_COLOR in the environment would change them.
os.environ.pop("NO_COLOR", None)
# The TUI remembers the theme a person picked; tests must neither read nor change a real one.
if "GOLDFIVE_CONFIG_DIR" not in os.environ:
    import tempfile

    os.environ["GOLDFIVE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="goldfive-test-config-")

# The chaos suite's options (--chaos-long, --chaos-seed) must be registered before collection.
from tests.chaos.options import pytest_addoption  # noqa: E402,F401
