"""``goldfive serve`` (host runs headless over gRPC) and ``goldfive attach`` (the TUI on one).

``ctl`` lives in :mod:`goldfive.cli.ctl`; :func:`register` adds all three to the group.
Bad input is one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

import click

from goldfive.cli.extras import budget_option, extras_options, review_options

from goldfive.cli.output import echo, field
from goldfive.errors import GoldfiveError, RemoteError
from goldfive.remote.server import DEFAULT_LISTEN

__all__ = ["attach_command", "register", "serve_command"]

EXIT_BAD_INPUT = 2


def _fail(command: str, message: str) -> click.exceptions.Exit:
    echo(f"goldfive {command}: error: {field(message)}", err=True)  # a hub's refusal can quote a run
    return click.exceptions.Exit(EXIT_BAD_INPUT)


@click.command("serve", short_help="Host runs (the demo or your agent) over gRPC.")
@click.argument("target", required=False, metavar="[demo | MODULE:FUNCTION]")
@click.option("--listen", default=DEFAULT_LISTEN, show_default=True, help="HOST:PORT to listen on.")
@click.option(
    "--token",
    "tokens",
    multiple=True,
    help="Operator token: list, watch and control every run (default: GOLDFIVE_TOKEN). "
    "NAME=SECRET names it (repeatable; the name is recorded as the author of its controls).",
)
@click.option(
    "--token-file",
    "token_files",
    multiple=True,
    metavar="FILE",
    help="Operator tokens from FILE, one [NAME=]SECRET a line (repeatable): kept out of the process list.",
)
@click.option(
    "--runner-token",
    "runner_tokens",
    multiple=True,
    help="Runner token: may only connect a run (Hub.Connect), never list or control runs (default: "
    "GOLDFIVE_RUNNER_TOKEN). NAME=SECRET, repeatable.",
)
@click.option(
    "--runner-token-file",
    "runner_token_files",
    multiple=True,
    metavar="FILE",
    help="Runner tokens from FILE, one [NAME=]SECRET a line (repeatable).",
)
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), help="TLS certificate (PEM).")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), help="TLS private key (PEM).")
@click.option(
    "--tls-client-ca",
    type=click.Path(exists=True, dir_okay=False),
    help="CA certificate (PEM): require every client to present a certificate it signed.",
)
@click.option(
    "--db",
    "db_path",
    help="SQLite file runs are recorded to and served from (default: user data dir), or a PostgreSQL URL "
    "(postgresql://USER@HOST/DB, the [postgres] extra) shared by several hubs.",
)
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
@click.option(
    "--interrupt-after",
    type=float,
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="A connected run whose runner is gone this long shows INTERRUPTED (DISCONNECTED until then).",
)
@click.option(
    "--notify-cmd",
    "notify_cmds",
    multiple=True,
    metavar="[FILTER ::] CMD",
    help="Run CMD through the shell, the notice as JSON on stdin, when a run needs a person (repeatable). "
    "FILTER: kind=approval,question run=ID tool=GLOB to=NAME (whom its links are issued to; default 'link').",
)
@click.option(
    "--escalate-cmd",
    "escalate_cmds",
    multiple=True,
    metavar="[FILTER ::] CMD",
    help="Like --notify-cmd, for approvals escalated after --escalate-after (repeatable).",
)
@click.option("--remind-after", type=float, metavar="SECONDS", help="Announce an undecided approval again every SECONDS.")
@click.option(
    "--escalate-after", type=float, metavar="SECONDS",
    help="Send an undecided approval to --escalate-cmd after SECONDS (before its timeout policy acts).",
)
@click.option(
    "--approvers",
    "approver_rules",
    multiple=True,
    metavar="TOOL=NAME,NAME",
    help="Only these operators (token names, or a link's to=NAME) may decide calls of TOOL (a glob; * for every "
    "approval); repeatable. Anyone else is refused with PERMISSION_DENIED.",
)
@click.option(
    "--http", "http_listen", metavar="HOST:PORT",
    help="Serve the approval pages (one-time links in every notice, and an index behind the operator token) "
    "on HOST:PORT (pip install 'goldfive[http]'). Off loopback: TLS (--tls-cert/--tls-key) or --public-url https://...",
)
@click.option("--public-url", metavar="URL", help="With --http: the https origin of a TLS proxy in front of the pages (links use it).")
@click.option(
    "--link-ttl", type=float, default=86400.0, show_default=True, metavar="SECONDS",
    help="With --http: a link decides for at most this long (and never past its approval's deadline).",
)
@click.option(
    "--runner-limits",
    metavar="runs=N,lanes=N,events=N,event-bytes=N",
    help="What each runner token may use: runs connected at once (5000), lanes on one shared stream (5000), "
    "events per second (200000; beyond it its streams are slowed, nothing is dropped), bytes per event (1048576; at most 3932160).",
)
@click.option(
    "--ray",
    "ray_address",
    metavar="ADDRESS|auto",
    help="Place every run started with `ctl start` as an actor on this Ray cluster (pip install 'goldfive[ray]').",
)
@click.option(
    "--ray-resources",
    metavar="JSON",
    help='With --ray: what each run asks of the cluster, e.g. \'{"num_cpus": 0.1, "resources": {"agents": 1}}\' '
    "(default 0.1 CPU).",
)
@click.option(
    "--advertise",
    metavar="HOST:PORT",
    help="With --ray: the address the runs' actors dial back (default: the listen address).",
)
@click.option(
    "--runs-per-actor",
    type=int,
    default=None,
    metavar="N",
    help="With --ray: up to N runs share one actor process (default 1); --ray-resources is then what each actor asks.",
)
@review_options
@extras_options
@budget_option("The budget of every run this hub starts, or that connects to it, that sets none, e.g. tokens=50000,usd=2 "
               "(ctl start --budget gives one its own): at a limit the run pauses and asks.")
def serve_command(
    target: str | None,
    listen: str,
    tokens: tuple[str, ...],
    token_files: tuple[str, ...],
    runner_tokens: tuple[str, ...],
    runner_token_files: tuple[str, ...],
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
    interrupt_after: float,
    notify_cmds: tuple[str, ...],
    escalate_cmds: tuple[str, ...] = (),
    remind_after: float | None = None,
    escalate_after: float | None = None,
    approver_rules: tuple[str, ...] = (),
    http_listen: str | None = None,
    public_url: str | None = None,
    link_ttl: float = 86400.0,
    runner_limits: str | None = None,
    ray_address: str | None = None,
    ray_resources: str | None = None,
    advertise: str | None = None,
    runs_per_actor: int | None = None,
    prices_path: str | None = None,
    otel: bool = False,
    budget_text: str | None = None,
    review_instructions: str | None = None,
    review_grace: str | None = None,
) -> None:
    """Serve runs over gRPC until interrupted: every run recorded in the database, the run
    TARGET names if given (the demo, or your async agent MODULE:FUNCTION), and any run started
    later with `goldfive ctl ADDR start`. With no TARGET it starts as an empty hub."""
    from goldfive.remote.launch import Launch, agent_run, demo_run, resume_with
    from goldfive.remote.gc_tuning import tune_for_serving
    from goldfive.remote.server import RemoteServer, default_db_path, is_postgres, serve
    from goldfive.inputs import InputError
    from goldfive.cli.tokens import server_tokens
    from goldfive.settings import redact_dsn as redact, remote_token, runner_token

    def warn(message: str) -> None:
        click.echo(f"goldfive serve: warning: {message}", err=True)

    from goldfive.cli.extras import install_extras, make_reviewer
    from goldfive.errors import GoldfiveError

    try:  # the reviewer of every run this hub starts in its process (docs/approvals.md#a-reviewer)
        reviewer = make_reviewer(review_instructions, review_grace)
    except GoldfiveError as exc:
        raise _fail("serve", str(exc)) from None
    # --otel: the hub exports every run it serves live, hosted or connected (its event hook),
    # so no run of this process gets a sink of its own as well.
    exporter = install_extras(prices_path, otel, command="serve", as_sink=False, budget_text=budget_text, reviewer=reviewer)
    try:
        token = server_tokens(tokens, token_files, remote_token(), flag="--token", warn=warn)
        runners = server_tokens(runner_tokens, runner_token_files, runner_token(), flag="--runner-token", warn=warn)
    except InputError as exc:
        raise _fail("serve", str(exc)) from None
    if runners and not token and not runner_tokens and not runner_token_files:
        raise _fail("serve", "GOLDFIVE_RUNNER_TOKEN is set but no operator token is given (--token, --token-file or "
                             "GOLDFIVE_TOKEN): nobody could watch or control the runs")  # fmt: skip
    if not interrupt_after > 0:
        raise _fail("serve", f"--interrupt-after must be a positive number of seconds, got {interrupt_after}")
    if any(not cmd.strip() for cmd in notify_cmds):
        raise _fail("serve", "--notify-cmd needs a command")
    from goldfive.approvals.approvers import Approvers
    from goldfive.approvals.policy import ApprovalReminders
    from goldfive.hub.quota import RunnerLimits
    from goldfive.phone.routes import NoticeRoute

    try:
        limits = RunnerLimits.parse(runner_limits) if runner_limits is not None else None
        approvers = Approvers.parse(approver_rules)
        for text in notify_cmds:
            NoticeRoute.parse(text)
        for text in escalate_cmds:
            NoticeRoute.parse(text, flag="--escalate-cmd")
    except GoldfiveError as exc:
        raise _fail("serve", str(exc)) from None
    try:
        reminders = ApprovalReminders(remind_after, escalate_after) if remind_after or escalate_after else None
    except ValueError as exc:
        raise _fail("serve", f"--remind-after / --escalate-after: {exc}") from None
    if escalate_cmds and escalate_after is None:
        raise _fail("serve", "--escalate-cmd needs --escalate-after SECONDS: when an approval goes to it")
    if reviewer is not None and approvers:
        # A tool only named operators may decide is never the reviewer's: its calls go to them.
        from dataclasses import replace as _replace

        from goldfive.cli.extras import hub_reviewer
        from goldfive.run.defaults import install_run_defaults, run_defaults

        install_run_defaults(_replace(run_defaults(), reviewer=hub_reviewer(reviewer, approvers)))
    http = None
    if http_listen is not None:
        from goldfive.phone.config import PhoneConfig, check_config

        http = PhoneConfig(http_listen, public_url or "", link_ttl, tls_cert, tls_key)
        try:
            check_config(http)
        except GoldfiveError as exc:
            raise _fail("serve", str(exc)) from None
    elif public_url is not None:
        raise _fail("serve", "--public-url needs --http HOST:PORT")
    runs: list[Launch] = []
    try:
        if target == "demo":
            if speed <= 0:
                raise _fail("serve", f"--speed must be positive, got {speed}")
            runs.append(demo_run(speed))
        elif target is not None:
            if not goal or not goal.strip():
                raise _fail("serve", "MODULE:FUNCTION needs --goal TEXT: say what the run should achieve")
            runs.append(agent_run(target, goal, plan_path, base_url, model))
    except GoldfiveError as exc:
        raise _fail("serve", str(exc)) from None
    db = db_path or str(default_db_path())
    placer = _ray_placer(ray_address, ray_resources, advertise, listen, token, runners, tls_cert, runs_per_actor, db)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[RemoteServer] = loop.create_future()
        task = loop.create_task(
            serve(
                listen, token, tls_cert, tls_key, db, runs, ingest=ingest, ready=ready,
                tls_client_ca=tls_client_ca, allow_damaged_db=allow_damaged_db,
                resume_with=None if no_resume else resume_with, runner_token=runners,
                interrupt_after=interrupt_after,
                notify_cmd=notify_cmds, placer=placer, runner_limits=limits, escalate_cmd=escalate_cmds,
                http=http, approvers=approvers, reminders=reminders,
                event_hooks=[exporter.handle] if exporter is not None else [],
            )  # fmt: skip
        )
        with contextlib.suppress(NotImplementedError):  # SIGTERM stops it as cleanly as Ctrl-C
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        first: set[asyncio.Future[Any]] = {task, ready}
        await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            server = ready.result()
            # This process is the hub: what it built at start lives as long as it does.
            tune_for_serving()
            scheme = "TLS" if server.tls else "plaintext"
            needs = (["token"] if token else []) + (["client certificate"] if server.client_certs else [])
            if runners:
                needs[0] = f"token ({len(token)} operator, {len(runners)} runner)"
            auth = " and ".join(needs) + " required" if needs else "no token"
            shown = redact(db) if is_postgres(db) else db
            click.echo(f"goldfive serve: listening on {server.address} ({scheme}, {auth}); db {shown}", err=True)
            if placer is not None:
                click.echo(f"goldfive serve: runs started with ctl start go to the Ray cluster; they dial back {placer.address}", err=True)
            if server.pages is not None:
                pages = server.pages
                note = "" if pages.generated else " (the token is one of yours)"
                click.echo(f"goldfive serve: approval pages on {pages.base_url}; everything waiting: {pages.index_url()}{note}", err=True)
            for run in server.host.runs():
                echo(f"  run {field(run.run_id)}: {'live' if run.live else 'recorded'}", err=True)  # a runner chose the id
        try:
            await task
        except asyncio.CancelledError:
            click.echo("goldfive serve: stopped", err=True)
        finally:
            if exporter is not None:  # what the hub's runs did so far goes out before it exits
                await exporter.shutdown()

    try:
        asyncio.run(main())
    except GoldfiveError as exc:
        raise _fail("serve", str(exc)) from None
    except KeyboardInterrupt:
        click.echo("goldfive serve: stopped", err=True)


def _ray_placer(
    address: str | None,
    resources: str | None,
    advertise: str | None,
    listen: str,
    tokens: list[str],
    runner_tokens: list[str],
    tls_cert: str | None,
    runs_per_actor: int | None = None,
    db: str = "",
) -> Any:
    """The RayPlacer for ``--ray`` (joined to the cluster, in the namespace of ``db``: a hub
    started again on it finds the actors of its runs there), or None; bad flags or a cluster
    that cannot be reached end serve with one line."""
    if address is None:
        for flag, given in (("--ray-resources", resources), ("--advertise", advertise), ("--runs-per-actor", runs_per_actor)):
            if given is not None:
                raise _fail("serve", f"{flag} needs --ray ADDRESS|auto")
        return None
    try:
        from goldfive.placement.ray_placer import RayPlacer, host_port, namespace_for
    except ImportError as exc:
        raise _fail("serve", f"--ray needs Ray: pip install 'goldfive[ray]' ({exc})") from None
    from goldfive.placement.resources import RayResources, parse_resources
    from goldfive.remote.auth import OPERATOR, credentials

    if runs_per_actor is not None and runs_per_actor < 1:
        raise _fail("serve", f"--runs-per-actor must be 1 or more, not {runs_per_actor}")
    if tls_cert:
        raise _fail("serve", "--ray with TLS is not supported yet: the actors would need the hub's CA on every node")
    try:
        wanted = parse_resources(resources) if resources is not None else RayResources()
        if advertise is not None and host_port(advertise) is None:
            raise GoldfiveError(f"--advertise {advertise!r} is not HOST:PORT")
        creds = credentials(tokens, runner_tokens)
        op = next((c for c in creds if c.role == OPERATOR), None)
        connecting = next((c for c in creds if c.role != OPERATOR), op)
        placer = RayPlacer.connect(
            address.strip(), wanted, connect_token=connecting.secret if connecting else "",
            read_token=op.secret if op else "", advertise=advertise, connect_as=connecting.name if connecting else "",
            runs_per_actor=runs_per_actor or 1, namespace=namespace_for(db) if db else "goldfive",
        )  # fmt: skip
        placer.check_listen(listen)
    except GoldfiveError as exc:
        raise _fail("serve", str(exc)) from None
    return placer


@click.command("attach", short_help="Open the TUI on a run served at ADDR.")
@click.argument("addr", metavar="ADDR")
@click.option("--run-id", help="Open this run (its id or a unique prefix of 4+ characters); without it, the runs screen lists every run.")
@click.option("--token", help="Bearer token (default: GOLDFIVE_TOKEN).")
@click.option("--token-file", metavar="FILE", help="Read the bearer token from FILE (kept out of the process list).")
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
    token_file: str | None,
    tls_ca: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    notify_cmd: str | None,
    ray_address: str | None = None,
    ray_resources: str | None = None,
    advertise: str | None = None,
) -> None:
    """Open the runs screen of the hub at ADDR (every run, what needs you first), or with
    --run-id the TUI on that run: every key works, with the run's acks."""
    from goldfive.cli.ctl import addr_problem, client_cert_problem
    from goldfive.inputs import InputError
    from goldfive.cli.tokens import client_token
    from goldfive.link.client import RemoteClient
    from goldfive.settings import remote_token

    problem = addr_problem(addr) or client_cert_problem(tls_cert, tls_key)
    if problem is None and notify_cmd is not None and not notify_cmd.strip():
        problem = "--notify-cmd needs a command"
    if problem is not None:
        raise _fail("attach", problem)
    try:
        token = client_token(token, token_file, remote_token(), flag="--token", warn=lambda m: click.echo(f"goldfive attach: warning: {m}", err=True))
    except InputError as exc:
        raise _fail("attach", str(exc)) from None
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
        raise _fail("attach", exc.in_words(addr)) from None
    except (GoldfiveError, OSError) as exc:  # OSError: a certificate file that cannot be read
        raise _fail("attach", str(exc)) from None
    from goldfive.cli.frontends import frontend

    if notify_cmd is not None:
        tls.update(notify_cmd=notify_cmd, notify_after=str(last_sequence))
    frontend("attach")(addr, chosen or None, token=token, **tls)


def register(group: click.Group) -> None:
    from goldfive.cli.ctl import ctl

    group.add_command(serve_command)
    group.add_command(attach_command)
    group.add_command(ctl)
