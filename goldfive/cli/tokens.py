"""Secrets given in files: ``--token-file``, ``--runner-token-file``, ``--hub-token-file``,
``--api-key-file``.

A secret on the command line is readable by every user of the machine (``ps``,
``/proc/PID/cmdline``); in a file, or the environment (names in :mod:`goldfive.settings`), it
is not. A file is read once; a trailing newline is not part of the secret. An empty or
unreadable file is a one-line error; a file that group or others may read is used, with a
warning.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable

from goldfive.inputs import InputError

__all__ = ["client_token", "read_token_file", "server_tokens"]

#: Permission bits that let someone other than the owner read a file.
_OTHERS_READ = stat.S_IRGRP | stat.S_IROTH


def read_token_file(path: str, flag: str, *, warn: Callable[[str], None], several: bool = False) -> list[str]:
    """The secret in ``path`` (``flag`` names the option in messages); with ``several``, one
    per non-blank line. InputError when it cannot be read, is empty or (one expected) holds
    several lines."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise InputError(f"{flag} {path!r}: cannot read it: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode  # of the file read, not of whatever the path names later
        if not stat.S_ISREG(mode):
            raise InputError(f"{flag} {path!r} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(64 * 1024 + 1)
    except OSError as exc:
        raise InputError(f"{flag} {path!r}: cannot read it: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > 64 * 1024:
        raise InputError(f"{flag} {path!r} is over 64 KiB: not a token file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{flag} {path!r} is not UTF-8 text") from None
    lines = [line.rstrip("\r") for line in text.rstrip("\r\n").split("\n")]
    tokens = [line for line in lines if line.strip()] if several else lines
    if not tokens or not tokens[0]:
        raise InputError(f"{flag} {path!r} is empty: it should hold the token")
    if not several and len(tokens) > 1:
        raise InputError(f"{flag} {path!r} holds several lines: it should hold one token")
    if mode & _OTHERS_READ:
        warn(f"{flag} {path} may be read by other users (mode {stat.S_IMODE(mode):04o}); chmod 600 {path}")
    return tokens


def client_token(
    given: str | None, path: str | None, env: str | None, *, flag: str, warn: Callable[[str], None]
) -> str | None:
    """The token a client presents: ``flag``'s value, else the file's, else the environment's."""
    if given and path:
        raise InputError(f"{flag} and {flag}-file both given: give one")
    if path:
        return read_token_file(path, f"{flag}-file", warn=warn)[0]
    return given or env


def server_tokens(
    given: Iterable[str], paths: Iterable[str], env: str | None, *, flag: str, warn: Callable[[str], None]
) -> list[str]:
    """The tokens a server accepts: every ``flag`` value and every line of every file; with
    none of them, the environment's token."""
    tokens = list(given)
    for path in paths:
        tokens += read_token_file(path, f"{flag}-file", warn=warn, several=True)
    return tokens or ([env] if env else [])
