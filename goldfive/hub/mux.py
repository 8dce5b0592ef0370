"""Moved to :mod:`goldfive.link.mux` (the runner's and client's end, which imports no server code)."""

import sys as _sys

from goldfive._moved import moved as _moved

_sys.modules[__name__] = _moved("goldfive.hub.mux", "goldfive.link.mux")
