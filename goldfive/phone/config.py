"""``serve --http``'s settings, checked without the HTTP server (the core has no aiohttp)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from goldfive.errors import ServeConfigError
from goldfive.remote.auth import is_loopback, split_host_port

__all__ = ["DEFAULT_LINK_TTL_S", "PhoneConfig", "check_config"]

#: How long a link decides, at most (``--link-ttl``).
DEFAULT_LINK_TTL_S = 24 * 3600.0


@dataclass(frozen=True)
class PhoneConfig:
    """``serve --http`` and what goes with it."""

    listen: str
    public_url: str = ""
    link_ttl_s: float = DEFAULT_LINK_TTL_S
    tls_cert: str | None = None
    tls_key: str | None = None
    allow_hosts: tuple[str, ...] = ()


def check_config(config: PhoneConfig) -> tuple[str, int, str]:
    """(host, port, scheme), or ServeConfigError: off loopback the pages need TLS, here or at a
    proxy whose https URL is ``--public-url``."""
    host, port_text = split_host_port(config.listen)
    if not port_text.isdigit() or not 0 <= int(port_text) < 65536:
        raise ServeConfigError(f"--http {config.listen!r} must be HOST:PORT, e.g. 127.0.0.1:8780")
    if (config.tls_cert is None) != (config.tls_key is None):
        raise ServeConfigError("TLS for --http needs both --tls-cert and --tls-key")
    scheme = "https" if config.tls_cert else "http"
    public = config.public_url
    if public:
        parts = urlsplit(public)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") or parts.query:
            raise ServeConfigError(f"--public-url {public!r} must be an origin, e.g. https://goldfive.example.com")
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            raise ServeConfigError(f"--public-url {public!r} must be https: a link decides, and travels in the clear over http")
    if not is_loopback(host) and scheme != "https" and not public.startswith("https://"):
        raise ServeConfigError(
            f"refusing to serve approval pages on {config.listen} without TLS: give --tls-cert/--tls-key, "
            "or put a TLS proxy in front and give its https URL with --public-url"
        )
    if not config.link_ttl_s > 0:
        raise ServeConfigError(f"--link-ttl must be a positive number of seconds, got {config.link_ttl_s}")
    return host, int(port_text), scheme
