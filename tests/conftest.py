import os

# Snapshot and TUI tests render colours; a NO_COLOR in the environment would change them.
os.environ.pop("NO_COLOR", None)
