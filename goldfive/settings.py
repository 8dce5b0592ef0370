"""Configuration read from the environment, in exactly one place."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_LLM_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class LLMSettings:
    """Where an OpenAI-compatible model server lives and how to authenticate to it."""

    base_url: str = DEFAULT_LLM_BASE_URL
    model: str = ""
    api_key: str = ""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "LLMSettings":
        """GOLDFIVE_LLM_* first, then the OPENAI_* names most servers' docs use."""
        env = os.environ if environ is None else environ
        return cls(
            base_url=env.get("GOLDFIVE_LLM_BASE_URL") or env.get("OPENAI_BASE_URL") or DEFAULT_LLM_BASE_URL,
            model=env.get("GOLDFIVE_LLM_MODEL", ""),
            api_key=env.get("GOLDFIVE_LLM_API_KEY") or env.get("OPENAI_API_KEY") or "",
        )
