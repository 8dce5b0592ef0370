"""The "web" front-end: serve one goldfive command's TUI to browsers through textual-serve.

Each browser tab starts ``python -m goldfive_tui.cli COMMAND...`` under Textual's web driver.
With a token (required off loopback), every request must carry it: the first page load as
``?token=...``, which sets an HttpOnly, SameSite=Strict cookie the websocket then sends.
"""

from __future__ import annotations

import hmac
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from textual_serve.server import Server

_COOKIE = "goldfive_web_token"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def command_line(command: list[str]) -> str:
    """The shell command textual-serve starts for each tab."""
    return shlex.join([sys.executable, "-m", "goldfive_tui.cli", *command])


def token_middleware(token: str) -> Any:
    """An aiohttp middleware that lets a request through only with the token (query or cookie)."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.query.get("token") or request.cookies.get(_COOKIE, "")
        if not hmac.compare_digest(given.encode(), token.encode()):
            return web.Response(status=401, text="goldfive web: this server needs its token: open /?token=TOKEN\n")
        response = await handler(request)
        if request.query.get("token") and not response.prepared:
            response.set_cookie(_COOKIE, token, httponly=True, samesite="Strict")
        return response

    return check


class GoldfiveWebServer(Server):  # type: ignore[misc]
    """textual-serve's Server with goldfive's title and the token check."""

    def __init__(self, command: list[str], *, host: str, port: int, token: str | None = None) -> None:
        super().__init__(command_line(command), host=host, port=port, title=f"goldfive {' '.join(command)}")
        self.token = token

    async def _make_app(self) -> web.Application:
        # textual-serve 1.1.3 (pinned) builds its aiohttp app here; the middleware goes in front.
        app: web.Application = await super()._make_app()
        if self.token:
            app.middlewares.append(token_middleware(self.token))
        return app


def open_web(command: list[str], *, host: str, port: int, token: str | None = None) -> int:
    """Serve until Ctrl+C. Returns the exit code."""
    server = GoldfiveWebServer(command, host=host, port=port, token=token)
    server.serve()
    return 0
