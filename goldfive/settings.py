"""Configuration read from the environment, in exactly one place."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from goldfive.watchdog.config import WatchdogConfig

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


def os_user() -> str:
    """The person at this terminal, as a control's author: the OS user name ("unknown" when
    this uid has none, as in a bare container)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def client_name(default: str, environ: Mapping[str, str] | None = None) -> str:
    """The client a control is sent through: GOLDFIVE_CLIENT (``goldfive web`` sets "web" for
    the TUI it serves), else ``default``."""
    env = os.environ if environ is None else environ
    return env.get("GOLDFIVE_CLIENT") or default


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


def _number(env: Mapping[str, str], name: str, default: float, kind: type[int] | type[float]) -> float:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return kind(raw.strip())
    except ValueError:
        from goldfive.errors import GoldfiveError

        raise GoldfiveError(f"{name}={raw!r} is not a number") from None


def watchdog_config(environ: Mapping[str, str] | None = None) -> "WatchdogConfig":
    """The watchdog's thresholds for runs the command line starts: GOLDFIVE_WATCHDOG=off turns
    it off; GOLDFIVE_WATCHDOG_REPEAT_CALLS, _PING_PONG_CYCLES, _STALL_S, _STALL_MODEL_CALLS,
    _REPEAT_OUTPUTS and _TIMEOUT_FACTOR set its thresholds (see WatchdogConfig)."""
    from goldfive.watchdog.config import WatchdogConfig

    env = os.environ if environ is None else environ
    d = WatchdogConfig()
    try:
        return WatchdogConfig(
            enabled=env.get("GOLDFIVE_WATCHDOG", "on").strip().lower() not in ("off", "0", "false", "no"),
            repeat_calls=int(_number(env, "GOLDFIVE_WATCHDOG_REPEAT_CALLS", d.repeat_calls, int)),
            ping_pong_cycles=int(_number(env, "GOLDFIVE_WATCHDOG_PING_PONG_CYCLES", d.ping_pong_cycles, int)),
            stall_s=_number(env, "GOLDFIVE_WATCHDOG_STALL_S", d.stall_s, float),
            stall_model_calls=int(_number(env, "GOLDFIVE_WATCHDOG_STALL_MODEL_CALLS", d.stall_model_calls, int)),
            repeat_outputs=int(_number(env, "GOLDFIVE_WATCHDOG_REPEAT_OUTPUTS", d.repeat_outputs, int)),
            timeout_factor=_number(env, "GOLDFIVE_WATCHDOG_TIMEOUT_FACTOR", d.timeout_factor, float),
        )
    except ValueError as exc:
        from goldfive.errors import GoldfiveError

        raise GoldfiveError(str(exc)) from None


@dataclass(frozen=True)
class OTelSettings:
    """Where ``--otel`` / ``OTelSink`` send traces, from the standard OpenTelemetry variables:
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL ("http/protobuf", the
    default, or "grpc"); OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as it is) or
    OTEL_EXPORTER_OTLP_ENDPOINT (http: "/v1/traces" is appended); the _HEADERS of either
    ("k=v,k2=v2", values URL-encoded); OTEL_SERVICE_NAME; and
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true to send prompts, arguments and
    results (off by default)."""

    protocol: str = "http/protobuf"
    endpoint: str = "http://localhost:4318/v1/traces"
    headers: tuple[tuple[str, str], ...] = ()
    service_name: str = "goldfive"
    capture_content: bool = False
    timeout_s: float = 10.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "OTelSettings":
        from urllib.parse import unquote

        from goldfive.errors import GoldfiveError

        env = os.environ if environ is None else environ
        protocol = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").strip()
        if protocol not in ("http/protobuf", "grpc"):
            raise GoldfiveError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: goldfive exports with \"http/protobuf\" or \"grpc\"")
        endpoint = (env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or "").strip()
        if not endpoint:
            base = (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").strip()
            if protocol == "grpc":
                endpoint = base or "http://localhost:4317"
            else:
                endpoint = (base.rstrip("/") + "/v1/traces") if base else "http://localhost:4318/v1/traces"
        raw = env.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or env.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
        headers: list[tuple[str, str]] = []
        for part in raw.split(","):
            if not part.strip():
                continue
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise GoldfiveError("OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs separated by commas")
            headers.append((unquote(key.strip()).lower(), unquote(value.strip())))
        timeout_ms = env.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or env.get("OTEL_EXPORTER_OTLP_TIMEOUT") or ""
        try:
            timeout_s = float(timeout_ms) / 1000 if timeout_ms.strip() else 10.0
        except ValueError:
            raise GoldfiveError(f"OTEL_EXPORTER_OTLP_TIMEOUT={timeout_ms!r} is not a number of milliseconds") from None
        capture = (env.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT") or "").strip().lower() == "true"
        return cls(protocol, endpoint, tuple(headers), (env.get("OTEL_SERVICE_NAME") or "goldfive").strip() or "goldfive", capture, timeout_s)


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
