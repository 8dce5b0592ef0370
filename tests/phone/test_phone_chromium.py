"""A phone approving a call from a link (issue 26, section 3), in headless Chromium (Debian's,
driven by Playwright) at a phone's viewport, 390x844: the page shows the arguments with no
sideways scrolling, Approve decides the call, the used link refuses.

``GOLDFIVE_SCREENSHOTS=screenshots python -m pytest tests/phone/test_phone_chromium.py`` writes the
README's pictures (screenshots/phone-approval.png, phone-used.png); otherwise they go to the
test's temporary directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.phone_kit import LONG_ARGS, PhoneHub
from tests.web_kit import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium (scripts/system-deps.sh)")

PHONE = {"width": 390, "height": 844}
#: Wider than its box, anywhere on the page: an element a person would have to scroll sideways.
_OVERFLOW = """() => {
  const doc = document.documentElement;
  const wide = [...document.querySelectorAll('body *')].filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'hidden');
  return {page: doc.scrollWidth - window.innerWidth, elements: wide.map(e => e.tagName)};
}"""


def test_a_phone_approves_a_call_from_its_link_and_the_used_link_refuses(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    shots = Path(os.environ.get("GOLDFIVE_SCREENSHOTS") or tmp_path)
    hub = PhoneHub(tmp_path)
    try:
        url = hub.link(hub.requested(), to="alice")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
            page = context.new_page()
            page.goto(url)
            assert page.locator("h1").inner_text() == "deploy"
            shown = page.locator("pre").inner_text()
            assert LONG_ARGS["image"] in shown.replace("\n", "") and "double-charge bug" in shown
            assert page.evaluate(_OVERFLOW) == {"page": 0, "elements": []}
            box = page.locator("pre").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
            approve = page.get_by_role("button", name="Approve", exact=True)
            assert approve.is_visible()
            page.screenshot(path=str(shots / "phone-approval.png"), full_page=True)
            with page.expect_navigation():  # the form posts, and the answer is a new page
                approve.tap()
            assert "This link is used now" in page.locator("p").inner_text()
            assert hub.wait_ran() == [LONG_ARGS]
            page.goto(url)  # the same link again: it says so, and offers nothing
            assert page.locator("h1").inner_text() == "link used"
            assert "cannot decide again" in page.locator("p").inner_text() and page.locator("button").count() == 0
            assert page.evaluate(_OVERFLOW)["page"] == 0
            page.screenshot(path=str(shots / "phone-used.png"))
            browser.close()
        (entry,) = hub.ledger()
        assert (entry.outcome, entry.author, entry.client) == ("APPROVED", "alice", "link")
    finally:
        hub.stop()
