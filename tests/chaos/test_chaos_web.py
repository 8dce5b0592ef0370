"""Random Host, Origin, cookie and token combinations against a real ``goldfive web demo``.

Each request picks, at random: a route (the page, a static file, the websocket, a POST); a
Host (the three loopback names of the server in any letter case, or one of many that are not
it: another port, another name, a rebinding name, look-alikes, none); an Origin (none, the
page's own, another port, another loopback name, https, a path, ``null``); a cookie (none, the
one the redirect set for this Host, the one set for another Host, the raw token, the right
value under another port's name, garbage, among other cookies); and sometimes a ``?token=``
(right, wrong, a prefix). A small oracle written from DESIGN.md section 7, not from the
server's code, says what must happen; only the right combination gets in. At the end the
server's output holds the token in exactly one line, the URL printed on start, and no wrong
token at all.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tests.chaos.conftest import Chaos
from tests.chaos.tally import TALLY
from tests.web_kit import WebProcess, raw_request, set_cookie

pytestmark = pytest.mark.chaos

IN, REDIRECT, NO_TOKEN, REFUSED = "let in", "redirected", "401", "refused"


def _host(rng: random.Random, port: int) -> tuple[str | None, bool]:
    """A Host header and whether it names the server."""
    if rng.random() < 0.65:
        name = rng.choice(["127.0.0.1", "localhost", "[::1]"])
        name = "".join(c.upper() if rng.random() < 0.3 else c for c in name)
        return f"{name}:{port}", True
    return rng.choice([
        f"evil.example:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1", "localhost", f"127.0.0.1.nip.io:{port}",
        f"localhost.:{port}", f"127.1:{port}", f"[::ffff:127.0.0.1]:{port}", f"0.0.0.0:{port}", f"127.0.0.2:{port}",
        str(port), f"localhost:{port}:{port}", f"localhost:0{port}", f"::1:{port}", f"a@127.0.0.1:{port}", "", None,
    ]), False


def _origin(rng: random.Random, host: str | None, port: int) -> str | None:
    own = f"http://{host}"
    return rng.choice([
        None, None, own, own, own.lower(), f"http://127.0.0.1:{port + 1}", f"http://localhost:{port}",
        f"http://127.0.0.1:{port}", f"https://{host}", f"{own}/", "null", "http://evil.example",
    ])


def _expect(host: str | None, host_ok: bool, origin: str | None, route: str, token: str, cookie_ok: bool) -> str:
    if not host_ok:
        return REFUSED
    if origin is not None and origin.lower() != f"http://{host}".lower():
        return REFUSED
    if origin is None and route in ("ws", "post"):
        return REFUSED
    if token == "right":
        return REDIRECT
    if token != "none":
        return NO_TOKEN
    return IN if cookie_ok else NO_TOKEN


def _outcome(status: int, host: str | None) -> str:
    if status == 303:
        return REDIRECT
    if status == 401:
        return NO_TOKEN
    if status == 403 or (status == 400 and not host):  # no Host at all: aiohttp's own 400
        return REFUSED
    return IN if status in (200, 101, 405) else f"status {status}"


def test_only_the_right_host_origin_and_credential_get_in(chaos: Chaos, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    rng = chaos.rng
    web = WebProcess(["--listen", "127.0.0.1:0", "demo", "--speed", "0.1"], tmp_path)
    started = time.monotonic()
    wrong_tokens: list[str] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    try:
        start = web.start_url()
        port, token = int(start.group(3)), start.group(4)
        name = f"goldfive_web_{port}"
        cookies: dict[str, str] = {}  # the cookie the redirect sets, per Host (canonical: lower case)
        for h in ("127.0.0.1", "localhost", "[::1]"):
            first = raw_request(port, f"/?token={token}", headers=[("Host", f"{h}:{port}")])
            assert first.status == 303, (h, first.status, first.text)
            cookies[f"{h}:{port}"] = set_cookie(first)[1]
        deadline = chaos.deadline(90, 900)
        for i in range(chaos.n(400, 3000)):
            if time.monotonic() > deadline:
                break
            route = rng.choice(["page", "static", "ws", "post"])
            host, host_ok = _host(rng, port)
            origin = _origin(rng, host, port)
            right = cookies.get((host or "").lower(), "")
            other = rng.choice([v for k, v in cookies.items() if k != (host or "").lower()])
            cookie_kind = rng.choice(["none", "right", "right", "among others", "another host's", "raw token", "another port's name", "garbage"])
            cookie = {
                "none": None, "right": f"{name}={right}", "among others": f"theme=dark; {name}={right}; x=1",
                "another host's": f"{name}={other}", "raw token": f"{name}={token}",
                "another port's name": f"goldfive_web_{port + 1}={right or other}", "garbage": f"{name}={'0' * 64}",
            }[cookie_kind]
            cookie_ok = host_ok and cookie_kind in ("right", "among others")
            token_kind = rng.choice(["none"] * 6 + ["right", "wrong", "prefix"])
            wrong = f"wrong{i}x{rng.randrange(10**9)}"
            query = {"none": "", "right": token, "wrong": wrong, "prefix": token[: rng.randrange(1, len(token))]}[token_kind]
            if token_kind == "wrong":
                wrong_tokens.append(query)
            path = {"page": "/", "static": "/static/js/textual.js", "ws": "/ws", "post": "/"}[route]
            target = path + ("?width=80&height=24" if route == "ws" else "") + (("&" if route == "ws" else "?") + f"token={query}" if query else "")
            headers = [("Host", host)] if host is not None else []
            headers += [("Origin", origin)] if origin is not None else []
            headers += [("Cookie", cookie)] if cookie is not None else []
            if route == "post":
                headers.append(("Content-Length", "0"))
            expected = _expect(host, host_ok, origin, route, token_kind, cookie_ok)
            got = raw_request(port, target, method="POST" if route == "post" else "GET", headers=headers, websocket=route == "ws")
            outcome = _outcome(got.status, host)
            seen[outcome] = seen.get(outcome, 0) + 1
            if outcome != expected:
                problems.append(f"{route} Host={host!r} Origin={origin!r} cookie={cookie_kind} token={token_kind}: "
                                f"expected {expected}, got {got.status} {got.text[:80]!r}")
    finally:
        web.stop()
    out = web.output().splitlines()
    with_token = [line for line in out if token in line]
    leaked = [line for line in out if any(w in line for w in wrong_tokens)]
    n = sum(seen.values())
    TALLY.add(web_requests=n, web_in=seen.get(IN, 0), web_redirected=seen.get(REDIRECT, 0),
              web_refused=seen.get(REFUSED, 0) + seen.get(NO_TOKEN, 0), web_wrong=len(problems),
              web_token_lines=len(with_token), web_wrong_token_lines=len(leaked))
    TALLY.time("web", started)
    why = chaos.why(request.node.nodeid)
    assert problems == [], f"{len(problems)} of {n} requests answered wrongly {why}:\n" + "\n".join(problems[:20])
    assert seen.get(IN, 0) > 0 and seen.get(REFUSED, 0) > 0 and seen.get(NO_TOKEN, 0) > 0, f"{seen} {why}"
    assert len(with_token) == 1 and "/?token=" in with_token[0], f"the token outside the start URL: {with_token}"
    assert leaked == [], f"a wrong token in the output: {leaked[:3]}"
