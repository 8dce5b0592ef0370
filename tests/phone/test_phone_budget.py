"""A budget pause on the phone pages (issue 26 section 3, "for a budget, raise and continue"):
the notice of a run its budget paused carries a link; the page shows the goal, the limit
reached with its used and allowed figures, and a form for the new limit, sent through the
hub as BUDGET with resume; the run goes on; the used link refuses; the index lists it."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import httpx

from goldfive.budget import Budget
from goldfive.control import AppliedAs
from goldfive.view import RunState
from tests.phone_kit import TOKENS, PhoneHub, notices

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
_CALLS = [{"service": "a", "replicas": 1}, {"service": "b", "replicas": 1}]


def _open(client: httpx.Client, url: str) -> tuple[httpx.Response, str]:
    page = client.get(url)
    found = _CSRF.search(page.text)
    return page, found.group(1) if found else ""


def _post(client: httpx.Client, url: str, csrf: str, **fields: str) -> httpx.Response:
    origin = "/".join(url.split("/")[:3])
    return client.post(url, data={"csrf": csrf, "action": "raise", **fields}, headers={"Origin": origin})


def _hub(tmp: Path, **kwargs: object) -> PhoneHub:
    """A hosted run whose first deploy uses its one tool call up: the second waits for a person."""
    return PhoneHub(tmp, calls=list(_CALLS), approval=False, budget=Budget(tool_calls=1), **kwargs)  # type: ignore[arg-type]


def _reached(hub: PhoneHub) -> None:
    async def wait() -> None:
        run = hub.server.host.get(hub.run_id)
        assert run is not None
        async for ev in run.stream(-1):
            if ev.WhichOneof("payload") == "budget_reached":
                while run.state.budget_pause is None:  # the hub's own fold has it too
                    await asyncio.sleep(0.01)
                return

    hub.call(asyncio.wait_for(wait(), 20))


def _wait_notice(path: Path) -> dict[str, object]:
    deadline = time.monotonic() + 20
    while not notices(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    (notice,) = notices(path)
    return notice


def test_a_budget_pause_is_raised_and_continued_from_the_link_its_notice_carries(tmp_path: Path) -> None:
    sent = tmp_path / "notices.jsonl"
    hub = _hub(tmp_path, notify=(f"kind=budget to=alice :: cat >> {sent}",))
    try:
        notice = _wait_notice(sent)
        url = str(notice["url"])
        assert notice["kind"] == "budget" and url.startswith(hub.pages.base_url + "/l/")
        assert str(notice["target_id"]).startswith("budget-") and "tool_calls 1 of 1" in str(notice["body"])
        assert hub.ran == [{"service": "a", "replicas": 1}]  # the second deploy waits
        with httpx.Client() as client:
            page, csrf = _open(client, url)
            assert page.status_code == 200 and csrf
            text = page.text
            assert "Budget reached: tool_calls" in text and "deploy the fix" in text and "tool_calls 1 of 1" in text
            assert "deciding as alice" in text and "Raise and continue" in text and 'name="limit" value="2"' in text
            low = _post(client, url, csrf, limit="1")
            assert low.status_code == 422 and "not above what is used (1)" in low.text  # nothing sent
            junk = _post(client, url, csrf, limit="lots")
            assert junk.status_code == 422 and "not a number" in junk.text
            assert hub.ran == [{"service": "a", "replicas": 1}]
            done = _post(client, url, csrf, limit="5")
            assert done.status_code == 200 and "resumed" in done.text and "This link is used now" in done.text, done.text
            assert hub.wait_ran(2) == _CALLS
            again, _ = _open(client, url)
            assert again.status_code == 410 and "cannot decide again" in again.text
            assert _post(client, url, csrf, limit="9").status_code == 410
        changed = [ev.budget_changed for ev in hub.events() if ev.WhichOneof("payload") == "budget_changed"]
        assert [(c.detail, c.author) for c in changed][-1] == ("tool_calls 5", "alice")
        (ctl,) = [c for c in RunState.from_events(hub.events()).controls.values() if c.kind == "BUDGET"]
        assert (ctl.author, ctl.summary, ctl.applied_as) == ("alice", "tool_calls=5 and resume", AppliedAs.BUDGET_SET_RESUMED)
    finally:
        hub.stop()


def test_the_index_lists_a_budget_pause_for_an_operator_and_nobody_else(tmp_path: Path) -> None:
    hub = _hub(tmp_path, runner_tokens={"ci": "ci-runner-secret-token-01"})
    try:
        _reached(hub)
        base = hub.pages.base_url
        with httpx.Client() as client:
            assert client.get(base + "/").status_code == 401
            assert client.get(base + "/?token=ci-runner-secret-token-01").status_code == 401  # a runner token
            forged = client.get(base + "/l/budget-1")
            assert forged.status_code == 403 and "not a link this hub issued" in forged.text
            assert client.get(base + "/?token=" + TOKENS["carol"]).status_code == 303
            index = client.get(base + "/")
            assert index.status_code == 200 and "1 waiting" in index.text and "Budget reached: tool_calls" in index.text
            assert "tool_calls 1 of 1" in index.text
            href = re.search(r'href="(/l/[^"]+)"', index.text)
            assert href is not None
            _, csrf = _open(client, base + href.group(1))
            assert _post(client, base + href.group(1), csrf, limit="none").status_code == 200  # none: no limit
        assert hub.wait_ran(2) == _CALLS
        changed = [ev.budget_changed for ev in hub.events() if ev.WhichOneof("payload") == "budget_changed"]
        assert (changed[-1].detail, changed[-1].author) == ("no limits", "carol")
    finally:
        hub.stop()


def test_a_link_to_a_budget_pause_decides_that_pause_only(tmp_path: Path) -> None:
    hub = _hub(tmp_path)
    try:
        _reached(hub)
        run = hub.server.host.get(hub.run_id)
        assert run is not None and run.state.budget_pause is not None
        target = run.state.budget_pause.target_id
        stale = f"{hub.pages.base_url}/l/" + hub.pages.book.issue(hub.run_id, "budget", "budget-0", to="bob", ttl_s=600)
        live = f"{hub.pages.base_url}/l/" + hub.pages.book.issue(hub.run_id, "budget", target, to="bob", ttl_s=600)
        from click.testing import CliRunner

        from goldfive.cli import main

        raised = CliRunner().invoke(main, ["ctl", hub.addr, "--token", TOKENS["bob"], "budget", hub.run_id, "tool_calls=5", "--resume"])
        assert raised.exit_code == 0, raised.output
        assert hub.wait_ran(2) == _CALLS
        with httpx.Client() as client:
            for url in (stale, live):
                gone = client.get(url)
                assert gone.status_code == 410 and "no longer waits" in gone.text
    finally:
        hub.stop()
