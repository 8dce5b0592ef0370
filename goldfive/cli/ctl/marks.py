"""``ctl ack-failure`` (``dismiss``) and ``ctl archive``: a person's marks on a run, kept by the hub.

A failed run needs a person until someone has seen it: acknowledging it takes it out of "needs
you" (it stays in the list, ABORTED). Archiving an ended run leaves it out of ``ctl runs`` and
the runs screen (``ctl runs --archived`` lists it again). Neither writes into the run's own
events; ``--undo`` takes a mark off.
"""

from __future__ import annotations

import json
from typing import Any

import click

from goldfive.cli.ctl.group import EXIT_FAILURE, _RUN, _call, _dict, _fail, _Opts, _options, ctl
from goldfive.cli.output import echo, field
from goldfive.errors import RemoteError
from goldfive.link.client import RemoteClient
from goldfive.store.registry import ACKNOWLEDGED, ARCHIVED

__all__ = ["ack_failure_command", "archive_command"]


def _mark(opts: _Opts, run_id: str, mark: str, undo: bool, done: str) -> None:
    async def send(client: RemoteClient) -> Any:
        try:
            return await client.mark_run(run_id, mark, undo=undo)
        except RemoteError as exc:
            if exc.code == "FAILED_PRECONDITION":  # the hub refused: not failed, still running
                raise _fail(str(exc).removeprefix("FAILED_PRECONDITION: "), EXIT_FAILURE) from None
            raise

    s = _call(opts, send)
    if opts.as_json:
        click.echo(json.dumps(_dict(s)))
        return
    echo(f"run {field(s.run_id)} ({field(s.state)}): {done}")


@ctl.command("ack-failure", short_help="Acknowledge a failed run: it no longer needs you.")
@_RUN
@click.option("--undo", is_flag=True, help="Take the acknowledgement back: the failure needs a person again.")
@_options
def ack_failure_command(opts: _Opts, run_id: str, undo: bool) -> None:
    """Say that you have seen that RUN failed: it no longer needs a person (it stays listed,
    ABORTED). The hub keeps who acknowledged it. Exit 1 when the run has not failed."""
    _mark(opts, run_id, ACKNOWLEDGED, undo, "needs you again" if undo else "failure acknowledged, it no longer needs you")


ctl.add_command(ack_failure_command, "dismiss")


@ctl.command("archive", short_help="Archive an ended run: left out of the lists.")
@_RUN
@click.option("--undo", is_flag=True, help="Bring the run back into the lists.")
@_options
def archive_command(opts: _Opts, run_id: str, undo: bool) -> None:
    """Archive RUN, which has ended: `ctl runs` and the runs screen leave it out (`ctl runs
    --archived` lists it). Its recording is kept. Exit 1 while it is still going."""
    _mark(opts, run_id, ARCHIVED, undo, "back in the lists" if undo else "archived (ctl runs --archived lists it)")
