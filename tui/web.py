"""The "web" front-end: serve one goldfive command's TUI to browsers through textual-serve.

Each browser tab starts ``python -m goldfive_tui.cli COMMAND...`` under Textual's web driver.
Every route textual-serve 1.1.3 (pinned) serves (the page ``/``, the websocket ``/ws``,
``/download/{key}`` and the files under ``/static``) goes through one middleware that asks
:class:`goldfive.remote.web_access.WebAccess` about the request and acts on its decision; every
response, refusals and the websocket's upgrade included, carries headers that forbid framing and
referrers. The access log names the path only, never the query (which may hold the token).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from aiohttp.web_runner import GracefulExit
from rich.logging import RichHandler
from textual_serve.server import LogHighlighter, Server, to_int

from goldfive.remote.web_access import Decision, Verdict, WebAccess
from goldfive.remote.web_guard import SECURITY_HEADERS as SECURITY_HEADERS  # re-exported: goldfive web's headers
from goldfive.remote.web_guard import AccessLog, request_view, security_headers, without_token

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: The request key under which the guard leaves the origin of an allowed request's page.
PAGE_ORIGIN = "goldfive_page_origin"

_HTML = '<!doctype html><meta charset="utf-8"><title>goldfive web</title><p>{}</p>\n'
NO_TOKEN_PAGE = _HTML.format(
    "goldfive web needs this start's token: open the URL that <code>goldfive web</code> printed when it started."
)
#: Options of the served command whose value is a secret, shown as "..." in titles and output.
_SECRET_OPTIONS = ("--token", "--hub-token", "--api-key")


def command_line(command: list[str]) -> str:
    """The shell command textual-serve starts for each tab."""
    return shlex.join([sys.executable, "-m", "goldfive_tui.cli", *command])


def title(command: list[str]) -> str:
    """The served command as the page and the start message show it, secrets masked."""
    shown: list[str] = []
    for i, arg in enumerate(command):
        if i and command[i - 1] in _SECRET_OPTIONS:
            shown.append("...")
        elif arg.startswith(tuple(o + "=" for o in _SECRET_OPTIONS)):
            shown.append(arg.split("=", 1)[0] + "=...")
        else:
            shown.append(arg)
    return "goldfive " + " ".join(shown)


def guard(access: WebAccess) -> Any:
    """The aiohttp middleware that enforces ``access`` on every request."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        decision: Decision = access.decide(request_view(request, access.cookie_name))
        if decision.verdict is Verdict.ALLOW:
            request[PAGE_ORIGIN] = decision.origin
            return await handler(request)
        if decision.verdict is Verdict.REDIRECT:
            response = web.Response(status=303, headers={"Location": without_token(request), "Cache-Control": "no-store"})
            response.set_cookie(access.cookie_name, access.cookie_value(decision.origin), httponly=True, samesite="Strict", path="/")
            return response
        if decision.verdict is Verdict.NO_TOKEN:
            return web.Response(status=401, text=NO_TOKEN_PAGE, content_type="text/html")
        return web.Response(status=403, text=_HTML.format(f"goldfive web refused this request: {decision.reason}."), content_type="text/html")

    return check


#: Lays the page out at the device's width (a phone's, not a desktop's 980 px).
VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'


class GoldfiveWebServer(Server):  # type: ignore[misc]
    """textual-serve's Server with goldfive's title, the access rules and a bound socket."""

    def __init__(self, command: list[str], *, access: WebAccess, sock: socket.socket) -> None:
        super().__init__(command_line(command), host=access.listen_host, port=access.port, title=title(command))
        self.access = access
        self.sock = sock

    async def _make_app(self) -> web.Application:
        # textual-serve 1.1.3 builds its app and routes here; the guard goes in front of all of them.
        app: web.Application = await super()._make_app()
        app.middlewares.append(guard(self.access))
        app.on_response_prepare.append(security_headers)
        return app

    async def handle_index(self, request: web.Request) -> web.Response:
        """textual-serve's page with its URLs on the origin the browser used (textual-serve's
        are on the listen address), so the websocket opens on the page's own origin, where its
        cookie is."""
        origin: str = request[PAGE_ORIGIN]
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": "ws" + origin.removeprefix("http") + str(request.app.router["websocket"].url_for()),
            "config": {"static": {"url": f"{origin}/static/"}},
            "application": {"name": self.title},
        }
        page: web.Response = aiohttp_jinja2.render_template("app_index.html", request, context)
        # textual-serve's page has no viewport tag: a phone lays it out 980 px wide (about 100
        # columns of tiny text); with it the terminal is the phone's width (about 40 columns at
        # 390 px), where the run screen turns to one column.
        page.text = (page.text or "").replace("<head>", f"<head>\n    {VIEWPORT}", 1)
        return page

    def initialize_logging(self) -> None:
        # textual-serve's own setup shows the locals of every frame in a traceback; a frame that
        # holds the token would print it.
        logging.basicConfig(
            level="DEBUG" if self.debug else "INFO", format="%(message)s", datefmt="[%X]",
            handlers=[RichHandler(show_path=False, show_time=False, rich_tracebacks=True, tracebacks_show_locals=False,
                                  highlighter=LogHighlighter(), console=self.console)],
        )

    async def on_startup(self, app: web.Application) -> None:
        urls = "\n".join(f"    {url}" for url in self.access.start_urls())
        note = "" if self.access.generated else "\n(the token is the one you gave)"
        self.console.print(
            f"goldfive web: serving [bold]{self.title}[/] (each browser tab runs its own copy)\n"
            f"Open this URL; it carries this start's token, which the browser swaps for a cookie:\n{urls}{note}\n"
            "Press Ctrl+C to stop.",
            highlight=False, soft_wrap=True,
        )

    def serve(self, debug: bool = False) -> None:
        """Serve on the bound socket until Ctrl+C or SIGTERM."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        loop.add_signal_handler(signal.SIGINT, self.request_exit)
        loop.add_signal_handler(signal.SIGTERM, self.request_exit)
        try:
            web.run_app(
                self._make_app(), sock=self.sock, handle_signals=False, loop=loop, print=lambda *args: None,
                access_log_class=AccessLog,
            )
        except GracefulExit:
            pass


def open_web(command: list[str], *, access: WebAccess, sock: socket.socket) -> int:
    """Serve until Ctrl+C. Returns the exit code."""
    # Each tab's command inherits this process's environment (textual-serve copies it); it has
    # no use for the web token.
    os.environ.pop("GOLDFIVE_WEB_TOKEN", None)
    os.environ["GOLDFIVE_CLIENT"] = "web"  # the controls a tab sends say they came from a browser
    GoldfiveWebServer(command, access=access, sock=sock).serve()
    return 0
