"""``goldfive notify ntfy|slack``: notify commands that read the notice on stdin and post it to
a service, with a button opening the notice's link (goldfive.phone.services). Give them to
``goldfive serve --notify-cmd`` (or ``attach``)::

    goldfive serve --http 127.0.0.1:8780 --notify-cmd 'kind=approval,question :: goldfive notify ntfy https://ntfy.sh/TOPIC'
    SLACK_WEBHOOK_URL=https://hooks.slack.com/services/... goldfive serve --notify-cmd 'goldfive notify slack'

Exit codes: 0 posted, 1 the service refused or could not be reached, 2 bad input.
"""

from __future__ import annotations

import sys

import click

__all__ = ["notify", "register"]


@click.group("notify", short_help="Post a notice (JSON on stdin) to ntfy or Slack: notify commands for serve.")
def notify() -> None:
    """Notify commands: each reads one notice (the JSON --notify-cmd gets on stdin) and posts it."""


def _send(request: object, service: str) -> None:
    import httpx

    from goldfive.phone.services import ServiceRequest

    assert isinstance(request, ServiceRequest)
    try:
        answer = httpx.post(request.url, json=request.body, headers=request.headers, timeout=10.0)
    except httpx.HTTPError as exc:
        click.echo(f"goldfive notify {service}: cannot reach {request.url.split('?')[0]}: {exc}", err=True)
        raise click.exceptions.Exit(1) from None
    if answer.status_code >= 300:
        click.echo(f"goldfive notify {service}: the service answered {answer.status_code}: {answer.text[:200]}", err=True)
        raise click.exceptions.Exit(1)


def _notice(service: str) -> dict[str, object]:
    from goldfive.errors import GoldfiveError
    from goldfive.phone.services import read_notice

    try:
        return read_notice(sys.stdin.read())
    except GoldfiveError as exc:
        click.echo(f"goldfive notify {service}: {exc}", err=True)
        raise click.exceptions.Exit(2) from None


@notify.command("ntfy")
@click.argument("topic_url", metavar="TOPIC_URL")
def ntfy(topic_url: str) -> None:
    """Publish the notice to TOPIC_URL (https://ntfy.sh/TOPIC or your server's): a notification
    whose tap and "Open to decide" button open the notice's link. NTFY_TOKEN: an access token."""
    from goldfive.errors import GoldfiveError
    from goldfive.phone.services import ntfy_request
    from goldfive.settings import ntfy_token

    notice = _notice("ntfy")
    try:
        request = ntfy_request(topic_url, notice, token=ntfy_token())
    except GoldfiveError as exc:
        click.echo(f"goldfive notify ntfy: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    _send(request, "ntfy")


@notify.command("slack")
@click.option("--webhook-url-file", type=click.Path(dir_okay=False), help="A file holding the incoming webhook's URL (else SLACK_WEBHOOK_URL).")
def slack(webhook_url_file: str | None) -> None:
    """Post the notice to a Slack incoming webhook: its text and an "Open to decide" button
    opening the notice's link. The webhook URL is a secret: from SLACK_WEBHOOK_URL or a file."""
    from goldfive.errors import GoldfiveError
    from goldfive.phone.services import slack_request
    from goldfive.remote.web_access import read_token_file
    from goldfive.settings import slack_webhook_url

    try:
        url = read_token_file(webhook_url_file) if webhook_url_file else slack_webhook_url()
        if not url:
            raise GoldfiveError("no webhook URL: set SLACK_WEBHOOK_URL or give --webhook-url-file")
        notice = _notice("slack")
        request = slack_request(url, notice)
    except GoldfiveError as exc:
        click.echo(f"goldfive notify slack: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    _send(request, "slack")


def register(group: click.Group) -> None:
    group.add_command(notify)
