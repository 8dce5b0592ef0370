"""Notify commands for two services, reading a notice (goldfive.notify.Notice JSON) and making
the request the service takes: ``goldfive notify ntfy URL`` and ``goldfive notify slack``.

* ntfy (https://ntfy.sh or a server of your own): a JSON publish to the server's root naming the
  topic, with the notice's title and body, a tap that opens the link and an action button
  "Open to decide" (``view``); escalations and reminders at a higher priority.
* Slack: an incoming webhook, a message with the notice's text and a "Open to decide" link
  button (Block Kit ``actions`` with a button ``url``).

Nothing here sends anything: these build the request (method, URL, headers, JSON body) so the
tests check them against a stand-in server; the command (goldfive.cli.notify) sends it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from goldfive.errors import GoldfiveError

__all__ = ["ServiceRequest", "ntfy_request", "read_notice", "slack_request"]

#: The label of the button that opens a notice's page.
OPEN_LABEL = "Open to decide"
#: Longest notice read from stdin (a notice is a few KiB).
MAX_NOTICE_BYTES = 256 * 1024


@dataclass(frozen=True)
class ServiceRequest:
    url: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def read_notice(text: str) -> dict[str, Any]:
    """The notice JSON a notify command gets on stdin; GoldfiveError saying what is wrong."""
    if len(text) > MAX_NOTICE_BYTES:
        raise GoldfiveError(f"the notice on stdin is over {MAX_NOTICE_BYTES} bytes")
    try:
        notice = json.loads(text)
    except ValueError as exc:
        raise GoldfiveError(f"stdin is not a notice (JSON): {exc}") from None
    if not isinstance(notice, dict) or not isinstance(notice.get("title", ""), str):
        raise GoldfiveError("stdin is not a notice: a JSON object with title, body, url... is expected")
    return notice


def _text(notice: dict[str, Any], key: str) -> str:
    value = notice.get(key, "")
    return value if isinstance(value, str) else str(value)


def _page_url(notice: dict[str, Any]) -> str:
    url = _text(notice, "url")
    return url if urlsplit(url).scheme in ("http", "https") else ""


def ntfy_request(topic_url: str, notice: dict[str, Any], *, token: str | None = None) -> ServiceRequest:
    """The ntfy publish of ``notice`` to ``topic_url`` (``https://ntfy.sh/TOPIC``)."""
    parts = urlsplit(topic_url)
    topic = parts.path.strip("/")
    if parts.scheme not in ("http", "https") or not parts.netloc or not topic or "/" in topic:
        raise GoldfiveError(f"{topic_url!r} is not an ntfy topic URL, e.g. https://ntfy.sh/my-goldfive-topic")
    body: dict[str, Any] = {
        "topic": topic,
        "title": _text(notice, "title") or "goldfive",
        "message": _text(notice, "body") or _text(notice, "reason"),
        "tags": ["rotating_light" if notice.get("escalated") else "raising_hand"],
        "priority": 5 if notice.get("escalated") else 4 if notice.get("reminder") else 3,
    }
    url = _page_url(notice)
    if url:
        body["click"] = url
        body["actions"] = [{"action": "view", "label": OPEN_LABEL, "url": url, "clear": True}]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return ServiceRequest(urlunsplit((parts.scheme, parts.netloc, "/", "", "")), body, headers)


def _mrkdwn(text: str) -> str:
    """Text as Slack shows it literally (``&``, ``<``, ``>`` are its markup)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_request(webhook_url: str, notice: dict[str, Any]) -> ServiceRequest:
    """The incoming-webhook message of ``notice``."""
    parts = urlsplit(webhook_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise GoldfiveError("the Slack webhook URL is not a URL (https://hooks.slack.com/services/...)")
    title, text = _text(notice, "title") or "goldfive", _text(notice, "body") or _text(notice, "reason")
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": f"*{_mrkdwn(title)}*\n{_mrkdwn(text)}"}}]
    url = _page_url(notice)
    if url:
        button = {"type": "button", "text": {"type": "plain_text", "text": OPEN_LABEL}, "url": url, "style": "primary"}
        blocks.append({"type": "actions", "elements": [button]})
    return ServiceRequest(webhook_url, {"text": f"{title}: {text}", "blocks": blocks})
