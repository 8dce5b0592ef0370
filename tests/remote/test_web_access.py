"""The rules of goldfive.remote.web_access without a server: which Host names a start answers to
(loopback, wildcard, IPv6 and ``--allow-host`` listens the browser tests do not reach), how
Origin is compared, what the cookie is bound to, and the token checks."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from goldfive.errors import GoldfiveError, ServeConfigError
from goldfive.remote.web_access import Verdict, WebAccess, WebRequest, bind, check_token, read_token_file

TOKEN = "k" * 32


def _access(listen: str = "127.0.0.1", port: int = 8765, allow: tuple[str, ...] = ()) -> WebAccess:
    return WebAccess.start(listen, port, TOKEN, allow)


def _verdict(access: WebAccess, host: str, *, local_ip: str = "127.0.0.1", origin: str | None = None,
             method: str = "GET", websocket: bool = False, token: str | None = None, cookie: str | None = None) -> Verdict:
    return access.decide(WebRequest(method, host, origin, local_ip, websocket, token, cookie)).verdict


@pytest.mark.parametrize(
    ("listen", "local_ip", "host", "ok"),
    [
        ("127.0.0.1", "127.0.0.1", "127.0.0.1:8765", True),
        ("127.0.0.1", "127.0.0.1", "localhost:8765", True),
        ("127.0.0.1", "127.0.0.1", "[::1]:8765", True),
        ("127.0.0.1", "127.0.0.1", "127.0.0.1:8766", False),
        ("127.0.0.1", "127.0.0.1", "127.0.0.1", False),  # port 80 implied
        ("127.0.0.1", "127.0.0.1", "rebound.example:8765", False),
        ("::1", "::1", "[::1]:8765", True),
        ("::1", "::1", "[0:0:0:0:0:0:0:1]:8765", True),  # the same address, written out
        ("::1", "::1", "::1:8765", False),  # unbracketed
        ("0.0.0.0", "192.0.2.7", "192.0.2.7:8765", True),  # the address the browser connected to
        ("0.0.0.0", "192.0.2.7", "192.0.2.8:8765", False),
        ("0.0.0.0", "192.0.2.7", "localhost:8765", False),  # loopback names only on a loopback connection
        ("0.0.0.0", "127.0.0.1", "localhost:8765", True),
        ("0.0.0.0", "192.0.2.7", f"{socket.gethostname().upper()}:8765", True),  # this machine's name
        ("::", "::ffff:192.0.2.7", "192.0.2.7:8765", True),  # IPv4 client of a dual-stack socket
        ("192.0.2.7", "192.0.2.7", "192.0.2.7:8765", True),
        ("192.0.2.7", "192.0.2.7", "evil.example:8765", False),
    ],
)
def test_host_must_name_this_server(listen: str, local_ip: str, host: str, ok: bool) -> None:
    got = _verdict(_access(listen), host, local_ip=local_ip)
    assert (got is not Verdict.BAD_HOST) is ok, got


def test_allow_host_adds_names_and_refuses_what_is_not_one() -> None:
    access = _access("0.0.0.0", allow=("devbox.example.com", "[2001:db8::1]"))
    assert _verdict(access, "devbox.example.com:8765", local_ip="192.0.2.7") is Verdict.NO_TOKEN
    assert _verdict(access, "[2001:db8::1]:8765", local_ip="192.0.2.7") is Verdict.NO_TOKEN
    assert _verdict(access, "other.example.com:8765", local_ip="192.0.2.7") is Verdict.BAD_HOST
    for bad in ["devbox:8765", "a b", "", "http://devbox", "-x"]:
        with pytest.raises(ServeConfigError, match="allow-host"):
            _access("0.0.0.0", allow=(bad,))


def test_origin_must_be_the_pages_own_and_is_needed_by_the_websocket_and_posts() -> None:
    access = _access()
    good = access.cookie_value("http://127.0.0.1:8765")
    host = "127.0.0.1:8765"
    assert _verdict(access, host, origin="http://127.0.0.1:8765", websocket=True, cookie=good) is Verdict.ALLOW
    assert _verdict(access, host, origin="HTTP://127.0.0.1:8765", websocket=True, cookie=good) is Verdict.ALLOW
    assert _verdict(access, host, websocket=True, cookie=good) is Verdict.BAD_ORIGIN
    assert _verdict(access, host, method="POST", cookie=good) is Verdict.BAD_ORIGIN
    assert _verdict(access, host, cookie=good) is Verdict.ALLOW  # a plain GET sends no Origin
    for origin in ["http://127.0.0.1:8766", "http://localhost:8765", "https://127.0.0.1:8765", "http://127.0.0.1:8765/",
                   "null", "http://127.0.0.1:8765,http://127.0.0.1:8765", "ws://127.0.0.1:8765"]:
        assert _verdict(access, host, origin=origin, websocket=True, cookie=good) is Verdict.BAD_ORIGIN, origin


def test_the_cookie_is_an_hmac_bound_to_origin_and_port_never_the_token() -> None:
    a = _access(port=8765)
    b = _access(port=8766)
    assert a.cookie_name == "goldfive_web_8765" and b.cookie_name == "goldfive_web_8766"
    value = a.cookie_value("http://127.0.0.1:8765")
    assert TOKEN not in value and len(value) == 64
    assert value != a.cookie_value("http://localhost:8765") != b.cookie_value("http://127.0.0.1:8766")
    assert _verdict(a, "localhost:8765", cookie=value) is Verdict.NO_TOKEN
    assert _verdict(a, "127.0.0.1:8765", cookie=TOKEN) is Verdict.NO_TOKEN
    assert _verdict(a, "127.0.0.1:8765", token=TOKEN) is Verdict.REDIRECT
    assert _verdict(a, "127.0.0.1:8765", token=TOKEN + "x", cookie=value) is Verdict.NO_TOKEN


def test_a_start_without_a_token_makes_a_random_one_and_prints_only_that_one() -> None:
    made = WebAccess.start("127.0.0.1", 8765)
    assert made.generated and len(made.token) >= 32 and made.token != WebAccess.start("127.0.0.1", 8765).token
    assert made.start_urls() == [f"http://127.0.0.1:8765/?token={made.token}"]
    given = _access("::1")
    assert given.start_urls() == ["http://[::1]:8765/?token=..."]
    assert TOKEN not in repr(given)
    wild = WebAccess.start("0.0.0.0", 8765).start_urls()
    assert len(wild) == 2 and wild[1].startswith("http://127.0.0.1:8765/?token=")


def test_token_checks_say_what_is_wrong(tmp_path: Path) -> None:
    assert check_token("abc") == "abc"
    for bad, needle in [("", "empty"), ("a b", "whitespace"), ("a\tb", "whitespace"), ("a\x00b", "control")]:
        with pytest.raises(ServeConfigError, match=needle):
            check_token(bad)
    path = tmp_path / "t"
    path.write_text(f"  {TOKEN}\n")
    assert read_token_file(path) == TOKEN
    with pytest.raises(GoldfiveError, match="cannot read the token file"):
        read_token_file(tmp_path)  # a directory


def test_bind_on_port_zero_gets_a_real_port() -> None:
    with bind("localhost", 0) as sock:
        host, port = sock.getsockname()[:2]
        assert host == "127.0.0.1" and port > 0
