"""Who may drive ``goldfive web`` (DESIGN.md section 7): a browser page only from its own origin,
with the start's token; never the websocket from another origin or host.

Against a real ``goldfive web demo`` process: raw HTTP requests (every header exactly as written,
so Host, Origin and Cookie are the test's to choose) for the token, cookie, Host and Origin
rules and the response headers; Debian's Chromium through Playwright where the browser's own
behaviour is the point (a page on another port of the same host has the cookie, cookies not
being port-isolated, and still cannot open the websocket or frame the UI).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.web_kit import CHROMIUM, CHROMIUM_ARGS, WebProcess, exchange, free_port, raw_request, set_cookie


@dataclass
class Served:
    web: WebProcess
    port: int
    token: str
    #: The cookie the redirect set for Host 127.0.0.1:PORT.
    cookie_name: str
    cookie: str

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cookie_header(self, value: str | None = None) -> tuple[str, str]:
        return ("Cookie", f"{self.cookie_name}={self.cookie if value is None else value}")

    def signed_in(self) -> list[tuple[str, str]]:
        return [("Host", self.host), self.cookie_header()]


def _serve(args: list[str], tmp_path: Path, env: dict[str, str] | None = None, token: str | None = None) -> Served:
    web = WebProcess(args, tmp_path, env=env)
    try:
        start = web.start_url()
        port = int(start.group(3))
        token = token or start.group(4)
        first = raw_request(port, f"/?token={token}", headers=[("Host", f"127.0.0.1:{port}")])
        assert first.status == 303, (first.status, first.text, web.output())
        name, value, _ = set_cookie(first)
    except BaseException:
        web.stop()  # a fixture that fails before its yield is never torn down
        raise
    return Served(web, port, token, name, value)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    s = _serve(["--listen", "127.0.0.1:0", "demo"], tmp_path_factory.mktemp("web"))
    try:
        yield s
    finally:
        s.web.stop()


@pytest.fixture(scope="module")
def served_env_token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A start whose token came from GOLDFIVE_WEB_TOKEN (so it is known, and never printed)."""
    token = "env-" + os.urandom(12).hex()
    env = {k: v for k, v in os.environ.items() if k != "GOLDFIVE_WEB_TOKEN"}
    env["GOLDFIVE_WEB_TOKEN"] = token
    s = _serve(["--listen", "127.0.0.1:0", "demo"], tmp_path_factory.mktemp("web-env"), env=env, token=token)
    try:
        yield s
    finally:
        s.web.stop()


# -- the token and the cookie ----------------------------------------------------------------


def test_every_start_prints_a_url_with_its_own_random_token_and_the_real_port(served: Served, tmp_path: Path) -> None:
    assert served.port != 0, "--listen 127.0.0.1:0 prints the port it got"
    assert len(served.token) >= 32 and re.fullmatch(r"[A-Za-z0-9_-]+", served.token)
    other = WebProcess(["--listen", "127.0.0.1:0", "demo"], tmp_path)
    try:
        again = other.start_url()
    finally:
        other.stop()
    assert again.group(4) != served.token, "a new start has a new token"
    assert int(again.group(3)) != served.port


def test_the_token_is_swapped_for_a_cookie_by_a_redirect_that_drops_it(served: Served) -> None:
    first = raw_request(served.port, f"/?fontsize=20&token={served.token}", headers=[("Host", served.host)])
    assert first.status == 303
    assert first.header("location") == "/?fontsize=20", "the token leaves the URL, the rest stays"
    assert first.header("cache-control") == "no-store"
    name, value, attrs = set_cookie(first)
    assert name == f"goldfive_web_{served.port}", "named after the port: cookies are shared across a host's ports"
    assert value and served.token not in value, "the cookie is not the token"
    assert "httponly" in attrs and "samesite=strict" in attrs and "path=/" in attrs
    page = raw_request(served.port, "/?fontsize=20", headers=[("Host", served.host), served.cookie_header(value)])
    assert page.status == 200 and "goldfive demo" in page.text


def test_the_redirect_stays_on_this_server(served: Served) -> None:
    first = raw_request(served.port, f"//evil.example/x?token={served.token}", headers=[("Host", served.host)])
    assert first.status == 303
    location = first.header("location") or ""
    assert location.startswith("/") and not location.startswith("//") and "\\" not in location, location


@pytest.mark.parametrize(
    "credential",
    ["none", "wrong token", "token prefix", "wrong token with a good cookie", "the raw token as cookie",
     "the cookie under another port's name", "a garbage cookie"],
)
def test_a_missing_or_wrong_credential_gets_401_and_a_sentence_to_open_the_printed_url(served: Served, credential: str) -> None:
    target, headers = "/", [("Host", served.host)]
    if credential == "wrong token":
        target = "/?token=" + "x" * len(served.token)
    elif credential == "token prefix":
        target = "/?token=" + served.token[:-1]
    elif credential == "wrong token with a good cookie":
        target, headers = "/?token=nope", served.signed_in()
    elif credential == "the raw token as cookie":
        headers.append(served.cookie_header(served.token))
    elif credential == "the cookie under another port's name":
        headers.append(("Cookie", f"goldfive_web_{served.port + 1}={served.cookie}"))
    elif credential == "a garbage cookie":
        headers.append(served.cookie_header("0" * len(served.cookie)))
    refused = raw_request(served.port, target, headers=headers)
    assert refused.status == 401
    assert (refused.header("content-type") or "").startswith("text/html")
    assert "open the URL" in refused.text and "printed" in refused.text
    static = raw_request(served.port, "/static/js/textual.js" + target[1:], headers=headers)
    assert static.status == 401, "static files are behind the token too"


def test_the_cookie_is_bound_to_the_host_it_was_set_for(served: Served) -> None:
    other_host = f"localhost:{served.port}"
    assert raw_request(served.port, "/", headers=[("Host", other_host), served.cookie_header()]).status == 401
    first = raw_request(served.port, f"/?token={served.token}", headers=[("Host", other_host)])
    _, value, _ = set_cookie(first)
    assert value != served.cookie
    assert raw_request(served.port, "/", headers=[("Host", other_host), served.cookie_header(value)]).status == 200


# -- Host and Origin ---------------------------------------------------------------------------


def test_a_host_that_does_not_name_this_server_is_refused_even_with_the_cookie(served: Served) -> None:
    # A DNS-rebinding page reaches 127.0.0.1 under its own name: refused by Host alone.
    p = served.port
    for host in [f"evil.example:{p}", f"127.0.0.1:{p + 1}", "127.0.0.1", f"127.0.0.1.evil.example:{p}", f"localhost.:{p}",
                 f"127.1:{p}", f"127.0.0.1:{p}@evil.example", f"user@127.0.0.1:{p}", f"127.0.0.1:0{p}", None]:
        headers = ([("Host", host)] if host is not None else []) + [served.cookie_header()]
        for ws in (False, True):
            got = raw_request(p, "/ws?width=80&height=24" if ws else "/", headers=headers + [("Origin", served.origin)], websocket=ws)
            # without Host at all, aiohttp answers 400 before any route
            assert got.status == (403 if host is not None else 400), (host, ws, got.status, got.text)
    for host in [served.host, f"localhost:{p}", f"LOCALHOST:{p}", f"[::1]:{p}"]:
        assert raw_request(p, "/", headers=[("Host", host)]).status == 401, host


def test_the_websocket_opens_only_from_the_pages_own_origin_with_the_cookie(served: Served) -> None:
    p, ws = served.port, "/ws?width=80&height=24"
    for origin in [f"http://127.0.0.1:{p + 1}", f"http://localhost:{p}", f"https://127.0.0.1:{p}", "http://evil.example", "null", None]:
        headers = served.signed_in() + ([("Origin", origin)] if origin is not None else [])
        got = raw_request(p, ws, headers=headers, websocket=True)
        assert got.status == 403, (origin, got.status, got.text)
    assert raw_request(p, ws, headers=[("Host", served.host), ("Origin", served.origin)], websocket=True).status == 401
    assert raw_request(p, ws, headers=[*served.signed_in(), ("Origin", served.origin)], websocket=True).status == 101


def test_a_state_changing_request_needs_the_pages_own_origin(served: Served) -> None:
    p = served.port
    for origin in [f"http://127.0.0.1:{p + 1}", None]:
        headers = served.signed_in() + ([("Origin", origin)] if origin is not None else []) + [("Content-Length", "0")]
        assert raw_request(p, "/", method="POST", headers=headers).status == 403, origin
    # a GET that says where it comes from is held to the same rule
    assert raw_request(p, "/", headers=[*served.signed_in(), ("Origin", f"http://127.0.0.1:{p + 1}")]).status == 403


def test_every_response_forbids_framing_and_referrers(served: Served) -> None:
    p = served.port
    answers = {
        "page": raw_request(p, "/", headers=served.signed_in()),
        "static": raw_request(p, "/static/js/textual.js", headers=served.signed_in()),
        "missing": raw_request(p, "/nope", headers=served.signed_in()),
        "redirect": raw_request(p, f"/?token={served.token}", headers=[("Host", served.host)]),
        "no token": raw_request(p, "/", headers=[("Host", served.host)]),
        "bad host": raw_request(p, "/", headers=[("Host", "evil.example")]),
    }
    assert [answers[k].status for k in answers] == [200, 200, 404, 303, 401, 403]
    for what, got in answers.items():
        assert "frame-ancestors 'none'" in (got.header("content-security-policy") or ""), what
        assert got.header("x-frame-options") == "DENY", what
        assert got.header("referrer-policy") == "no-referrer", what
        assert got.header("x-content-type-options") == "nosniff", what


# -- what is printed and logged -----------------------------------------------------------------


def _wait_for(web: WebProcess, text: str) -> None:
    deadline = time.monotonic() + 10
    while text not in web.output():
        assert time.monotonic() < deadline, f"{text!r} never appeared in: {web.output()}"
        time.sleep(0.05)


def test_a_generated_token_is_printed_once_and_never_logged(served: Served) -> None:
    wrong = "WRONG" + os.urandom(8).hex()
    for target in [f"/?token={served.token}", f"/static/js/textual.js?token={served.token}", f"/?token={wrong}", f"/x?a=1&token={wrong}"]:
        raw_request(served.port, target, headers=[("Host", served.host)])
    raw_request(served.port, "/logged-last", headers=served.signed_in())
    _wait_for(served.web, "/logged-last")
    lines = served.web.output().splitlines()
    with_token = [line for line in lines if served.token in line]
    assert len(with_token) == 1 and f"http://127.0.0.1:{served.port}/?token={served.token}" in with_token[0], with_token
    assert not [line for line in lines if wrong in line]
    assert any('"GET /static/js/textual.js"' in line and "303" in line for line in lines), "the access log is on"


def test_a_given_token_is_never_printed_nor_logged(served_env_token: Served) -> None:
    s = served_env_token
    raw_request(s.port, f"/?token={s.token}", headers=[("Host", s.host)])
    raw_request(s.port, f"/?token={s.token}x", headers=[("Host", s.host)])
    raw_request(s.port, "/logged-last", headers=s.signed_in())
    _wait_for(s.web, "/logged-last")
    out = s.web.output()
    assert s.token not in out
    assert f"http://127.0.0.1:{s.port}/?token=..." in out, "the URL is printed, the token you gave masked"


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        kids = [c for c, pp in parents.items() if pp in frontier]
        found += kids
        frontier = kids
    return found


def test_the_tabs_processes_do_not_inherit_the_web_token(served_env_token: Served) -> None:
    s = served_env_token
    response, sock = exchange(s.port, "/ws?width=80&height=24", headers=[*s.signed_in(), ("Origin", s.origin)], websocket=True)
    try:
        assert response.status == 101
        deadline = time.monotonic() + 20
        tabs: list[int] = []
        while not tabs:
            assert time.monotonic() < deadline, "the tab's process never started"
            for pid in _descendants(s.web.proc.pid):
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if b"goldfive_tui.cli" in cmd and b"web" not in cmd:
                    tabs.append(pid)
            time.sleep(0.1)
        for pid in tabs:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            assert not [e for e in environ if e.startswith(b"GOLDFIVE_WEB_TOKEN=")], pid
    finally:
        sock.close()


def test_a_hub_token_in_the_served_command_stays_out_of_the_page_and_the_output(tmp_path: Path) -> None:
    secret = "hub-" + os.urandom(12).hex()
    s = _serve(["--listen", "127.0.0.1:0", "attach", "127.0.0.1:9", "--token", secret], tmp_path)
    try:
        page = raw_request(s.port, "/", headers=s.signed_in())
        assert page.status == 200 and "goldfive attach" in page.text
        assert secret not in page.text
        assert secret not in s.web.output()
    finally:
        s.web.stop()


def test_the_title_masks_every_secret_option_of_the_served_command() -> None:
    from goldfive_tui.web import title

    shown = title(["run", "m:f", "--goal", "g", "--api-key", "sk-1", "--hub-token=ht-2", "--token", "t-3"])
    assert shown == "goldfive run m:f --goal g --api-key ... --hub-token=... --token ..."


# -- in a real browser ---------------------------------------------------------------------------

_OPEN_WS = """url => new Promise(resolve => {
    const ws = new WebSocket(url);
    ws.onopen = () => { resolve("open"); ws.close(); };
    ws.onerror = () => resolve("error");
    ws.onclose = e => resolve("closed " + e.code);
    setTimeout(() => resolve("timeout"), 10000);
})"""


class OtherOrigin:
    """A page on another port of the same host (127.0.0.1): the cookie reaches it, and it tries
    to open goldfive web's websocket and to frame its UI."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.cookies: list[str] = []
        self.port = 0

    async def __aenter__(self) -> OtherOrigin:
        from aiohttp import web

        async def page(request: web.Request) -> web.Response:
            self.cookies.append(request.headers.get("Cookie", ""))
            return web.Response(text="<!doctype html><title>another origin</title>", content_type="text/html")

        async def frame(request: web.Request) -> web.Response:
            self.cookies.append(request.headers.get("Cookie", ""))
            body = f'<!doctype html><iframe id="ui" src="http://127.0.0.1:{self.target_port}/" width="800" height="600"></iframe>'
            return web.Response(text=body, content_type="text/html")

        app = web.Application()
        app.add_routes([web.get("/", page), web.get("/frame", frame)])
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self.runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()


def _browser_test(served: Served, body: object) -> None:
    assert os.path.exists(CHROMIUM), f"{CHROMIUM} is missing: the README's test command installs it (scripts/system-deps.sh)"
    asyncio.run(body)  # type: ignore[arg-type]


def test_a_page_on_another_port_has_the_cookie_and_still_cannot_open_the_websocket(served: Served) -> None:
    from playwright.async_api import async_playwright

    got: dict[str, str] = {}

    async def drive() -> None:
        async with OtherOrigin(served.port) as other, async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                context = await browser.new_context()
                page = await context.new_page()
                # the person's tab: the printed URL, so the browser holds the cookie
                await page.goto(f"{served.origin}/static/css/xterm.css?token={served.token}")
                got["own"] = await page.evaluate(_OPEN_WS, f"ws://127.0.0.1:{served.port}/ws?width=80&height=24")
                evil = await context.new_page()
                await evil.goto(f"http://127.0.0.1:{other.port}/")
                got["other"] = await evil.evaluate(_OPEN_WS, f"ws://127.0.0.1:{served.port}/ws?width=80&height=24")
                got["other via localhost"] = await evil.evaluate(_OPEN_WS, f"ws://localhost:{served.port}/ws?width=80&height=24")
                got["cookies"] = " ".join(other.cookies)
            finally:
                await browser.close()

    _browser_test(served, drive())
    assert f"goldfive_web_{served.port}=" in got["cookies"], "the premise: the other port's page got the cookie"
    assert served.token not in got["cookies"], "what it got is not the token"
    assert got["own"] == "open", "from its own origin the page opens the websocket"
    assert got["other"] != "open" and got["other via localhost"] != "open", got


def test_a_page_of_another_origin_cannot_frame_the_ui(served: Served) -> None:
    from playwright.async_api import async_playwright

    got: dict[str, object] = {}

    async def drive() -> None:
        async with OtherOrigin(served.port) as other, async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                context = await browser.new_context()
                page = await context.new_page()
                await page.goto(f"{served.origin}/static/css/xterm.css?token={served.token}")
                evil = await context.new_page()
                sockets: list[str] = []
                evil.on("websocket", lambda ws: sockets.append(ws.url))
                await evil.goto(f"http://127.0.0.1:{other.port}/frame")
                await evil.wait_for_timeout(2000)
                got["frames"] = [f.url for f in evil.frames if f != evil.main_frame]
                got["sockets"] = sockets
                got["cookies"] = " ".join(other.cookies)
            finally:
                await browser.close()

    _browser_test(served, drive())
    assert f"goldfive_web_{served.port}=" in str(got["cookies"]), "the premise: the framing page's origin has the cookie"
    frames = got["frames"]
    assert isinstance(frames, list) and len(frames) == 1
    assert not str(frames[0]).startswith(served.origin), f"the UI loaded inside another origin's page: {frames}"
    assert got["sockets"] == [], "the framed UI opened the websocket"
