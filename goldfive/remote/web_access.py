"""Who may drive ``goldfive web`` (docs/web.md#the-origin-rules): a browser page, only from its own origin
and with the start's token; never the websocket from another origin or host.

Every start has a token (given, or a random one printed in the URL to open). The first request
that carries it as ``?token=`` is answered by a redirect to the same URL without it, setting a
cookie. Browsers do not isolate cookies by port, and SameSite counts every port of a host as
the same site, so a page served on another port of the same host receives that cookie and may
send it along: the cookie is therefore named after this server's port, its value is an HMAC of
the token with the page's origin (never the token itself), and the checks that keep other pages
out are Host and Origin:

* ``Host`` must name this server (its listen address, the address the connection arrived on,
  ``localhost`` / 127.0.0.1 / [::1] on loopback, or a name given with ``--allow-host``) with its
  port, on every request: a DNS-rebinding page reaches the socket under its own name and stops
  here.
* ``Origin`` must be the page's own origin (``http://`` + that Host) on the websocket and on any
  request that is not GET or HEAD, and on a GET that carries one.

The same rules serve the hub's approval pages (``goldfive serve --http``, goldfive.phone), which
may be served over TLS (``scheme="https"``) or behind a TLS proxy at a public URL (``public``:
its Host is accepted and its origin is the page's). Those pages are opened by a signed link, not
the token: :meth:`WebAccess.check_origin` applies the Host and Origin rules alone.

This module decides; the web front-end (tui/web.py, aiohttp) acts on the decision. No HTTP
library here, so the rules are tested without a server and stay in the core.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
import socket
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from goldfive.errors import ServeConfigError

__all__ = ["Decision", "Verdict", "WebAccess", "WebRequest", "bind", "check_token", "new_token", "read_token_file"]

#: Methods that change nothing; any other needs the page's own Origin.
SAFE_METHODS = frozenset({"GET", "HEAD"})
#: The names of loopback that a browser on this machine may use for it.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})
_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")
_COOKIE_CONTEXT = b"goldfive web cookie\n"


def new_token() -> str:
    """A random token for a start that was given none (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def check_token(token: str, *, source: str = "the token") -> str:
    """``token`` if it can be one: not empty, no whitespace or control characters (it travels in
    a URL and is typed or pasted); else ServeConfigError naming ``source``."""
    if not token:
        raise ServeConfigError(f"{source} is empty")
    if any(ch.isspace() or not ch.isprintable() for ch in token):
        raise ServeConfigError(f"{source} contains whitespace or control characters")
    return token


def read_token_file(path: str | Path) -> str:
    """The token in ``path`` (surrounding whitespace and the final newline dropped)."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ServeConfigError(f"cannot read the token file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ServeConfigError(f"the token file {path} is not text (UTF-8)") from None
    token = text.strip()
    if not token:
        raise ServeConfigError(f"the token file {path} is empty")
    return check_token(token, source=f"the token in {path}")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: any free port). ``localhost`` binds
    127.0.0.1; ``::`` also takes IPv4 where the system allows. Raises OSError."""
    host = "127.0.0.1" if host.lower() == "localhost" else host
    if ":" in host:
        dual = host == "::" and socket.has_dualstack_ipv6()
        return socket.create_server((host, port), family=socket.AF_INET6, dualstack_ipv6=dual)
    return socket.create_server((host or "0.0.0.0", port))


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _local_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a connection arrived on; an IPv4 client of a dual-stack socket shows as
    ``::ffff:a.b.c.d`` there, which its browser calls ``a.b.c.d``."""
    addr = _ip(text)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def _host_name(text: str) -> str | None:
    """A host name or address as the rules compare them (lower case, canonical address)."""
    addr = _ip(text.strip().strip("[]"))
    if addr is not None:
        return str(addr)
    name = text.strip().lower()
    if not _NAME.fullmatch(name) or name.replace(".", "").isdigit():
        return None  # not a DNS name (and not "127.1", which browsers would read as an address)
    return name


#: The port a URL without one means.
DEFAULT_PORTS = {"http": 80, "https": 443}


def _split_origin(value: str) -> tuple[str, str, int] | None:
    """``scheme://host[:port]`` (an Origin header, a public URL's origin): (scheme, name, port)."""
    scheme, sep, rest = value.lower().partition("://")
    if not sep or scheme not in DEFAULT_PORTS:
        return None
    parsed = _split_authority(rest, DEFAULT_PORTS[scheme])
    return None if parsed is None else (scheme, *parsed)


def _split_authority(value: str, default_port: int = 80) -> tuple[str, int] | None:
    """``host[:port]`` as a Host header or an origin writes it, lower-cased: (name, port), the
    name an IP address in canonical form or a DNS name; None if it is neither."""
    value = value.lower()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        addr = _ip(name)
        if not bracket or addr is None or addr.version != 6:
            return None
    else:
        name, colon, port_text = value.partition(":")
        rest = colon + port_text
        addr = _ip(name)
    if rest == "":
        port = default_port
    elif rest.startswith(":") and 1 < len(rest) <= 6 and rest[1:].isascii() and rest[1:].isdigit() and rest[1] != "0":
        port = int(rest[1:])
    else:
        return None
    canonical = str(addr) if addr is not None else _host_name(name)
    return None if canonical is None else (canonical, port)


def _authority(name: str, port: int) -> str:
    return f"[{name}]:{port}" if ":" in name else f"{name}:{port}"


class Verdict(StrEnum):
    """What the front-end does with a request."""

    ALLOW = "allow"
    #: A valid ``?token=``: set the cookie and send the browser to the URL without it (303).
    REDIRECT = "redirect"
    #: No valid cookie or token: 401, and a sentence to open the printed URL.
    NO_TOKEN = "no_token"
    #: Host does not name this server: 403.
    BAD_HOST = "bad_host"
    #: Origin missing where required, or not the page's own: 403.
    BAD_ORIGIN = "bad_origin"


@dataclass(frozen=True)
class WebRequest:
    """The parts of an HTTP request the rules look at, as received."""

    method: str
    #: The Host header ("" when missing).
    host: str
    #: The Origin header (None when missing; several joined by commas, which never match).
    origin: str | None
    #: The address the connection arrived on (this server's side of it).
    local_ip: str
    #: An upgrade to a websocket (or the websocket's path).
    websocket: bool = False
    #: ``?token=`` (None when absent).
    query_token: str | None = None
    #: The value of this server's cookie (:attr:`WebAccess.cookie_name`), None when absent.
    cookie: str | None = None


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    #: The page's origin, ``http://host:port``, when Host was accepted (the cookie is bound to it).
    origin: str = ""
    #: Why it was refused, for the person reading the 403 (never echoes the request).
    reason: str = ""


@dataclass(frozen=True)
class WebAccess:
    """One ``goldfive web`` start: its token, where it listens, the names it answers to."""

    token: str = field(repr=False)
    listen_host: str
    port: int
    #: True when the token was made by this start (so it may be printed in full).
    generated: bool = False
    #: More names browsers may use for this server (``--allow-host``).
    allow_hosts: frozenset[str] = frozenset()
    #: "https" when this server speaks TLS itself.
    scheme: str = "http"
    #: The origin browsers use behind a TLS proxy (``serve --public-url``), "" for none: a Host
    #: naming it is accepted, and the page's origin is then this one.
    public: str = ""

    @classmethod
    def start(cls, listen_host: str, port: int, token: str | None = None, allow_hosts: tuple[str, ...] = ()) -> WebAccess:
        """The access rules of a start: ``token`` if given, else a new random one."""
        names = set()
        for given in allow_hosts:
            name = _host_name(given)
            if name is None:
                raise ServeConfigError(f"--allow-host {given!r} is not a host name or address (give it without a port)")
            names.add(name)
        if listen_host in _WILDCARDS:
            names.add(socket.gethostname().lower())
        return cls(
            token=check_token(token) if token is not None else new_token(),
            listen_host=listen_host, port=port, generated=token is None, allow_hosts=frozenset(names),
        )

    def bound(self, port: int) -> WebAccess:
        """The same start, on the port it got (listening on port 0 picks one)."""
        return replace(self, port=port)

    @property
    def cookie_name(self) -> str:
        return f"goldfive_web_{self.port}"

    def cookie_value(self, origin: str) -> str:
        """What the cookie holds for pages of ``origin``: an HMAC of the token with it."""
        return hmac.new(self.token.encode(), _COOKIE_CONTEXT + origin.encode(), hashlib.sha256).hexdigest()

    def start_urls(self) -> list[str]:
        """The URLs printed on start. A token this start made is printed in full; one that was
        given is not (it may have come from a file to keep it out of sight): ``?token=...``."""
        shown = self.token if self.generated else "..."
        if self.listen_host in _WILDCARDS:
            hosts = [socket.gethostname().lower(), "127.0.0.1" if self.listen_host == "0.0.0.0" else "::1"]
        else:
            hosts = [self.listen_host]
        return [f"{self.scheme}://{_authority(h, self.port)}/?token={shown}" for h in hosts]

    def _names(self, local_ip: str) -> set[str]:
        names = set(self.allow_hosts)
        if self.listen_host not in _WILDCARDS:
            names.add(_host_name(self.listen_host) or self.listen_host)
        local = _local_ip(local_ip)
        if local is not None:
            names.add(str(local))
            if local.is_loopback:
                names |= LOOPBACK_NAMES
        return names

    def page_origin(self, host: str, local_ip: str) -> str | None:
        """``scheme://host:port`` if ``host`` (a Host header) names this server, else None."""
        if self.public:
            public = _split_origin(self.public)
            if public is not None and _split_authority(host, DEFAULT_PORTS[public[0]]) == public[1:]:
                return f"{public[0]}://" + _authority(*public[1:])
        parsed = _split_authority(host, DEFAULT_PORTS.get(self.scheme, 80))
        if parsed is None or parsed[1] != self.port or parsed[0] not in self._names(local_ip):
            return None
        return f"{self.scheme}://" + _authority(*parsed)

    @property
    def secure(self) -> bool:
        """Pages are reached over TLS (here or at the proxy): cookies are ``Secure``."""
        return self.scheme == "https" or self.public.lower().startswith("https://")

    def check_origin(self, request: WebRequest) -> Decision:
        """The Host and Origin rules alone (ALLOW, BAD_HOST or BAD_ORIGIN), for pages a
        signed link opens rather than the token."""
        origin = self.page_origin(request.host, request.local_ip)
        if origin is None:
            return Decision(Verdict.BAD_HOST, reason="the Host header does not name this server")
        if request.origin is not None:
            if _split_origin(request.origin) != _split_origin(origin):
                return Decision(Verdict.BAD_ORIGIN, origin, "the request comes from a page of another origin")
        elif request.websocket or request.method.upper() not in SAFE_METHODS:
            return Decision(Verdict.BAD_ORIGIN, origin, "the request does not say which page it comes from (no Origin)")
        return Decision(Verdict.ALLOW, origin)

    def decide(self, request: WebRequest) -> Decision:
        checked = self.check_origin(request)
        if checked.verdict is not Verdict.ALLOW:
            return checked
        origin = checked.origin
        if request.query_token is not None:
            if hmac.compare_digest(request.query_token.encode(), self.token.encode()):
                return Decision(Verdict.REDIRECT, origin)
            return Decision(Verdict.NO_TOKEN, origin)
        if request.cookie is not None and hmac.compare_digest(request.cookie.encode(), self.cookie_value(origin).encode()):
            return Decision(Verdict.ALLOW, origin)
        return Decision(Verdict.NO_TOKEN, origin)
