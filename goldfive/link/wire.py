"""What both ends of a goldfive connection agree on: how a token is carried, and the size a
ConnectShared frame may reach. Defined once, imported by the runner's end and the hub."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["AUTH_KEY", "LARGEST_EVENT_BYTES", "MAX_FRAME_BYTES", "MAX_MESSAGE_BYTES", "SCHEME", "bearer_metadata", "hub_addresses"]

#: The call metadata key that carries a token, and its scheme.
AUTH_KEY = "authorization"
SCHEME = "Bearer "
#: A ConnectShared frame closes past this many bytes of parts (gRPC refuses messages over 4 MiB).
#: The receiving end parses a frame in one go on its event loop, which nothing can interrupt:
#: 1 MiB took the hub 1.5-2.7 ms, which a control waited behind; 128 KiB is a few tenths.
MAX_FRAME_BYTES = 128 << 10
#: The largest message a hub receives: gRPC's default, which the hub keeps (a larger message
#: is refused by gRPC before the hub reads it, RESOURCE_EXHAUSTED, as if the hub were busy).
MAX_MESSAGE_BYTES = 4 << 20
#: The largest event a runner can send: one that fits a message with a frame's worth of
#: other parts. A runner stops its link at a larger one, naming it, rather than resend it
#: forever; a hub's ``--runner-limits event-bytes`` may not exceed it.
LARGEST_EVENT_BYTES = MAX_MESSAGE_BYTES - 2 * MAX_FRAME_BYTES


def bearer_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    """The call metadata that carries ``token`` (empty without one)."""
    return ((AUTH_KEY, SCHEME + token),) if token else ()


def hub_addresses(address: str | Sequence[str]) -> list[str]:
    """``"a:1,b:2"`` or ``["a:1", "b:2"]`` as a list; ValueError when it names none."""
    parts = address.split(",") if isinstance(address, str) else list(address)
    out = [p.strip() for p in parts if p.strip()]
    if not out:
        raise ValueError(f"no hub address in {address!r}")
    return out
