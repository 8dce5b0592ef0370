"""Prompt templates are package data (``goldfive/prompts/*.txt``), rendered with string.Template.

``$name`` placeholders keep JSON braces in the prompts literal.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from string import Template


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """The text of ``goldfive/prompts/<name>.txt``."""
    return resources.files("goldfive").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")


def render_prompt(name: str, **values: object) -> str:
    """Fill the template; a missing value raises KeyError (a bug in the caller, not the model)."""
    return Template(load_prompt(name)).substitute({k: str(v) for k, v in values.items()})
