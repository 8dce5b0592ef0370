"""Notices a person can act on (issue 26, sections 4 and 5): ``goldfive notify ntfy`` and
``goldfive notify slack`` against a loopback stand-in for each service (a tiny HTTP server that
records what it got), and a hub whose approval is announced to ntfy, reminded, then escalated to
Slack, and decided from the Slack button's link."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from goldfive.approvals import ApprovalReminders
from goldfive.cli import main
from goldfive.phone.services import ntfy_request, slack_request
from tests.phone_kit import LONG_ARGS, PhoneHub


class StandIn:
    """A loopback HTTP server that answers 200 and records (path, headers, JSON body)."""

    def __init__(self) -> None:
        self.got: list[tuple[str, dict[str, str], Any]] = []
        got = self.got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                got.append((self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(body)))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, n: int, timeout: float = 30) -> list[tuple[str, dict[str, str], Any]]:
        deadline = time.monotonic() + timeout
        while len(self.got) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(self.got) >= n, f"the stand-in got {len(self.got)} request(s), expected {n}"
        return self.got

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def ntfy() -> Iterator[StandIn]:
    server = StandIn()
    yield server
    server.close()


@pytest.fixture
def slack() -> Iterator[StandIn]:
    server = StandIn()
    yield server
    server.close()


NOTICE = {
    "run_id": "r1", "kind": "approval", "title": "goldfive: run r1 needs you", "body": "approval: deploy <prod> & more",
    "url": "https://hub.example.com/l/abc.def", "reminder": 0, "escalated": False,
}  # fmt: skip


def test_the_ntfy_request_is_a_notification_whose_button_opens_the_link() -> None:
    req = ntfy_request("https://ntfy.example.com/goldfive-ops", NOTICE, token="tk")
    assert req.url == "https://ntfy.example.com/" and req.headers == {"Authorization": "Bearer tk"}
    assert req.body["topic"] == "goldfive-ops" and req.body["click"] == NOTICE["url"]
    assert req.body["actions"] == [{"action": "view", "label": "Open to decide", "url": NOTICE["url"], "clear": True}]
    escalated = ntfy_request("https://ntfy.example.com/t", {**NOTICE, "escalated": True, "url": "javascript:alert(1)"})
    assert escalated.body["priority"] == 5 and "actions" not in escalated.body  # only http(s) links become buttons


def test_the_slack_request_shows_the_text_literally_with_a_link_button() -> None:
    req = slack_request("https://hooks.slack.example/services/T/B/X", NOTICE)
    section, actions = req.body["blocks"]
    assert "deploy &lt;prod&gt; &amp; more" in section["text"]["text"]
    (button,) = actions["elements"]
    assert button["url"] == NOTICE["url"] and button["text"]["text"] == "Open to decide"


def test_the_commands_post_to_the_services_and_fail_with_an_exit_code(ntfy: StandIn, slack: StandIn, tmp_path: Path) -> None:
    runner = CliRunner()
    posted = runner.invoke(main, ["notify", "ntfy", f"{ntfy.url}/goldfive"], input=json.dumps(NOTICE))
    assert posted.exit_code == 0, posted.output
    (path, _, body) = ntfy.wait(1)[0]
    assert path == "/" and body["topic"] == "goldfive" and body["actions"][0]["url"] == NOTICE["url"]
    hook = tmp_path / "webhook"
    hook.write_text(f"{slack.url}/services/T/B/X\n")
    sent = runner.invoke(main, ["notify", "slack", "--webhook-url-file", str(hook)], input=json.dumps(NOTICE))
    assert sent.exit_code == 0, sent.output
    assert slack.wait(1)[0][0] == "/services/T/B/X"
    assert runner.invoke(main, ["notify", "ntfy", f"{ntfy.url}/goldfive"], input="not json").exit_code == 2
    assert runner.invoke(main, ["notify", "slack"], input=json.dumps(NOTICE), env={"SLACK_WEBHOOK_URL": ""}).exit_code == 2
    down = runner.invoke(main, ["notify", "ntfy", "http://127.0.0.1:9/goldfive"], input=json.dumps(NOTICE))
    assert down.exit_code == 1 and "cannot reach" in down.output


def test_an_approval_goes_to_ntfy_is_reminded_then_escalated_to_slack_and_decided_from_its_button(
    ntfy: StandIn, slack: StandIn, tmp_path: Path
) -> None:
    hook = tmp_path / "webhook"
    hook.write_text(f"{slack.url}/services/T/B/X")
    cli = f"{sys.executable} -m goldfive.cli notify"
    hub = PhoneHub(
        tmp_path,
        notify=(f"kind=approval,question to=alice :: {cli} ntfy {ntfy.url}/goldfive",),
        escalate=(f"to=bob :: {cli} slack --webhook-url-file {hook}",),
        reminders=ApprovalReminders(remind_after_s=2.0, escalate_after_s=5.0),
    )
    try:
        target = hub.requested()
        first = ntfy.wait(1)[0][2]
        assert target and first["priority"] == 3 and first["actions"][0]["url"].startswith(hub.pages.base_url + "/l/")
        (_, _, message) = slack.wait(1, timeout=40)[0]
        assert "needs someone (escalated)" in message["text"]
        button = message["blocks"][1]["elements"][0]["url"]
        reminders = [body for _, _, body in ntfy.got[1:]]
        assert reminders and all(b["priority"] == 4 and "still needs you" in b["title"] for b in reminders)
        with httpx.Client() as client:
            page = client.get(button)
            assert page.status_code == 200 and "deciding as bob" in page.text
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert csrf is not None
            done = client.post(button, data={"csrf": csrf.group(1), "action": "approve"}, headers={"Origin": hub.pages.base_url})
            assert done.status_code == 200, done.text
        assert hub.wait_ran() == [LONG_ARGS]
        (entry,) = hub.ledger()
        assert (entry.author, entry.client, entry.reminders) == ("bob", "link", 2) and entry.escalated_at_ms > 0
        kinds = [ev.WhichOneof("payload") for ev in hub.events()]
        assert kinds.count("approval_reminded") == 2 and kinds.count("approval_escalated") == 1
    finally:
        hub.stop()
