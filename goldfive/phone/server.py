"""``goldfive serve --http HOST:PORT``: the approval pages, served by the hub's own process.

Who may call what (docs/security.md#who-may-do-what):

* ``GET /l/TOKEN`` and ``POST /l/TOKEN``: a link holder. The page shows the one item the link
  names (goal, task, tool, formatted arguments, age) and its actions; a POST decides it, once,
  before the link expires, as whom the link was issued to (client ``link`` in the ledger),
  through the hub like any control. A forged, used or expired link, or an item already
  decided, is answered with a page saying so and decides nothing; a recipient ``--approvers``
  does not list is refused (403) with a sentence.
* ``GET /``: an operator (one of the hub's operator tokens, as ``?token=``, swapped for a
  cookie as in ``goldfive web``): everything waiting, each with a fresh link issued to that
  operator. Anyone else: 401.
* Every request: the Host and Origin rules of ``goldfive web`` (goldfive.remote.web_access):
  a POST from another origin, or with no Origin, is refused (403); the form carries a CSRF token
  bound to a cookie of this server. Nothing else is served (404).

Off loopback the pages need TLS (``--tls-cert/--tls-key``) or ``--public-url https://...``
behind a TLS proxy. Needs aiohttp: ``pip install 'goldfive[http]'``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import ssl
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from aiohttp import web

from goldfive.approvals.approvers import Approvers
from goldfive.control import AckResult, ControlMessage
from goldfive.errors import ServeConfigError
from goldfive.notify import Notice
from goldfive.phone.config import PhoneConfig, check_config
from goldfive.phone.items import KINDS, Item, item_kind_for_notice
from goldfive.phone.links import Link, LinkBook, LinkProblem
from goldfive.phone.pages import CSP, index_page, item_page, message_page
from goldfive.remote.host import RunHost
from goldfive.remote.web_access import Verdict, WebAccess, bind
from goldfive.remote.web_guard import AccessLog, request_view, security_headers, without_token
from goldfive.run.validate import validate_control

__all__ = ["PhoneServer", "start_phone"]

log = logging.getLogger("goldfive.phone")

#: A POST larger than this is refused before it is read (a control is at most 64 KiB).
MAX_FORM_BYTES = 256 * 1024
_USED_WHAT = {"claimed": "a decision through it is under way", "used": "it was used"}


class PhoneServer:
    """The pages of one hub (see the module's docstring). ``operators``: (name, secret) of
    each operator token; with none, one is generated (name "operator") and printed."""

    def __init__(
        self,
        host: RunHost,
        book: LinkBook,
        config: PhoneConfig,
        *,
        operators: Sequence[tuple[str, str]] = (),
        approvers: Approvers | None = None,
        ack_timeout: float = 30.0,
    ) -> None:
        self.host, self.book, self.config = host, book, config
        self.listen_host, port, self.scheme = check_config(config)
        self.approvers = approvers or Approvers()
        self.ack_timeout = ack_timeout
        self.generated = not operators
        ops = list(operators) or [("operator", secrets.token_urlsafe(32))]
        base = WebAccess.start(self.listen_host, port, ops[0][1], config.allow_hosts)
        self._base = replace(base, scheme=self.scheme, public=config.public_url.rstrip("/"))
        self._operators = [(name, replace(self._base, token=secret)) for name, secret in ops]
        self._runner: web.AppRunner | None = None
        self.port = port

    # -- where it is ---------------------------------------------------------------------
    @property
    def access(self) -> WebAccess:
        return self._base

    @property
    def base_url(self) -> str:
        if self.config.public_url:
            return self.config.public_url.rstrip("/")
        name = self.listen_host
        if name in ("0.0.0.0", "::", ""):
            name = socket.gethostname().lower()
        shown = f"[{name}]" if ":" in name else name
        return f"{self.scheme}://{shown}:{self.port}"

    def index_url(self) -> str:
        token = self._operators[0][1].token if self.generated else "..."
        return f"{self.base_url}/?token={token}"

    @property
    def _cookie(self) -> str:
        return f"goldfive_links_{self.port}"

    # -- links ---------------------------------------------------------------------------
    def link_url(self, item: Item, to: str) -> str:
        token = self.book.issue(item.run_id, item.kind, item.target_id, to=to, ttl_s=self.config.link_ttl_s, not_after_s=item.deadline_s)
        return f"{self.base_url}/l/{token}"

    def notice_link(self, notice: Notice, to: str) -> str:
        """The link of a notice's item for ``to`` ("" when the notice has no page, or the
        item is no longer waiting)."""
        kind = item_kind_for_notice(notice.kind)
        run = self.host.get(notice.run_id)
        if kind is None or run is None:
            return ""
        item = kind.find(notice.run_id, run.state, notice.target_id)
        return self.link_url(item, to) if item is not None else ""

    # -- serving -------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard], client_max_size=MAX_FORM_BYTES)
        app.router.add_get("/", self._index)
        app.router.add_get("/l/{token}", self._link_page)
        app.router.add_post("/l/{token}", self._link_post)
        app.on_response_prepare.append(security_headers)
        app.on_response_prepare.append(self._csp)
        return app

    async def start(self, sock: socket.socket | None = None) -> None:
        if sock is None:
            sock = bind(self.listen_host, self.port)
        self.port = int(sock.getsockname()[1])
        self._base = self._base.bound(self.port)
        self._operators = [(name, a.bound(self.port)) for name, a in self._operators]
        context = None
        if self.config.tls_cert and self.config.tls_key:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(self.config.tls_cert, self.config.tls_key)
        self._runner = web.AppRunner(self.app(), access_log_class=AccessLog, access_log=logging.getLogger("goldfive.phone.access"))
        await self._runner.setup()
        await web.SockSite(self._runner, sock, ssl_context=context).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @staticmethod
    async def _csp(request: web.Request, response: web.StreamResponse) -> None:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["Cache-Control"] = "no-store"
        # Not no-referrer: under it a browser sends "Origin: null" with the page's own form, and
        # the origin rule refuses it. same-origin keeps the link's URL from any other origin.
        response.headers["Referrer-Policy"] = "same-origin"

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        checked = self._base.check_origin(request_view(request, self._cookie))
        if checked.verdict is not Verdict.ALLOW:
            return _html(403, message_page("refused", f"This request was refused: {checked.reason}.", tone="bad"))
        response: web.StreamResponse = await handler(request)
        return response

    # -- the index (operators) -----------------------------------------------------------
    async def _index(self, request: web.Request) -> web.StreamResponse:
        who, decision = "", None
        for name, access in self._operators:  # every one is tried: the time says nothing of which
            found = access.decide(request_view(request, access.cookie_name))
            if found.verdict in (Verdict.ALLOW, Verdict.REDIRECT) and decision is None:
                who, decision = name, (found, access)
        if decision is None:
            text = "This page lists what waits for a person; it needs an operator token: open the URL goldfive serve printed (?token=...)."
            return _html(401, message_page("sign in", text))
        found, access = decision
        if found.verdict is Verdict.REDIRECT:
            response = web.Response(status=303, headers={"Location": without_token(request)})
            response.set_cookie(access.cookie_name, access.cookie_value(found.origin), httponly=True, samesite="Strict",
                                path="/", secure=access.secure)  # fmt: skip
            return response
        items = [item for run in self.host.runs() for kind in KINDS.values() for item in kind.pending(run.run_id, run.state)]
        items.sort(key=lambda i: (i.since_ms, i.run_id, i.target_id))
        listed = [(item, self._relative(self.link_url(item, who))) for item in items[:500]]
        return _html(200, index_page(listed, who))

    def _relative(self, url: str) -> str:
        return url[len(self.base_url):] if url.startswith(self.base_url) else url

    # -- a link (its holder) -------------------------------------------------------------
    def _resolve(self, token: str) -> tuple[Link | None, Item | None, web.Response | None]:
        """The link and its item, or the page that says why it cannot decide."""
        link = self.book.read(token)
        if link is None:
            return None, None, _html(403, message_page("not a valid link", "This is not a link this hub issued (it may be cut short or altered).", tone="bad"))
        problem = self.book.problem(link)
        if problem is LinkProblem.USED:
            use = self.book.used(link)
            what = _USED_WHAT.get(use.state if use else "", "it was used")
            when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(use.at_ms / 1000)) if use else ""
            outcome = f" ({use.outcome})" if use and use.outcome else ""
            return link, None, _html(410, message_page("link used", f"This link cannot decide again: {what} at {when}{outcome}."))
        if problem is LinkProblem.EXPIRED:
            return link, None, _html(410, message_page("link expired", "This link has expired; it decides nothing now. The hub's index lists what still waits."))
        kind = KINDS.get(link.kind)
        run = self.host.get(link.run_id)
        item = kind.find(link.run_id, run.state, link.target_id) if kind is not None and run is not None else None
        if item is None:
            text = "It was decided already (from another client, another link, a rule or its timeout), or the run no longer waits for it."
            return link, None, _html(410, message_page("nothing to decide", text))
        return link, item, None

    def _browser(self, request: web.Request) -> str | None:
        value = request.cookies.get(self._cookie)
        return value if value and len(value) <= 128 else None

    def _page(self, request: web.Request, link: Link, item: Item, *, status: int = 200, error: str = "") -> web.Response:
        browser = self._browser(request) or secrets.token_urlsafe(24)
        refusal = self.approvers.refusal(link.to, item.tool_name, f"{item.tool_name or item.kind} {item.target_id}")
        body = item_page(item, url=request.path, csrf=self.book.form_token(link, browser), to=link.to, refusal=refusal, error=error)
        response = _html(403 if refusal else status, body)
        if self._browser(request) != browser:
            response.set_cookie(self._cookie, browser, httponly=True, samesite="Strict", path="/l/", secure=self._base.secure)
        return response

    async def _link_page(self, request: web.Request) -> web.StreamResponse:
        link, item, refused = self._resolve(request.match_info["token"])
        if refused is not None:
            return refused
        assert link is not None and item is not None
        return self._page(request, link, item)

    async def _link_post(self, request: web.Request) -> web.StreamResponse:
        link, item, refused = self._resolve(request.match_info["token"])
        if refused is not None:
            return refused
        assert link is not None and item is not None
        form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
        if not self.book.form_ok(link, self._browser(request), form.get("csrf", "")):
            return _html(403, message_page("refused", "This form is stale or did not come from this page: open the link again.", tone="bad"))
        refusal = self.approvers.refusal(link.to, item.tool_name, f"{item.tool_name or item.kind} {item.target_id}")
        if refusal:
            return _html(403, message_page("not yours to decide", refusal, tone="bad"))
        kind = KINDS[link.kind]
        msg = kind.control(item, form.get("action", ""), form)
        if isinstance(msg, str):
            return self._page(request, link, item, status=422, error=msg)
        return await self._decide(request, link, item, msg)

    async def _decide(self, request: web.Request, link: Link, item: Item, msg: ControlMessage) -> web.Response:
        msg.payload["author"] = link.to  # whom the hub issued the link to, never what the form says
        problem = validate_control(msg, allow_ladder_kinds=False)
        if problem:
            return self._page(request, link, item, status=422, error=problem)
        if not self.book.claim(link):
            return _html(410, message_page("link used", "This link cannot decide again: another decision through it came first."))
        run = self.host.get(link.run_id)
        try:
            ack = await run.control(msg, self.ack_timeout) if run is not None else None
        except TimeoutError:
            self.book.confirm(link, "sent, not yet acked")
            return _html(202, message_page("sent", f"Sent; the run has not acked it yet (control {msg.id}). It is applied when the run gets to it."))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # isolation boundary: the link is released, the person told
            self.book.release(link)
            log.exception("phone: deciding %s of run %s failed", link.target_id, link.run_id)
            return _html(502, message_page("not decided", f"The hub could not deliver the decision: {type(exc).__name__}.", tone="bad"))
        if ack is None or ack.result is not AckResult.SUCCESS:
            self.book.release(link)  # nothing was decided: the link may try again
            detail = ack.detail if ack is not None else "the run is gone"
            return self._page(request, link, item, status=409, error=f"The run refused: {detail}")
        self.book.confirm(link, ack.detail)
        log.info("phone: %s decided %s of run %s through a link: %s", link.to, link.target_id, link.run_id, ack.detail)
        return _html(200, message_page("done", f"{ack.detail[:1].upper() + ack.detail[1:]}. This link is used now.", tone="ok"))


def _html(status: int, body: str) -> web.Response:
    return web.Response(status=status, text=body, content_type="text/html", charset="utf-8")


async def start_phone(
    host: RunHost,
    book: LinkBook,
    config: PhoneConfig,
    *,
    operators: Sequence[tuple[str, str]] = (),
    approvers: Approvers | None = None,
    ack_timeout: float = 30.0,
) -> PhoneServer:
    """Bind and serve the pages; ServeConfigError for a configuration it refuses."""
    server = PhoneServer(host, book, config, operators=operators, approvers=approvers, ack_timeout=ack_timeout)
    try:
        sock = bind(server.listen_host, server.port)
    except OSError as exc:
        raise ServeConfigError(f"cannot serve approval pages on {config.listen}: {exc.strerror or exc}") from None
    await server.start(sock)
    return server
