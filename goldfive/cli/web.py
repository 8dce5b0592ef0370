"""``goldfive web``: the same terminal UI, served to a browser (textual-serve).

``goldfive web [--listen 127.0.0.1:8765] [--token T] demo|run|attach|replay ...`` serves the app
that ``goldfive demo|run|attach|replay ...`` would open in the terminal. Every browser tab gets
its own copy of that command (a tab of ``web demo`` runs its own demo; use ``web attach ADDR`` to
watch one served run from several tabs). Loopback by default; a non-loopback address needs a
token of 16+ characters, as ``serve`` does, which the browser gives once as ``?token=...``.

The command lives in the core CLI; the server is the TUI package's "web" front-end, which needs
the ``web`` extra (textual-serve).
"""

from __future__ import annotations

from typing import Any

import click

#: The commands whose UI can be served.
SERVABLE = ("demo", "run", "attach", "replay")


def register(main: click.Group) -> None:
    main.add_command(web)


@click.command("web", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--listen", default="127.0.0.1:8765", show_default=True, help="HOST:PORT the web server listens on.")
@click.option("--token", envvar="GOLDFIVE_WEB_TOKEN", default=None, help="Required on a non-loopback address (16+ characters); the browser opens /?token=TOKEN once.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def web(listen: str, token: str | None, command: tuple[str, ...]) -> None:
    """Serve the TUI (demo, run, attach, replay) in a browser.

    COMMAND is what you would type after `goldfive` to open the TUI (demo, run ..., attach ADDR,
    replay FILE)."""
    from goldfive.cli import frontend
    from goldfive.errors import ServeConfigError
    from goldfive.remote.auth import check_listen, split_host_port

    if not command:
        raise click.UsageError(f"give the command to serve: one of {', '.join(SERVABLE)}, e.g. 'goldfive web demo'")
    if command[0] not in SERVABLE:
        raise click.UsageError(f"cannot serve {command[0]!r}: goldfive web serves {', '.join(SERVABLE)}")
    if "--headless" in command:
        raise click.UsageError("--headless has no UI to serve; drop it")
    try:
        host, port_text = split_host_port(listen)
        port = int(port_text)
        if not 0 < port < 65536:
            raise ValueError(f"port {port} is out of range")
        check_listen(listen, token=token, client_certs=False)
    except (ValueError, ServeConfigError) as exc:
        raise click.UsageError(str(exc)) from None
    opener: Any = frontend("web")
    raise click.exceptions.Exit(opener(list(command), host=host, port=port, token=token))
