"""Old import paths of modules that moved: each old module is a shim made by :func:`moved`,
which re-exports the new module's names and says once, as a DeprecationWarning, where they
live now."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = ["moved"]


def moved(old: str, new: str) -> Any:
    """The module ``new``, imported for the shim at ``old`` (with the warning)."""
    warnings.warn(f"{old} moved to {new}; import it from there", DeprecationWarning, stacklevel=3)
    return importlib.import_module(new)
