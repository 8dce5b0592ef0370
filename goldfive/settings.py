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


def data_dir(environ: Mapping[str, str] | None = None) -> str:
    """Where live runs are recorded: GOLDFIVE_DATA_DIR, else the user's data directory."""
    env = os.environ if environ is None else environ
    override = env.get("GOLDFIVE_DATA_DIR")
    if override:
        return override
    import platformdirs

    return platformdirs.user_data_dir("goldfive", appauthor=False)


def default_db_path(environ: Mapping[str, str] | None = None) -> str:
    """The recording of ``goldfive run``, ``resume`` and ``replay``: the person's own runs."""
    return os.path.join(data_dir(environ), "runs.sqlite")


def hub_db_path(environ: Mapping[str, str] | None = None) -> str:
    """The database of ``goldfive serve``: a file of its own, not the person's recording, so
    a hub and a connected runner on one machine never write the same file, and what runners
    send a hub never sits among the runs ``goldfive resume`` may continue."""
    return os.path.join(data_dir(environ), "hub.sqlite")


#: The environment variables that hold secrets, each named after its option (GOLDFIVE_ and
#: the option's name); each option also has a ``-file`` form (goldfive.cli.tokens). A file or
#: the environment keeps a secret out of the process list, which every user can read.
#: GOLDFIVE_TOKEN (``--token``): an operator token; ``serve`` accepts it, ``ctl`` and
#: ``attach`` present it. GOLDFIVE_RUNNER_TOKEN (``serve --runner-token``): a runner token
#: ``serve`` accepts. GOLDFIVE_HUB_TOKEN (``run --hub-token``, ``Runner(hub=...)``): the
#: token a run presents to its hub, GOLDFIVE_TOKEN when unset. GOLDFIVE_LLM_API_KEY or
#: OPENAI_API_KEY (``--api-key``): the LLM server's key (LLMSettings).
TOKEN_ENV = "GOLDFIVE_TOKEN"
RUNNER_TOKEN_ENV = "GOLDFIVE_RUNNER_TOKEN"
HUB_TOKEN_ENV = "GOLDFIVE_HUB_TOKEN"


def remote_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The operator token for ``goldfive serve`` / ``ctl`` / ``attach`` (GOLDFIVE_TOKEN), or None."""
    env = os.environ if environ is None else environ
    return env.get(TOKEN_ENV) or None


def runner_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The runner token ``goldfive serve`` accepts (GOLDFIVE_RUNNER_TOKEN), or None."""
    env = os.environ if environ is None else environ
    return env.get(RUNNER_TOKEN_ENV) or None


def hub_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The token a run presents to its hub: GOLDFIVE_HUB_TOKEN, else GOLDFIVE_TOKEN, else None."""
    env = os.environ if environ is None else environ
    return env.get(HUB_TOKEN_ENV) or remote_token(env)


def redact_dsn(dsn: str) -> str:
    """A database URL without its password, for messages (``postgresql://u:***@host/db``)."""
    import re

    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", dsn)


#: ``goldfive notify ntfy``: an access token for the ntfy server (sent as a bearer token).
NTFY_TOKEN_ENV = "NTFY_TOKEN"
#: ``goldfive notify slack``: the incoming webhook's URL (a secret: whoever has it may post).
SLACK_WEBHOOK_ENV = "SLACK_WEBHOOK_URL"


def ntfy_token(environ: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    return env.get(NTFY_TOKEN_ENV) or None


def slack_webhook_url(environ: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    return env.get(SLACK_WEBHOOK_ENV) or None
