"""The approval pages of ``serve --http`` (issue 26, section 3), over HTTP against a real hub:
who may call each route (a link holder: the one item, once, before expiry; an operator: the
index; nobody else), the decision going through the hub like any control (client ``link``,
the link's recipient as author), and the links being one-time across a restart."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import httpx
import pytest

from goldfive.phone.links import LinkBook, LinkProblem
from tests.phone_kit import LONG_ARGS, TOKENS, PhoneHub, notices

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def _origin(url: str) -> str:
    return "/".join(url.split("/")[:3])


def _open(client: httpx.Client, url: str) -> tuple[httpx.Response, str]:
    page = client.get(url)
    found = _CSRF.search(page.text)
    return page, found.group(1) if found else ""


def _post(client: httpx.Client, url: str, csrf: str, action: str, origin: str | None = "", **fields: str) -> httpx.Response:
    headers = {} if origin is None else {"Origin": origin or _origin(url)}
    return client.post(url, data={"csrf": csrf, "action": action, **fields}, headers=headers)


# -- the links themselves -------------------------------------------------------------------


def test_a_link_names_one_item_and_any_change_to_it_is_refused(tmp_path: Path) -> None:
    book = LinkBook(tmp_path / "hub.sqlite")
    token = book.issue("run-1", "approval", "call-1", to="alice", ttl_s=60)
    link = book.read(token)
    assert link is not None and (link.run_id, link.target_id, link.to) == ("run-1", "call-1", "alice")
    payload, sig = token.split(".")
    other = LinkBook(tmp_path / "other.sqlite").issue("run-1", "approval", "call-1", to="alice", ttl_s=60)
    for forged in (payload[:-2] + "AA." + sig, payload + "." + sig[:-1], other, token + "x", "", "a.b.c"):
        assert book.read(forged) is None


def test_a_used_link_stays_used_after_a_restart_and_an_expired_one_is_refused(tmp_path: Path) -> None:
    now = [1000.0]
    book = LinkBook(tmp_path / "hub.sqlite", clock=lambda: now[0])
    link = book.read(book.issue("run-1", "approval", "call-1", to="alice", ttl_s=60))
    assert link is not None and book.problem(link) is None
    assert book.claim(link) and not book.claim(link)  # a second decision through it waits for nothing
    book.release(link)  # the run refused: nothing was decided
    assert book.problem(link) is None and book.claim(link)
    book.confirm(link, "approved call-1")
    book.close()
    again = LinkBook(tmp_path / "hub.sqlite", clock=lambda: now[0])  # the hub restarted
    assert again.read(again.issue("r", "approval", "t", to="a", ttl_s=1)) is not None  # same key
    assert again.problem(link) is LinkProblem.USED and again.used(link).outcome == "approved call-1"  # type: ignore[union-attr]
    fresh = again.read(again.issue("run-1", "approval", "call-2", to="alice", ttl_s=60, not_after_s=1030))
    assert fresh is not None and fresh.expires_s == 1030  # never past the approval's own deadline
    now[0] = 1031
    assert again.problem(fresh) is LinkProblem.EXPIRED


# -- a link holder --------------------------------------------------------------------------


def test_approve_from_a_link_decides_once_through_the_hub(tmp_path: Path) -> None:
    hub = PhoneHub(tmp_path)
    try:
        url = hub.link(hub.requested(), to="alice")
        with httpx.Client() as client:
            page, csrf = _open(client, url)
            assert page.status_code == 200 and csrf
            assert "Ship the payments fix" in page.text and "deploy" in page.text and "deciding as alice" in page.text
            assert "double-charge bug" in page.text and "sha256:0123456789abcdef" in page.text
            assert page.headers["content-security-policy"].startswith("default-src 'none'")
            assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store"
            done = _post(client, url, csrf, "approve")
            assert done.status_code == 200 and "Approved" in done.text and "This link is used now" in done.text
            assert hub.wait_ran() == [LONG_ARGS]
            again, _ = _open(client, url)
            assert again.status_code == 410 and "cannot decide again" in again.text
            assert _post(client, url, csrf, "approve").status_code == 410
        (entry,) = hub.ledger()
        assert (entry.outcome, entry.author, entry.client, entry.hub_check) == ("APPROVED", "alice", "link", "")
    finally:
        hub.stop()


def test_reject_with_a_reason_and_edit_the_arguments(tmp_path: Path) -> None:
    hub = PhoneHub(tmp_path, calls=[{"service": "db", "replicas": 9}, {"service": "web", "replicas": 9}])
    try:
        first = hub.link(hub.requested(1))
        with httpx.Client() as client:
            _, csrf = _open(client, first)
            assert _post(client, first, csrf, "reject", reason="not the database").status_code == 200
            second = hub.link(hub.requested(2))
            _, csrf = _open(client, second)
            bad = _post(client, second, csrf, "edit", arguments="{replicas: 2")
            assert bad.status_code == 422 and "not JSON" in bad.text  # nothing sent, the link still decides
            wrong = _post(client, second, csrf, "edit", arguments='{"service": "web", "replicas": "two"}')
            assert wrong.status_code == 422 and "argument &#x27;replicas&#x27; must be integer" in wrong.text
            ok = _post(client, second, csrf, "edit", arguments='{"service": "web", "replicas": 2}')
            assert ok.status_code == 200 and "with edited arguments" in ok.text
        assert hub.wait_ran() == [{"service": "web", "replicas": 2}]
        rejected, edited = hub.ledger()
        assert (rejected.outcome, rejected.reason, rejected.client) == ("REJECTED", "not the database", "link")
        assert (edited.outcome, edited.ran_args, edited.author) == ("EDITED_APPROVED", {"service": "web", "replicas": 2}, "link")
    finally:
        hub.stop()


def test_a_question_is_answered_from_its_link_by_picking_or_typing(tmp_path: Path) -> None:
    asks = [{"prompt": "Which region?", "options": ["eu", "us"]}, {"prompt": "Any note?"}]
    hub = PhoneHub(tmp_path, questions=asks, calls=[])
    try:
        first = hub.link(hub.requested(1), to="alice")
        with httpx.Client() as client:
            page, csrf = _open(client, first)
            assert page.status_code == 200 and "Which region?" in page.text and "eu / us" in page.text
            assert 'value="option:0"' in page.text and 'value="option:1"' in page.text and 'value="answer"' in page.text
            bad = _post(client, first, csrf, "option:7")
            assert bad.status_code == 422 and "not one of the options" in bad.text
            done = _post(client, first, csrf, "option:1")
            assert done.status_code == 200 and "Answered" in done.text, done.text
            second = hub.link(hub.requested(2), to="alice")
            _, csrf = _open(client, second)
            empty = _post(client, second, csrf, "answer", text="  ")
            assert empty.status_code == 422 and "the answer is empty" in empty.text
            assert _post(client, second, csrf, "answer", text="ship after lunch").status_code == 200
        hub.call(asyncio.wait_for(asyncio.shield(hub.server.host.get(hub.run_id).task), 20))  # type: ignore[union-attr]
        assert hub.answers == [{"ok": True, "answer": "us", "option": "us"}, {"ok": True, "answer": "ship after lunch", "option": ""}]
        assert [(e.outcome, e.reason, e.author, e.client) for e in hub.ledger()] == [
            ("ANSWERED", "us", "alice", "link"), ("ANSWERED", "ship after lunch", "alice", "link"),
        ]
    finally:
        hub.stop()


def test_a_post_from_another_origin_or_without_the_pages_form_is_refused(tmp_path: Path) -> None:
    hub = PhoneHub(tmp_path)
    try:
        url = hub.link(hub.requested())
        port = hub.pages.port
        with httpx.Client() as client:
            _, csrf = _open(client, url)
            assert _post(client, url, csrf, "approve", origin="http://evil.example").status_code == 403
            assert _post(client, url, csrf, "approve", origin=f"http://127.0.0.1:{port + 1}").status_code == 403
            assert _post(client, url, csrf, "approve", origin=None).status_code == 403  # no Origin at all
            assert _post(client, url, "forged", "approve").status_code == 403  # not the page's CSRF token
            rebinding = client.get(url, headers={"Host": f"evil.example:{port}"})
            assert rebinding.status_code == 403
        with httpx.Client() as stranger:  # the right CSRF token, but not this browser's cookie
            assert _post(stranger, url, csrf, "approve").status_code == 403
        assert hub.ran == [] and hub.ledger() == []
        with httpx.Client() as client:  # the link still decides
            _, csrf = _open(client, url)
            assert _post(client, url, csrf, "approve").status_code == 200
    finally:
        hub.stop()


def test_forged_expired_and_already_decided_links_say_so(tmp_path: Path) -> None:
    hub = PhoneHub(tmp_path, link_ttl_s=0.5, calls=[{"service": "a", "replicas": 1}, {"service": "b", "replicas": 1}])
    try:
        target = hub.requested()
        url = hub.link(target)
        forged = url[:-3] + ("AAA" if not url.endswith("AAA") else "BBB")
        with httpx.Client() as client:
            bad = client.get(forged)
            assert bad.status_code == 403 and "not a link this hub issued" in bad.text
            assert client.get(hub.pages.base_url + "/l/").status_code == 404
            time.sleep(0.6)
            expired = client.get(url)
            assert expired.status_code == 410 and "expired" in expired.text
            fresh = f"{hub.pages.base_url}/l/" + hub.pages.book.issue(hub.run_id, "approval", target, to="bob", ttl_s=600)
            from click.testing import CliRunner

            from goldfive.cli import main

            decided = CliRunner().invoke(main, ["ctl", hub.addr, "--token", TOKENS["bob"], "approve", hub.run_id, target])
            assert decided.exit_code == 0, decided.output
            gone = client.get(fresh)
            assert gone.status_code == 410 and "decided already" in gone.text
        assert hub.wait_ran() == [{"service": "a", "replicas": 1}]
    finally:
        hub.stop()


def test_a_link_issued_to_someone_the_approvers_do_not_list_decides_nothing(tmp_path: Path) -> None:
    hub = PhoneHub(tmp_path, approvers=("deploy=alice",), notify=("to=carol :: cat > /dev/null",))
    try:
        url = hub.link(hub.requested(), to="carol")
        with httpx.Client() as client:
            page, csrf = _open(client, url)
            assert page.status_code == 403 and "carol may not decide deploy" in page.text and "only alice may" in page.text
            assert "<button" not in page.text
            forced = _post(client, url, hub.pages.book.form_token(hub.pages.book.read(url.rsplit("/", 1)[1]), client.cookies.get(f"goldfive_links_{hub.pages.port}") or ""), "approve")
            assert forced.status_code == 403 and "only alice may" in forced.text
        assert hub.ran == []
        alices = hub.link(hub.requested(), to="alice")
        with httpx.Client() as client:
            _, csrf = _open(client, alices)
            assert _post(client, alices, csrf, "approve").status_code == 200
        assert hub.wait_ran() == [LONG_ARGS]
    finally:
        hub.stop()


# -- an operator: the index ----------------------------------------------------------------


def test_the_index_lists_what_waits_for_an_operator_only(tmp_path: Path) -> None:
    hub = PhoneHub(tmp_path, runner_tokens={"ci": "ci-runner-secret-token-01"})
    try:
        hub.requested()
        base = hub.pages.base_url
        with httpx.Client() as client:
            assert client.get(base + "/").status_code == 401
            assert client.get(base + "/?token=ci-runner-secret-token-01").status_code == 401  # a runner token
            assert client.post(base + "/", headers={"Origin": base}).status_code == 405  # nothing else is served
            assert client.get(base + "/?token=wrong-token-wrong-token").status_code == 401
            assert client.get(base + "/?token=" + TOKENS["bob"] + "x").status_code == 401
            swap = client.get(base + "/?token=" + TOKENS["bob"])
            assert swap.status_code == 303 and swap.headers["location"] == "/"
            assert "token" not in swap.headers["location"] and "httponly" in swap.headers["set-cookie"].lower()
            index = client.get(base + "/")
            assert index.status_code == 200 and "1 waiting" in index.text and "signed in as bob" in index.text
            href = re.search(r'href="(/l/[^"]+)"', index.text)
            assert href is not None
            _, csrf = _open(client, base + href.group(1))
            assert _post(client, base + href.group(1), csrf, "approve").status_code == 200
        assert hub.wait_ran() == [LONG_ARGS]
        (entry,) = hub.ledger()
        assert (entry.author, entry.client) == ("bob", "link")
    finally:
        hub.stop()


def test_off_loopback_the_pages_need_tls_or_an_https_public_url() -> None:
    from goldfive.errors import ServeConfigError
    from goldfive.phone.config import PhoneConfig, check_config

    with pytest.raises(ServeConfigError, match="without TLS"):
        check_config(PhoneConfig("0.0.0.0:8780"))
    with pytest.raises(ServeConfigError, match="must be https"):
        check_config(PhoneConfig("0.0.0.0:8780", public_url="http://hub.example.com"))
    assert check_config(PhoneConfig("0.0.0.0:8780", public_url="https://hub.example.com")) == ("0.0.0.0", 8780, "http")
    assert check_config(PhoneConfig("127.0.0.1:8780")) == ("127.0.0.1", 8780, "http")


# -- notices carry the link ----------------------------------------------------------------


def test_every_notice_carries_its_link_and_each_route_its_filter(tmp_path: Path) -> None:
    mine, others, failed = tmp_path / "mine.jsonl", tmp_path / "others.jsonl", tmp_path / "failed.jsonl"
    hub = PhoneHub(tmp_path, notify=(
        f"kind=approval,question tool=dep* to=alice :: cat >> {mine}",
        f"tool=search :: cat >> {others}",
        f"kind=failed :: cat >> {failed}",
    ))  # fmt: skip
    try:
        target = hub.requested()
        deadline = time.monotonic() + 20
        while not notices(mine) and time.monotonic() < deadline:
            time.sleep(0.05)
        (notice,) = notices(mine)
        assert notice["target_id"] == target and notice["url"].startswith(hub.pages.base_url + "/l/")
        with httpx.Client() as client:
            page, csrf = _open(client, notice["url"])
            assert "deciding as alice" in page.text
            assert _post(client, notice["url"], csrf, "approve").status_code == 200
        hub.wait_ran()
        assert notices(others) == [] and notices(failed) == []
    finally:
        hub.stop()
