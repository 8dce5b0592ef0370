"""The aiohttp side of :mod:`goldfive.remote.web_access`: what a request looks like to the rules,
the headers every response carries, the access log. Shared by ``goldfive web`` (tui/web.py) and
the hub's approval pages (goldfive.phone.server), so the rules are applied one way.

Needs aiohttp (the ``[web]`` extra brings it; ``serve --http`` asks for ``[http]``).
"""

from __future__ import annotations

import re

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from goldfive.remote.web_access import WebRequest

__all__ = ["SECURITY_HEADERS", "AccessLog", "request_view", "security_headers", "shown_path", "without_token"]

#: On every response: no other page may frame this one, no URL leaks in a Referer, no sniffing.
SECURITY_HEADERS = {
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
#: A path segment after ``/l/`` is a signed link (a capability): never logged.
_LINK_PATH = re.compile(r"^/l/[^/]+")


def request_view(request: web.Request, cookie_name: str) -> WebRequest:
    """The parts of ``request`` the rules read, exactly as received (a repeated Host is none)."""
    sockname = request.transport.get_extra_info("sockname") if request.transport is not None else None
    origins = request.headers.getall("Origin", [])
    tokens = request.query.getall("token", [])
    return WebRequest(
        method=request.method,
        host=request.headers.get("Host", "") if len(request.headers.getall("Host", [])) == 1 else "",
        origin=",".join(origins) if origins else None,
        local_ip=str(sockname[0]) if sockname else "",
        websocket=request.headers.get("Upgrade", "").lower() == "websocket" or request.path == "/ws",
        query_token=",".join(tokens) if tokens else None,
        cookie=request.cookies.get(cookie_name),
    )


def without_token(request: web.Request) -> str:
    """The URL a token's redirect sends the browser to: the same path and query, without the
    token; always a path on this server (``//host`` would leave it)."""
    url = request.rel_url.with_query([(k, v) for k, v in request.rel_url.query.items() if k != "token"])
    target = str(url)
    return "/" + target.lstrip("/\\")


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """An ``on_response_prepare`` hook: :data:`SECURITY_HEADERS` on every response."""
    response.headers.update(SECURITY_HEADERS)


def shown_path(path: str) -> str:
    """``path`` as a log may show it: a link's token replaced by ``...``."""
    return _LINK_PATH.sub("/l/...", path)


class AccessLog(AbstractAccessLogger):
    """One line per request: client, method, path (never the query string, never a link's
    token), status, time."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info('%s "%s %s" %s %.3fs', request.remote, request.method, shown_path(request.path), response.status, time)
