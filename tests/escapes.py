"""Terminal escapes a hostile runner could put in its text, and the check that printed output
holds none of them. Shared by the CLI, TUI and chaos tests."""

from __future__ import annotations

import random
import re

#: Each is something a terminal would obey: clipboard write, window title, clear screen (7-bit
#: and 8-bit CSI), a DCS string, a reset, a bell, a carriage return that rewrites the line.
ESCAPES = {
    "osc52": "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "osc0": "\x1b]0;PWNED TITLE\x1b\\",
    "csi2j": "\x1b[2J\x1b[H",
    "c1csi": "\x9b2J",
    "c1osc": "\x9d0;C1 TITLE\x9c",
    "dcs": "\x1bP+q544e\x1b\\",
    "ris": "\x1bc",
    "bel_del_cr": "\x07\x7f\rOVERWRITTEN",
    "unterminated": "\x1b]8;;http://evil.example/",
}

#: What may not reach a terminal from a runner: C0 but newline and tab, DEL, C1.
FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def laden(text: str) -> str:
    """``text`` with every escape of :data:`ESCAPES` woven in."""
    return text + "".join(f" {name} {seq}" for name, seq in ESCAPES.items()) + " end"


def random_laden(rng: random.Random, length: int = 40) -> str:
    """A random string of printable text, control characters and escape sequences."""
    parts: list[str] = []
    for _ in range(length):
        pick = rng.random()
        if pick < 0.4:
            parts.append(rng.choice("abc xyz/:;[]0123"))
        elif pick < 0.6:
            parts.append(rng.choice(list(ESCAPES.values())))
        elif pick < 0.8:
            parts.append(chr(rng.choice([*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)])))
        else:
            parts.append(rng.choice(["\x1b", "\x1b[", "\x1b]", "\x9b", "\x9d", "é", "漢", "\u202e", "\n", "\t"]))
    return "".join(parts)


def forbidden_in(output: str) -> list[str]:
    """The forbidden characters found in ``output``, with what surrounds them (for messages)."""
    return [repr(output[max(0, m.start() - 12) : m.end() + 12]) for m in FORBIDDEN.finditer(output)]
