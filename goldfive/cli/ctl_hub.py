"""Moved to :mod:`goldfive.cli.ctl.hub` (``goldfive ctl`` is a package)."""

import sys as _sys

from goldfive._moved import moved as _moved

_sys.modules[__name__] = _moved("goldfive.cli.ctl_hub", "goldfive.cli.ctl.hub")
