"""Failed authentications: said in the log, and answered slower and slower per address.

A server that answers a wrong token at once can be asked thousands of guesses a second. Here
each refused call is counted per client address (its IP, not its port: every new connection
has a new port). Past :data:`FREE_FAILURES` within :data:`WINDOW_S`, each refusal is held back
before it is answered, twice as long each time up to :data:`MAX_DELAY_S`. Held refusals are
only coroutines asleep (the loop goes on serving everyone else), and an address may have at
most :data:`MAX_HELD_PER_PEER` of them: past that, its calls are refused at once as
RESOURCE_EXHAUSTED *without their token being checked*, whatever it is, so sending guesses in
parallel does not check more of them. A right token from the address clears its count.

The log says, per address and at most once per :data:`LOG_INTERVAL_S`, how many calls were
refused and why, never what token was sent.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "FREE_FAILURES",
    "MAX_DELAY_S",
    "MAX_HELD_PER_PEER",
    "FailedAuthThrottle",
    "peer_address",
]

log = logging.getLogger("goldfive.remote.auth")

#: Refusals per address answered at once, within the window (a person mistyping a token).
FREE_FAILURES = 10
#: Failures older than this (since the address's last one) are forgotten.
WINDOW_S = 60.0
#: The first held refusal waits this long; each next one twice as long, up to MAX_DELAY_S.
BASE_DELAY_S = 0.05
MAX_DELAY_S = 5.0
#: Refusals of one address held back at once; past it, its calls are refused unchecked.
MAX_HELD_PER_PEER = 4
#: Addresses remembered at most (the least recently refused are forgotten first).
MAX_PEERS = 10_000
#: One log line per address per this many seconds, and at most LOG_LINES of them in all.
LOG_INTERVAL_S = 60.0
LOG_LINES = 20


def peer_address(peer: str) -> str:
    """The client's address without its port: ``ipv4:10.0.0.5:51234`` -> ``ipv4:10.0.0.5``,
    ``ipv6:[::1]:5123`` -> ``ipv6:[::1]``; anything else (``unix:...``) as it is."""
    kind, sep, rest = peer.partition(":")
    if sep and kind in ("ipv4", "ipv6"):
        host, colon, port = rest.rpartition(":")
        if colon and port.isdigit():
            return f"{kind}:{host}"
    return peer


@dataclass
class _Peer:
    failures: int = 0
    last_failure: float = 0.0
    held: int = 0
    #: Refusals not yet said in the log, and when this address was last logged.
    unlogged: int = 0
    last_log: float | None = None
    why: str = ""


class FailedAuthThrottle:
    """The per-address count of refused calls, and how long to hold each refusal."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._peers: OrderedDict[str, _Peer] = OrderedDict()
        self._log_times: list[float] = []
        self._unlogged_lines = 0

    def crowded(self, peer: str) -> bool:
        """True when ``peer`` already has MAX_HELD_PER_PEER refusals held back: refuse its
        call at once, without looking at its token."""
        state = self._peers.get(peer)
        return state is not None and state.held >= MAX_HELD_PER_PEER

    def failed(self, peer: str, why: str) -> float:
        """Count a refused call of ``peer`` (``why``: "wrong token", never the token) and
        return how long to hold its answer (0 while within FREE_FAILURES)."""
        now = self._clock()
        state = self._peers.get(peer)
        if state is None:
            state = self._peers[peer] = _Peer()
            if len(self._peers) > MAX_PEERS:
                self._forget_one()
        elif now - state.last_failure > WINDOW_S:
            state.failures = 0
        self._peers.move_to_end(peer)
        state.failures += 1
        state.last_failure = now
        state.unlogged += 1
        state.why = why
        delay = self.delay(state.failures)
        if state.last_log is None or now - state.last_log >= LOG_INTERVAL_S:
            self._log(peer, state, now, delay)
        return delay

    @staticmethod
    def delay(failures: int) -> float:
        """How long the ``failures``-th refusal in a row is held."""
        over = failures - FREE_FAILURES
        return 0.0 if over <= 0 else min(MAX_DELAY_S, BASE_DELAY_S * 2 ** min(over - 1, 32))

    def succeeded(self, peer: str) -> None:
        """A right token from ``peer``: its count starts again."""
        state = self._peers.get(peer)
        if state is not None:
            state.failures = 0
            if not state.held:
                del self._peers[peer]

    def hold(self, peer: str) -> None:
        self._peers.setdefault(peer, _Peer()).held += 1

    def release(self, peer: str) -> None:
        state = self._peers.get(peer)
        if state is not None:
            state.held = max(0, state.held - 1)

    def held(self, peer: str) -> int:
        state = self._peers.get(peer)
        return state.held if state is not None else 0

    def _forget_one(self) -> None:
        for key, state in self._peers.items():  # least recently refused first
            if not state.held:
                del self._peers[key]
                return

    def _log(self, peer: str, state: _Peer, now: float, delay: float) -> None:
        self._log_times = [t for t in self._log_times if now - t < LOG_INTERVAL_S]
        if len(self._log_times) >= LOG_LINES:
            self._unlogged_lines += 1
            return
        self._log_times.append(now)
        if state.last_log is None:
            what = f"a call from {peer} refused ({state.why})"
        else:
            n = state.unlogged
            what = f"{n} call{'' if n == 1 else 's'} from {peer} refused ({state.why}) in the last {now - state.last_log:.0f}s"
        held = f"; answers now held {delay:.2f}s" if delay else ""
        more = f" ({self._unlogged_lines} such lines about other addresses left out)" if self._unlogged_lines else ""
        log.warning("auth: %s%s%s", what, held, more)
        state.unlogged = 0
        state.last_log = now
        self._unlogged_lines = 0
