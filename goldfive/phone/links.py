"""One-time signed links: a link names one item of one run, whom it was issued to, an expiry
and a nonce, signed with a key the hub generated and keeps (HMAC-SHA256).

A link is a capability (docs/security.md#who-may-do-what, "a link holder"): whoever holds it may decide the
one item it names, once, before it expires; nothing else. The hub stores what was used, so a
restart does not revive a used link: a decision first *claims* the link's nonce (an INSERT that
fails for a nonce already there), and the claim is confirmed when the run acks the decision or
released when the run refused it (nothing was decided, so the person may try again). A claim
left by a hub that stopped mid-decision stays: such a link counts as used.

The key and the used links live in the hub's SQLite file (tables ``hub_link_key``,
``hub_links``), or in a file of their own for a hub on PostgreSQL; whoever can read that file
can make links, as they can read every run in it (keep it ``chmod 600``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Claim", "Link", "LinkBook", "LinkProblem", "LinkUse"]

_CONTEXT = b"goldfive link\n"
_CSRF_CONTEXT = b"goldfive link form\n"
#: Longest token accepted (a run id, a target id of up to 256 characters, the rest).
MAX_TOKEN_CHARS = 2048
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hub_link_key (id INTEGER PRIMARY KEY CHECK (id = 1), key BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hub_links (nonce TEXT PRIMARY KEY, run_id TEXT NOT NULL, target_id TEXT NOT NULL,"
    " kind TEXT NOT NULL, recipient TEXT NOT NULL, state TEXT NOT NULL, at_ms INTEGER NOT NULL, outcome TEXT NOT NULL)",
)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class Link:
    """What a link names: the item (its kind and target id in run ``run_id``), whom it was
    issued to (recorded as the author of its decision), when it expires (epoch seconds)."""

    run_id: str
    kind: str
    target_id: str
    to: str
    expires_s: int
    nonce: str

    def payload(self) -> str:
        data = {"r": self.run_id, "k": self.kind, "i": self.target_id, "to": self.to, "e": self.expires_s, "n": self.nonce}
        return _b64(json.dumps(data, separators=(",", ":"), sort_keys=True).encode())


class LinkProblem(StrEnum):
    """Why a link cannot decide (the page says it in words)."""

    #: Not a link this hub signed (altered, truncated, another hub's).
    FORGED = "forged"
    EXPIRED = "expired"
    USED = "used"


class Claim(StrEnum):
    CLAIMED = "claimed"
    USED = "used"


@dataclass(frozen=True)
class LinkUse:
    """A used (or claimed) link, as stored."""

    state: str
    at_ms: int
    outcome: str


class LinkBook:
    """The hub's key and its record of used links, in the SQLite file ``path`` (``:memory:``
    for a hub that keeps nothing). ``clock`` gives epoch seconds."""

    def __init__(self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time) -> None:
        self.path = os.fspath(path)
        self._now = clock
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        try:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            for statement in _SCHEMA:
                self._conn.execute(statement)
            # Two processes starting on one file agree on the first key written.
            self._conn.execute("INSERT OR IGNORE INTO hub_link_key (id, key) VALUES (1, ?)", (secrets.token_bytes(32),))
            self._key: bytes = bytes(self._conn.execute("SELECT key FROM hub_link_key WHERE id = 1").fetchone()[0])
        except sqlite3.Error:
            self._conn.close()
            raise

    def close(self) -> None:
        self._conn.close()

    def now(self) -> float:
        return self._now()

    # -- signing -------------------------------------------------------------------------
    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._key, _CONTEXT + payload.encode(), hashlib.sha256).digest())

    def issue(self, run_id: str, kind: str, target_id: str, *, to: str, ttl_s: float, not_after_s: float | None = None) -> str:
        """A new token for the item, issued to ``to``, expiring after ``ttl_s`` seconds (or at
        ``not_after_s``, epoch seconds, when sooner: the item's own deadline)."""
        expires = self.now() + ttl_s
        if not_after_s is not None:
            expires = min(expires, not_after_s)
        link = Link(run_id, kind, target_id, to, int(expires), _b64(secrets.token_bytes(16)))
        payload = link.payload()
        return f"{payload}.{self._sign(payload)}"

    def read(self, token: str) -> Link | None:
        """The link ``token`` names if this hub signed it (expired or used or not), else None."""
        if len(token) > MAX_TOKEN_CHARS or token.count(".") != 1:
            return None
        payload, sig = token.split(".")
        if not hmac.compare_digest(sig.encode(), self._sign(payload).encode()):
            return None
        try:
            data = json.loads(_unb64(payload))
            return Link(str(data["r"]), str(data["k"]), str(data["i"]), str(data["to"]), int(data["e"]), str(data["n"]))
        except (ValueError, KeyError, TypeError, binascii.Error):
            return None  # signed by this hub, so this does not happen; refused all the same

    def problem(self, link: Link) -> LinkProblem | None:
        """Why ``link`` cannot decide now (used before, expired), or None."""
        if self.used(link) is not None:
            return LinkProblem.USED
        if self.now() >= link.expires_s:
            return LinkProblem.EXPIRED
        return None

    def form_token(self, link: Link, browser: str) -> str:
        """The CSRF token of ``link``'s form for the browser holding cookie ``browser``."""
        return _b64(hmac.new(self._key, _CSRF_CONTEXT + f"{link.nonce}\n{browser}".encode(), hashlib.sha256).digest())

    def form_ok(self, link: Link, browser: str | None, given: str) -> bool:
        return bool(browser) and hmac.compare_digest(given.encode(), self.form_token(link, browser or "").encode())

    # -- what was used -------------------------------------------------------------------
    def used(self, link: Link) -> LinkUse | None:
        row = self._conn.execute("SELECT state, at_ms, outcome FROM hub_links WHERE nonce = ?", (link.nonce,)).fetchone()
        return LinkUse(str(row[0]), int(row[1]), str(row[2])) if row is not None else None

    def claim(self, link: Link) -> bool:
        """Take ``link`` for a decision now; False when it was taken before (used, or a
        decision through it is under way)."""
        try:
            self._conn.execute(
                "INSERT INTO hub_links (nonce, run_id, target_id, kind, recipient, state, at_ms, outcome)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, '')",
                (link.nonce, link.run_id, link.target_id, link.kind, link.to, Claim.CLAIMED, int(self.now() * 1000)),
            )
        except sqlite3.IntegrityError:
            return False
        return True

    def confirm(self, link: Link, outcome: str) -> None:
        """The run took the decision made through ``link``: it is used for good."""
        self._conn.execute(
            "UPDATE hub_links SET state = ?, outcome = ?, at_ms = ? WHERE nonce = ?",
            (Claim.USED, outcome[:500], int(self.now() * 1000), link.nonce),
        )

    def release(self, link: Link) -> None:
        """The run refused the decision (nothing was decided): the link may be used again."""
        self._conn.execute("DELETE FROM hub_links WHERE nonce = ? AND state = ?", (link.nonce, Claim.CLAIMED))
