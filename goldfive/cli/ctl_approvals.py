"""Moved to :mod:`goldfive.cli.ctl.approvals` (``goldfive ctl`` is a package)."""

import sys as _sys

from goldfive._moved import moved as _moved

_sys.modules[__name__] = _moved("goldfive.cli.ctl_approvals", "goldfive.cli.ctl.approvals")
