"""Moved to :mod:`goldfive.inputs` (a hub builds runs from it without importing the CLI)."""

import sys as _sys

from goldfive._moved import moved as _moved

_sys.modules[__name__] = _moved("goldfive.cli.inputs", "goldfive.inputs")
