"""The ``goldfive`` console script: the core's command line with the terminal UI plugged in.

``goldfive.cli`` holds every command and never imports the TUI; this module registers the
front-ends that open it, so ``goldfive demo`` (without --headless) shows the app.
"""

from __future__ import annotations

import socket
import sys
import time
from typing import TYPE_CHECKING, Any

from goldfive.cli import FRONTENDS, main

if TYPE_CHECKING:
    from goldfive.remote.web_access import WebAccess


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def open_demo(*, runs: int | None = None, **kw: Any) -> int:
    if runs is not None:  # demo --runs N: the runs screen over N in-process runs
        from .runs.launch import run_demo_hub

        return run_demo_hub(runs=runs, **kw)
    from .launch import run_demo_tui

    return run_demo_tui(**kw)


def open_run(factory: Any, *, db_path: str | None = None) -> int:
    from .launch import run_local_tui

    return run_local_tui(factory, db_path=db_path)


def open_replay(recording: Any, *, back: bool = False) -> Any:
    """The replay; ``back``: it was picked from the list of runs, and b returns
    BACK_TO_PICKER to show that list again."""
    from .app import GoldfiveApp
    from .run import replay_screen

    return GoldfiveApp(replay_screen(recording, back=back)).run()


def open_attach(
    addr: str,
    run_id: str | None,
    *,
    token: str | None = None,
    tls_ca: str | None = None,
    tls_client_cert: str | None = None,
    tls_client_key: str | None = None,
    notify_cmd: str | None = None,
    notify_after: str = "-1",
) -> int:
    """``run_id`` None: the runs screen of the hub at ``addr``; else the TUI on that run
    (``notify_cmd`` then hears of its events after sequence ``notify_after``)."""
    tls = dict(tls_ca=tls_ca, tls_client_cert=tls_client_cert, tls_client_key=tls_client_key)
    if run_id is None:
        from .runs.launch import run_attach_hub

        return run_attach_hub(addr, token=token, notify_cmd=notify_cmd, **tls)
    from .app import GoldfiveApp
    from .grpc_source import GrpcRunSource, connection_notifier
    from .run.screen import RunScreen
    from .runs.launch import with_notices

    source = GrpcRunSource(addr, run_id, token=token, tls_ca=tls_ca, tls_client_cert=tls_client_cert, tls_client_key=tls_client_key)
    screen = RunScreen(with_notices(source, notify_cmd, int(notify_after)), clock=_wall_ms)
    source.on_state = connection_notifier(screen)
    GoldfiveApp(screen).run()
    return 0


def open_pick_run(path: str, choices: Any) -> str | None:
    from .pick_run import pick_run

    return pick_run(path, choices)


def open_web(command: list[str], *, access: WebAccess, sock: socket.socket) -> int:
    try:
        from .web import open_web as serve_web
    except ImportError as exc:
        print(f"goldfive web needs textual-serve ({exc}); install it with: pip install 'goldfive[web]'", file=sys.stderr)
        return 2
    return serve_web(command, access=access, sock=sock)


FRONTENDS.update(demo=open_demo, run=open_run, replay=open_replay, attach=open_attach, web=open_web, pick_run=open_pick_run)

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    from .start_failed import serve_tab, under_web_driver

    if under_web_driver():  # a tab of goldfive web: a command that cannot start says why on the page
        sys.exit(serve_tab(sys.argv[1:]))
    main()
