"""``goldfive serve`` (host runs headless over gRPC) and ``goldfive attach`` (the TUI on one).

``ctl`` lives in :mod:`goldfive.cli.ctl`; :func:`register` adds all three to the group.
Bad input is one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING, Any

import click

from goldfive.errors import GoldfiveError, RemoteError
from goldfive.remote.server import DEFAULT_LISTEN

if TYPE_CHECKING:
    from goldfive.pb.goldfive.v1.service_pb2 import RunSummary

__all__ = ["attach_command", "register", "serve_command"]

EXIT_BAD_INPUT = 2


def _fail(command: str, message: str) -> click.exceptions.Exit:
    click.echo(f"goldfive {command}: error: {message}", err=True)
    return click.exceptions.Exit(EXIT_BAD_INPUT)


def _demo_run(speed: float) -> tuple[Any, str]:
    from goldfive.demo import DEMO_GOAL, make_demo_runner

    def factory(*, sinks: Any, control: Any, run_id: str) -> Any:
        runner = make_demo_runner(sinks=sinks, control=control, speed=speed, run_id=run_id)
        runner.launch = {"command": "serve", "target": "demo", "speed": speed}  # to resume it after a restart
        return runner

    return factory, DEMO_GOAL


def _resume_with(launch: dict[str, Any]) -> Any:
    """The factory that builds a hosted run again from its recorded launch; None for runs
    serve did not start (``goldfive run`` ones are resumed with ``goldfive resume``)."""
    if launch.get("command") != "serve":
        return None
    if launch.get("target") == "demo":
        return _demo_run(float(launch.get("speed", 1.0)))[0]
    target = str(launch.get("target", ""))
    return _agent_run(
        target, str(launch.get("goal", "")), launch.get("plan"), launch.get("base_url"), launch.get("model"),
        search_dir=launch.get("cwd"),
    )[0]  # fmt: skip


def _agent_run(
    spec: str, goal: str, plan_path: str | None, base_url: str | None, model: str | None, *, search_dir: str | None = None
) -> tuple[Any, str]:
    import os

    from goldfive.cli.inputs import load_agent

    agent = load_agent(spec, search_dir=search_dir)
    launch = {
        "command": "serve", "target": spec, "goal": goal, "plan": os.path.abspath(plan_path) if plan_path else None,
        "base_url": base_url, "model": model, "cwd": os.path.abspath(search_dir or os.getcwd()),
    }  # fmt: skip
    from goldfive.cli.inputs import make_planner

    planner = make_planner(plan_path, base_url, model, None).planner

    def factory(*, sinks: Any, control: Any, run_id: str) -> Any:
        from goldfive.adapters.frameworks import adapter_for
        from goldfive.goals import PassthroughGoalDeriver
        from goldfive.runner import Runner

        return Runner(
            agent=adapter_for(agent),
            planner=planner,
            goal_deriver=PassthroughGoalDeriver(goal),
            sinks=sinks,
            control=control,
            run_id=run_id,
            launch=launch,
        )

    return factory, goal


@click.command("serve", short_help="Host runs (the demo or your agent) over gRPC.")
@click.argument("target", required=False, metavar="[demo | MODULE:FUNCTION]")
@click.option("--listen", default=DEFAULT_LISTEN, show_default=True, help="HOST:PORT to listen on.")
@click.option("--token", help="Require this bearer token on every call (default: GOLDFIVE_TOKEN).")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), help="TLS certificate (PEM).")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), help="TLS private key (PEM).")
@click.option(
    "--tls-client-ca",
    type=click.Path(exists=True, dir_okay=False),
    help="CA certificate (PEM): require every client to present a certificate it signed.",
)
@click.option("--db", "db_path", help="SQLite file runs are recorded to and served from (default: user data dir).")
@click.option("--ingest", is_flag=True, help="Also accept runs pushed by GRPCSink producers (GoldfiveIngress).")
@click.option(
    "--allow-damaged-db", is_flag=True, help="Serve what a damaged database still holds instead of refusing to start."
)
@click.option("--no-resume", is_flag=True, help="Leave runs this server hosted and that a stop interrupted as they are.")
@click.option("--speed", type=float, default=1.0, show_default=True, help="demo: pace multiplier.")
@click.option("--goal", help="MODULE:FUNCTION: what the run should achieve.")
@click.option("--plan", "plan_path", type=click.Path(dir_okay=False), help="MODULE:FUNCTION: a plan JSON file.")
@click.option("--base-url", help="MODULE:FUNCTION: OpenAI-compatible server for the LLM planner.")
@click.option("--model", help="MODULE:FUNCTION: model name for the LLM planner.")
@click.option("--notify-cmd", help="Run this shell command, the notice as JSON on stdin, when a run needs a person.")
def serve_command(
    target: str | None,
    listen: str,
    token: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    tls_client_ca: str | None,
    db_path: str | None,
    ingest: bool,
    allow_damaged_db: bool,
    no_resume: bool,
    speed: float,
    goal: str | None,
    plan_path: str | None,
    base_url: str | None,
    model: str | None,
    notify_cmd: str | None,
) -> None:
    """Host a run (the demo, or your async agent MODULE:FUNCTION) headless and serve it, and
    every run recorded in the database, over gRPC until interrupted."""
    from goldfive.remote.server import RemoteServer, default_db_path, serve
    from goldfive.settings import remote_token

    token = token or remote_token()
    if notify_cmd is not None and not notify_cmd.strip():
        raise _fail("serve", "--notify-cmd needs a command")
    runs: list[tuple[Any, str]] = []
    try:
        if target == "demo":
            if speed <= 0:
                raise _fail("serve", f"--speed must be positive, got {speed}")
            runs.append(_demo_run(speed))
        elif target is not None:
            if not goal or not goal.strip():
                raise _fail("serve", "MODULE:FUNCTION needs --goal TEXT: say what the run should achieve")
            runs.append(_agent_run(target, goal, plan_path, base_url, model))
    except GoldfiveError as exc:
        raise _fail("serve", str(exc)) from None
    db = db_path or str(default_db_path())

    async def main() -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[RemoteServer] = loop.create_future()
        task = loop.create_task(
            serve(
                listen, token, tls_cert, tls_key, db, runs, ingest=ingest, ready=ready,
                tls_client_ca=tls_client_ca, allow_damaged_db=allow_damaged_db,
                resume_with=None if no_resume else _resume_with, notify_cmd=notify_cmd,
            )  # fmt: skip
        )
        with contextlib.suppress(NotImplementedError):  # SIGTERM stops it as cleanly as Ctrl-C
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        first: set[asyncio.Future[Any]] = {task, ready}
        await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            server = ready.result()
            scheme = "TLS" if server.tls else "plaintext"
            needs = (["token"] if token else []) + (["client certificate"] if server.client_certs else [])
            auth = " and ".join(needs) + " required" if needs else "no token"
            click.echo(f"goldfive serve: listening on {server.address} ({scheme}, {auth}); db {db}", err=True)
            for run in server.host.runs():
                click.echo(f"  run {run.run_id}: {'live' if run.live else 'recorded'}", err=True)
        try:
            await task
        except asyncio.CancelledError:
            click.echo("goldfive serve: stopped", err=True)

    try:
        asyncio.run(main())
    except GoldfiveError as exc:
        raise _fail("serve", str(exc)) from None
    except KeyboardInterrupt:
        click.echo("goldfive serve: stopped", err=True)


def choose_run(summaries: list[RunSummary]) -> str:
    """The one live run, else the latest started one."""
    if not summaries:
        raise GoldfiveError("the server hosts no runs")
    live = [s for s in summaries if s.state in ("PENDING", "RUNNING", "PAUSED")]
    if len(live) > 1:
        raise GoldfiveError(f"several live runs, pick one with --run-id: {', '.join(s.run_id for s in live)}")
    if live:
        return live[0].run_id
    return max(summaries, key=lambda s: s.started_at.ToMilliseconds()).run_id


@click.command("attach", short_help="Open the TUI on a run served at ADDR.")
@click.argument("addr", metavar="ADDR")
@click.option("--run-id", help="Which run: its id or a unique prefix of 4+ characters (default: the one live run, else the latest).")
@click.option("--token", help="Bearer token (default: GOLDFIVE_TOKEN).")
@click.option("--tls-ca", type=click.Path(exists=True, dir_okay=False), help="CA certificate (PEM): use TLS.")
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False),
    help="This client's certificate (PEM), for a server that requires one.",
)
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), help="The private key (PEM) of --tls-cert.")
@click.option("--notify-cmd", help="Run this shell command, the notice as JSON on stdin, when a run needs a person.")
def attach_command(
    addr: str,
    run_id: str | None,
    token: str | None,
    tls_ca: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    notify_cmd: str | None,
) -> None:
    """Open the runs screen of the hub at ADDR (every run, what needs you first), or with
    --run-id the TUI on that run: every key works, with the run's acks."""
    from goldfive.cli.ctl import addr_problem, client_cert_problem
    from goldfive.remote.client import RemoteClient
    from goldfive.settings import remote_token

    problem = addr_problem(addr) or client_cert_problem(tls_cert, tls_key)
    if problem is None and notify_cmd is not None and not notify_cmd.strip():
        problem = "--notify-cmd needs a command"
    if problem is not None:
        raise _fail("attach", problem)

    token = token or remote_token()
    tls: dict[str, str | None] = {"tls_ca": tls_ca}
    if tls_cert is not None:  # only then: a front-end without client certificates still opens
        tls.update(tls_client_cert=tls_cert, tls_client_key=tls_key)

    async def pick() -> tuple[str, int]:
        """The run (and its last sequence now, after which its events are news); with no
        --run-id, ("", -1): the runs screen, once the hub answered."""
        client = RemoteClient(addr, token=token, tls_ca=tls_ca, tls_client_cert=tls_cert, tls_client_key=tls_key)
        async with client:
            if run_id is not None:  # the server resolves a unique prefix, as it does for ctl
                snap = await client.get_run(run_id)
                return snap.summary.run_id, snap.last_sequence
            await client.list_runs()  # a wrong address or token is one line here, not a TUI
            return "", -1

    try:
        chosen, last_sequence = asyncio.run(pick())
    except RemoteError as exc:
        raise _fail("attach", f"{addr}: {exc}") from None
    except (GoldfiveError, OSError) as exc:  # OSError: a certificate file that cannot be read
        raise _fail("attach", str(exc)) from None
    from goldfive.cli import frontend

    if notify_cmd is not None:
        tls.update(notify_cmd=notify_cmd, notify_after=str(last_sequence))
    frontend("attach")(addr, chosen or None, token=token, **tls)


def register(group: click.Group) -> None:
    from goldfive.cli.ctl import ctl

    group.add_command(serve_command)
    group.add_command(attach_command)
    group.add_command(ctl)
