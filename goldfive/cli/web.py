"""``goldfive web``: the same terminal UI, served to a browser (textual-serve).

``goldfive web [--listen 127.0.0.1:8765] [--token T | --token-file F] [--allow-host NAME]...
demo|run|attach|replay ...`` serves the app that ``goldfive demo|run|attach|replay ...`` would
open in the terminal. Every browser tab gets its own copy of that command (a tab of ``web demo``
runs its own demo; use ``web attach ADDR`` to watch one served run from several tabs).

Every start has a token, a random one unless given, and prints the URL to open with it (as
Jupyter does); the rules a browser page is held to are in :mod:`goldfive.remote.web_access`.

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
@click.option("--listen", default="127.0.0.1:8765", show_default=True, help="HOST:PORT the web server listens on (port 0: any free one, printed).")
@click.option(
    "--token", envvar="GOLDFIVE_WEB_TOKEN", default=None,
    help="The token browsers need (default: a random one per start, printed in the URL to open). 16+ characters off loopback.",
)
@click.option(
    "--token-file", type=click.Path(dir_okay=False), default=None,
    help="Read the token from this file instead (a token given on the command line is visible to other local users).",
)
@click.option(
    "--allow-host", "allow_hosts", multiple=True, metavar="NAME",
    help="Another name browsers reach this server by (a DNS name); repeatable. Loopback names and the address a browser connected to are always accepted.",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def web(listen: str, token: str | None, token_file: str | None, allow_hosts: tuple[str, ...], command: tuple[str, ...]) -> None:
    """Serve the TUI (demo, run, attach, replay) in a browser.

    COMMAND is what you would type after `goldfive` to open the TUI (demo, run ..., attach ADDR,
    replay FILE). Open the URL it prints: it carries this start's token, which the browser
    swaps for a cookie; pages of other origins and hosts are refused."""
    from goldfive.cli.frontends import frontend
    from goldfive.errors import ServeConfigError
    from goldfive.remote.auth import check_listen, split_host_port
    from goldfive.remote.web_access import WebAccess, bind, read_token_file

    if not command:
        raise click.UsageError(f"give the command to serve: one of {', '.join(SERVABLE)}, e.g. 'goldfive web demo'")
    if command[0] in SERVABLE and ("--help" in command or "-h" in command):
        main = click.get_current_context().find_root().command  # goldfive's group, not imported back up
        raise click.exceptions.Exit(main.main(args=list(command), prog_name="goldfive web", standalone_mode=False) or 0)
    if command[0] not in SERVABLE:
        raise click.UsageError(f"cannot serve {command[0]!r}: goldfive web serves {', '.join(SERVABLE)}")
    if "--headless" in command:
        raise click.UsageError("--headless has no UI to serve; drop it")
    if token is not None and token_file is not None:
        raise click.UsageError("give the token with --token (or GOLDFIVE_WEB_TOKEN) or --token-file, not both")
    try:
        if token_file is not None:
            token = read_token_file(token_file)
        host, port_text = split_host_port(listen)
        port = int(port_text)
        if not 0 <= port < 65536:
            raise ValueError(f"port {port} is out of range")
        access = WebAccess.start(host, port, token, allow_hosts)
        check_listen(listen, token=access.token, client_certs=False)
    except (ValueError, ServeConfigError) as exc:
        raise click.UsageError(str(exc)) from None
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {listen}: {exc.strerror or exc}") from None
    opener: Any = frontend("web")
    raise click.exceptions.Exit(opener(list(command), access=access.bound(int(sock.getsockname()[1])), sock=sock))
