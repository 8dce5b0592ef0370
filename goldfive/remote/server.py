"""Start a goldfive gRPC server: the Runs service (and optionally the ingest service).

``start_server`` returns a running :class:`RemoteServer` (tests, embedding); ``serve`` hosts
runs and serves until cancelled (the CLI). The listen address is checked before binding: a
non-loopback address needs a token or client certificates (see :mod:`goldfive.remote.auth`).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from goldfive.aio import cancel_and_wait
from goldfive.approvals.approvers import Approvers
from goldfive.approvals.policy import ApprovalReminders
from goldfive.budget.model import Budget
from goldfive.errors import DamagedStoreError, GoldfiveError, ServeConfigError
from goldfive.pb.goldfive.v1 import service_pb2_grpc
from goldfive.pb.goldfive.v1.events_pb2 import Event
from goldfive.hub.limits import DEFAULT_INTERRUPT_AFTER, MAX_MESSAGE_BYTES
from goldfive.hub.quota import RunnerLimits
from goldfive.remote.auth import OPERATOR, Credential, TokenInterceptor, check_listen, credentials, server_credentials, split_host_port
from goldfive.remote.guard import ParseGuard
from goldfive.remote.host import RunFactory, RunHost
from goldfive.remote.launch import Launch
from goldfive.remote.ingest import IngressService
from goldfive.remote.service import RunsService
from goldfive.store.history import check_database
from goldfive.store.registry import HOSTED, LaunchSpec

if TYPE_CHECKING:
    from goldfive.hub.fleet import Fleet
    from goldfive.hub.service import FleetPart, HubService
    from goldfive.phone.config import PhoneConfig
    from goldfive.phone.links import LinkBook
    from goldfive.phone.routes import NoticeDispatch
    from goldfive.phone.server import PhoneServer
    from goldfive.remote.served import ServedRun
    from goldfive.remote.service import Placer
    from goldfive.store.postgres import PostgresStore

__all__ = ["DEFAULT_LISTEN", "RemoteServer", "default_db_path", "serve", "start_server"]

DEFAULT_LISTEN = "127.0.0.1:7531"
log = logging.getLogger("goldfive.remote")

#: How often a hub on a SQLite file looks for runs other processes recorded into it (seconds):
#: their ids cost one seek each, nothing is read when there are none.
STORE_CHECK_EVERY = 2.0
#: How long ``serve`` waits for the SQLite file's integrity check before listening (seconds):
#: a larger file's check goes on while serving, and stops it if the file is damaged.
CHECK_WAIT = 1.0
#: How long ``serve`` lists recorded runs before listening (seconds; the check runs meanwhile,
#: and both end by CHECK_WAIT): a small file's runs are all listed when it answers, even on a
#: busy machine; a larger file's are listed as they are read.
LIST_WAIT = 1.0

#: Builds an interrupted run this hub started again from the launch the hub recorded (None:
#: not this hub's to resume): ``serve``'s ``resume_with``.
ResumeWith = Callable[[LaunchSpec], RunFactory | None]


def default_db_path() -> Path:
    """GOLDFIVE_DATA_DIR or the user data dir, then ``hub.sqlite`` (not ``goldfive run``'s
    ``runs.sqlite``: see goldfive.settings.hub_db_path)."""
    from goldfive.settings import hub_db_path

    return Path(hub_db_path())


@dataclass
class RemoteServer:
    """A running server. ``port`` is the bound port (useful with port 0)."""

    server: grpc.aio.Server
    host: RunHost
    port: int
    address: str
    tls: bool
    #: Clients must present a certificate signed by the configured CA.
    client_certs: bool = False
    #: The hub's Hub service: its runner streams end, then its shared recording is written out, on stop.
    extra: list[HubService] = field(default_factory=list)
    #: The approval pages (``serve --http``), or None.
    pages: PhoneServer | None = None

    async def stop(self, grace: float | None = None, *, close_runs: bool = True, suspend: bool = False) -> None:
        """Stop serving (in-flight calls get ``grace`` seconds), then close the hosted runs:
        cancelled, or with ``suspend`` (a hub that stops, not its runs) left interrupted in
        their recording for the next start to continue."""
        for part in self.extra:  # end the hub's runner streams: the runners reconnect later
            part.end_streams()
        try:
            # grpc.aio may raise CancelledError here when its termination future was
            # cancelled under wait_for_termination(); the runs must be closed regardless.
            await self.server.stop(grace)
        finally:
            if close_runs:
                await self.host.close(suspend=suspend)
            for part in self.extra:  # the hub's shared recording: written out last
                await part.close()


def check_approvers(approvers: Approvers, tokens: Sequence[Credential], recipients: Iterable[str] = ()) -> None:
    """``--approvers`` tells operators apart by their token's name: refused without named
    operator tokens, or naming someone who is neither an operator nor a link's recipient
    (``recipients``): a typo would let nobody decide."""
    names = {c.name for c in tokens if c.role == OPERATOR}
    if not names:
        raise ServeConfigError("--approvers needs operator tokens with names (--token NAME=SECRET): without them every caller is anonymous")
    unknown = sorted(approvers.names() - names - set(recipients))
    if unknown:
        raise ServeConfigError(
            f"--approvers names {', '.join(map(repr, unknown))}, which no operator token is called "
            f"(the operators are {', '.join(sorted(names))}; a link's recipient is named with to=NAME on --notify-cmd)"
        )


def _in_use(listen: str) -> bool:
    """True when something already listens on ``listen``'s port: said here in one line, before
    grpc's C core logs its own bind error to stderr."""
    hostname, port = split_host_port(listen)
    if not port.isdigit() or int(port) == 0:
        return False
    try:
        infos = socket.getaddrinfo(hostname or None, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return False  # grpc reports an unresolvable host itself
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is not "in use"
        try:
            probe.bind(addr)
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


async def start_server(
    host: RunHost,
    *,
    listen: str = DEFAULT_LISTEN,
    token: str | Sequence[str] | None = None,
    tls_cert: str | os.PathLike[str] | None = None,
    tls_key: str | os.PathLike[str] | None = None,
    ingress: IngressService | None = None,
    ack_timeout: float = 30.0,
    tls_client_ca: str | os.PathLike[str] | None = None,
    runner_token: str | Sequence[str] | None = None,
    interrupt_after: float = DEFAULT_INTERRUPT_AFTER,
    fleet: FleetPart | None = None,
    placer: Placer | None = None,
    runner_limits: RunnerLimits | None = None,
    approvers: Approvers | None = None,
    link_recipients: Iterable[str] = (),
    default_budget: Budget | None = None,
) -> RemoteServer:
    """Bind ``listen`` and start serving ``host``'s runs (and ``ingress``, an IngressService).
    With ``placer`` (a RayPlacer), StartRun's runs are placed by it, and it is told the hub
    and the bound address (``placer.bind(host, hub, address)``) before the server starts.
    With ``tls_client_ca`` (and TLS), clients must present a certificate that CA signed.

    ``token`` is the operator token, or several (each ``NAME=SECRET`` or a bare secret named
    "operator"): it may list, watch and control every run. ``runner_token`` (same forms) may
    only connect runs (see :mod:`goldfive.remote.auth`), within ``runner_limits``
    (:mod:`goldfive.hub.quota`). ``approvers``: who may decide which approvals
    (:mod:`goldfive.approvals.approvers`); it needs named operator tokens to tell callers apart,
    and names only operators or ``link_recipients`` (whom notices' links are issued to).
    ``default_budget`` (else the process's, ``serve --budget``): given, as a BUDGET control with
    author "hub default", to each run connecting from another process that has no budget of its own."""
    creds = server_credentials(tls_cert, tls_key, tls_client_ca)
    client_certs = creds is not None and tls_client_ca is not None
    tokens = credentials(token, runner_token)
    operator = next((c.secret for c in tokens if c.role == OPERATOR), None)
    check_listen(listen, token=operator, client_certs=client_certs, others=tokens)
    if approvers:
        check_approvers(approvers, tokens, link_recipients)
    interceptors: list[grpc.aio.ServerInterceptor] = [ParseGuard()]
    if tokens:
        interceptors.insert(0, TokenInterceptor(tokens))  # refuse a stranger before reading their request
    # grpc enables SO_REUSEPORT by default on Linux: a second server on a busy port would bind
    # too and silently share the connections with the first.
    # The message bound is gRPC's default, named where runners size their messages by it.
    options = [("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
    server = grpc.aio.server(interceptors=interceptors, options=options)
    service_pb2_grpc.add_RunsServicer_to_server(RunsService(host, ack_timeout=ack_timeout, placer=placer, approvers=approvers), server)
    if ingress is not None:
        service_pb2_grpc.add_GoldfiveIngressServicer_to_server(ingress, server)
    from goldfive.hub.service import HubService  # here: goldfive.hub builds on goldfive.remote

    from goldfive.run.defaults import run_defaults

    # runs connecting from other processes (Runner(hub=...), --ray); serve --budget is theirs too when they bring none
    budget = default_budget if default_budget is not None else run_defaults().budget
    hub = HubService(host, interrupt_after=interrupt_after, fleet=fleet, limits=runner_limits, default_budget=budget)
    service_pb2_grpc.add_HubServicer_to_server(hub, server)
    if _in_use(listen):
        raise ServeConfigError(f"cannot listen on {listen}: the address is already in use (another goldfive serve?)")
    try:
        port = server.add_secure_port(listen, creds) if creds is not None else server.add_insecure_port(listen)
    except RuntimeError as exc:  # grpc's own text only says "Failed to bind"
        why = "the TLS certificate and key were refused (do they match?)" if creds is not None else "the address is not available here"
        raise ServeConfigError(f"cannot listen on {listen}: {why}") from exc
    if port == 0:
        raise ServeConfigError(f"cannot listen on {listen}: the address is in use or not local")
    hostname, _ = split_host_port(listen)
    if placer is not None:
        placer.bind(host, hub, f"{hostname}:{port}")
    await server.start()
    return RemoteServer(server, host, port, f"{hostname}:{port}", creds is not None, client_certs, extra=[hub])


async def resume_interrupted(host: RunHost, resume_with: Callable[[LaunchSpec], RunFactory | None]) -> list[str]:
    """Continue the interrupted runs this hub started itself (``serve TARGET``, ``StartRun``),
    each built by ``resume_with`` from the launch the hub recorded in its registry when it
    started it. Nothing a run's events say is used to decide this: a runner can write any
    RunStarted. Each is logged; one that cannot go on stays interrupted, its reason logged."""
    registrations = await host.registry.all()
    resumed = []
    for reg in registrations.values():
        if reg.origin != HOSTED:
            continue  # not started by this hub: its own process (or nobody) continues it
        run = host.get(reg.run_id)  # read from the database now if it is not listed yet
        if run is None or run.live or run.history is None or run.state.finished:
            continue
        if reg.launch is None:
            log.warning("run %s stays interrupted: the hub recorded no launch to build it again", run.run_id)
            continue
        try:
            factory = resume_with(reg.launch)
            if factory is None:
                continue
            host.resume_run(factory, run.run_id)
        except GoldfiveError as exc:
            log.warning("run %s stays interrupted: %s", run.run_id, " ".join(str(exc).split()))
            continue
        log.info("run %s resumed from its recording", run.run_id)
        resumed.append(run.run_id)
    return resumed


async def serve(
    listen: str = DEFAULT_LISTEN,
    token: str | Sequence[str] | None = None,
    tls_cert: str | os.PathLike[str] | None = None,
    tls_key: str | os.PathLike[str] | None = None,
    db_path: str | os.PathLike[str] | None = None,
    runs: Iterable[Launch | tuple[Any, ...]] = (),
    *,
    ingest: bool = False,
    ready: asyncio.Future[RemoteServer] | None = None,
    tls_client_ca: str | os.PathLike[str] | None = None,
    allow_damaged_db: bool = False,
    resume_with: Callable[[LaunchSpec], RunFactory | None] | None = None,
    runner_token: str | Sequence[str] | None = None,
    interrupt_after: float = DEFAULT_INTERRUPT_AFTER,
    notify_cmd: str | Sequence[str] | None = None,
    placer: Placer | None = None,
    runner_limits: RunnerLimits | None = None,
    escalate_cmd: Sequence[str] = (),
    http: PhoneConfig | None = None,
    approvers: Approvers | None = None,
    reminders: ApprovalReminders | None = None,
    event_hooks: Sequence[Callable[[Event], None]] = (),
) -> None:
    """Host ``runs`` (Launch: factory, user input and the launch record that builds it again)
    and serve them, and every recorded run in
    ``db_path``, until cancelled. Finished runs stay served. With ``ingest``, also accept
    runs pushed by GRPCSink producers (GoldfiveIngress) and serve them live.

    A database that fails SQLite's quick_check raises DamagedStoreError naming the finding,
    unless ``allow_damaged_db``: then what is readable is served and the rest is reported on
    each run's summary.

    ``resume_with(launch)`` gives the factory that builds an interrupted run this hub started
    again from the launch the hub recorded (None: not ours to resume); those runs go on live
    here. Without it, interrupted runs stay as they are.

    Stopping (cancelled: Ctrl+C, SIGTERM) leaves the hosted runs interrupted, not cancelled:
    the next start continues them.

    ``notify_cmd``: shell commands run (notice JSON on stdin) whenever a run here needs a
    person, each ``[FILTER ::] COMMAND`` (goldfive.phone.routes); ``escalate_cmd``: the same for
    approvals escalated (``reminders``: when approvals of the runs hosted here are reminded and
    escalated). ``http``: the approval pages (goldfive.phone.server), whose links every notice
    carries. ``approvers``: who may decide which approvals (goldfive.approvals.approvers).

    ``placer`` (a RayPlacer): runs started with StartRun are placed by it, and so are the
    interrupted runs it can build again (instead of ``resume_with``); it is closed when
    serving ends.

    ``event_hooks``: told of every live event of every run served here, hosted or connected
    (``serve --otel``: the OTel export)."""
    reach = _Reach(notify_cmd, escalate_cmd, http, approvers, reminders)
    db = os.fspath(db_path) if db_path is not None else None
    backing: _LocalStore | _SharedStore
    if db is not None and is_postgres(db):
        backing = await _SharedStore.open(
            db, ingest=ingest, listen=listen, interrupt_after=interrupt_after, resume_with=resume_with, placer=placer
        )
    else:
        backing = _LocalStore(db if db is not None else default_db_path(), allow_damaged_db=allow_damaged_db, ingest=ingest)
    host = backing.host
    host.event_hooks.extend(event_hooks)
    reach.wire(host)  # after the store's own wiring: its warning joins the fleet's
    server: RemoteServer | None = None
    try:
        ingress = await backing.load(resume_with, placer)
        server = await start_server(
            host, listen=listen, token=token, tls_cert=tls_cert, tls_key=tls_key, ingress=ingress,
            tls_client_ca=tls_client_ca, runner_token=runner_token, interrupt_after=interrupt_after,
            fleet=backing.fleet, placer=placer, runner_limits=runner_limits, approvers=approvers,
            link_recipients=reach.recipients,
        )  # fmt: skip
        await reach.serve(server, backing.links_db, token)
        await backing.started(server, resume_with, placer)
        await _host_and_serve(server, runs, ready)
        if backing.failure is not None:
            raise backing.failure
    finally:
        # Teardown runs in its own task: this one may be cancelled (SIGTERM, Ctrl-C), and a
        # cancelled task's cleanup would be cut short at its first await.
        await asyncio.create_task(_stop(server, placer, backing, reach))


async def _stop(server: RemoteServer | None, placer: Placer | None, backing: _LocalStore | _SharedStore, reach: _Reach) -> None:
    """Stop serving (the hosted runs left interrupted, for the next start), leave the cluster,
    close the store, stop the pages and notices: each step even when the one before raised
    (grpc's stop may raise CancelledError)."""
    try:
        if server is not None:
            await server.stop(1.0, suspend=True)
    finally:
        try:
            if placer is not None:
                await placer.close()
        finally:
            try:
                await backing.close()
            finally:
                await reach.aclose()


class _LocalStore:
    """``serve`` on a SQLite file (or ":memory:"): this hub alone holds its runs. A damaged file
    is refused unless ``allow_damaged_db``; what the file records is served (listed in the
    background as it is read, so a large file does not delay listening), and the runs this hub
    started and a stop interrupted go on."""

    #: One hub alone: no fleet.
    fleet: Fleet | None = None

    def __init__(self, db_path: str | os.PathLike[str], *, allow_damaged_db: bool, ingest: bool) -> None:
        self.host = RunHost(db_path)
        self.allow_damaged_db = allow_damaged_db
        self.ingest = ingest
        #: The links' key and what was used (serve --http): beside the runs.
        self.links_db = self.host.db_path
        #: Once serving: the integrity check that outlasted CHECK_WAIT, and the reader that
        #: lists the recorded runs, then looks for new ones.
        self._tasks: list[asyncio.Task[None]] = []
        self._check: asyncio.Task[str | None] | None = None
        self._check_started = 0.0
        self._resume_with: ResumeWith | None = None
        #: Why serving stopped on its own (the file failed its check): ``serve`` raises it.
        self.failure: BaseException | None = None

    async def load(self, resume_with: ResumeWith | None, placer: Placer | None) -> IngressService | None:
        """Before serving: check the file (for at most ``CHECK_WAIT`` seconds: a large file's
        check goes on while serving, see :meth:`started`), continue this hub's own
        interrupted runs (unless a placer places them once the server is up; after the check),
        the ingress service with ``ingest``. The recorded runs are listed once serving."""
        host = self.host
        if host.db_path != ":memory:":
            started = time.monotonic()
            check = asyncio.get_running_loop().create_task(asyncio.to_thread(check_database, host.db_path))
            await asyncio.sleep(0)  # the check's thread starts
            host.load_recorded(within=LIST_WAIT)  # a small file's runs are all listed before serving
            await host.load_owners()
            done, _ = await asyncio.wait({check}, timeout=max(0.0, CHECK_WAIT - (time.monotonic() - started)))
            if done:
                self._verdict(check.result())
            else:
                self._check, self._check_started = check, time.monotonic()
                log.info("checking database %s goes on while serving (a large file)", host.db_path)
                before = host.warning
                host.warning = lambda: "; ".join(w for w in (before(), self._check_warning()) if w)
        host.mark_loaded()  # a run asked for by id is read from the file; the others are listed once serving
        if resume_with is not None and placer is None:
            if self._check is None:
                await resume_interrupted(host, resume_with)
            else:
                self._resume_with = resume_with  # once the file passed its check
        if not self.ingest:
            return None
        from goldfive.remote.ingest import HostIngest

        host.load_recorded()  # the duplicate filter needs every stored event id now
        await host.load_owners()
        return IngressService(HostIngest(host), known_event_ids=host.event_ids())

    def _verdict(self, problem: str | None) -> None:
        """The integrity check's finding: DamagedStoreError unless ``allow_damaged_db``."""
        if problem is None:
            return
        path = self.host.db_path
        if not self.allow_damaged_db:
            raise DamagedStoreError(
                f"database {path} is damaged ({problem}); --allow-damaged-db serves what is readable, or restore it from a backup"
            )
        log.error("database %s is damaged (%s); serving what is readable", path, problem)

    def _check_warning(self) -> str:
        if self._check is None or self._check.done():
            return ""
        return f"checking the database's integrity ({time.monotonic() - self._check_started:.0f} s so far)"

    async def _finish_check(self, server: RemoteServer) -> None:
        """The integrity check that outlasted ``CHECK_WAIT``: on damage (without
        ``allow_damaged_db``) serving stops and ``serve`` raises DamagedStoreError; else the
        hub's interrupted runs go on now."""
        assert self._check is not None
        try:
            self._verdict(await self._check)
        except DamagedStoreError as exc:
            log.error("%s", exc)
            self.failure = exc
            await server.server.stop(1.0)
            return
        if self._resume_with is not None:
            await resume_interrupted(self.host, self._resume_with)

    async def started(self, server: RemoteServer, resume_with: ResumeWith | None, placer: Placer | None) -> None:
        """Serving: the recorded runs are listed in the background as they are read, then runs
        recorded into the file by other processes are looked for every ``STORE_CHECK_EVERY``."""
        loop = asyncio.get_running_loop()
        if self._check is not None:
            self._tasks.append(loop.create_task(self._finish_check(server), name="check-store"))
        if resume_with is not None and placer is not None:
            await placer.resume_recorded()  # their actors ended with the last hub: placed again, they go on
        every = STORE_CHECK_EVERY if self.host.db_path != ":memory:" else None
        self._tasks.append(loop.create_task(self.host.read_store(every=every), name="read-store"))

    async def close(self) -> None:
        await cancel_and_wait(self._tasks)


class _SharedStore:
    """``serve`` on a PostgreSQL database shared with other hubs (goldfive.hub.fleet): every run
    is in the database, nothing on local disk; the runs a gone hub started go on here (in this
    process, or placed on Ray with a placer), one hub taking each under its lock."""

    def __init__(self, dsn: str, store: PostgresStore, fleet: Fleet, host: RunHost) -> None:
        from goldfive.settings import data_dir

        self.dsn, self.store, self.fleet, self.host = dsn, store, fleet, host
        #: The links' key and what was used: this hub's own file (a link decides on the hub
        #: that issued it).
        self.links_db = str(Path(data_dir()) / "hub-links.sqlite")
        self._claims: set[asyncio.Task[None]] = set()
        #: Serving does not stop on its own for a shared store (see _LocalStore.failure).
        self.failure: BaseException | None = None

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        ingest: bool,
        listen: str,
        interrupt_after: float,
        resume_with: ResumeWith | None,
        placer: Placer | None,
    ) -> _SharedStore:
        if ingest:
            raise ServeConfigError("--ingest (GoldfiveIngress) is not offered with a PostgreSQL --db: connect runs with Hub.Connect")
        try:
            from goldfive.hub.fleet import Fleet
            from goldfive.store.postgres import PostgresStore
        except ImportError as exc:
            raise ServeConfigError(
                f"--db postgresql://... needs the PostgreSQL extra: pip install 'goldfive[postgres]' ({exc.name} is missing)"
            ) from None
        store = await PostgresStore.open(dsn, max_size=8)
        host = RunHost(":memory:")  # nothing on local disk: the database holds every run
        fleet = Fleet(
            store, host, address=listen, interrupt_after=interrupt_after, resume_with=resume_with,
            placer=placer if resume_with is not None else None,
        )  # fmt: skip
        host.recorder = fleet.recorder
        host.registry = fleet.registry
        host.warning = lambda: fleet.health
        shared = cls(dsn, store, fleet, host)
        host.started_hooks.append(shared._claim)
        return shared

    def _claim(self, run: ServedRun) -> None:
        """A run started in this process is this hub's, and holds its lock."""
        task = asyncio.get_running_loop().create_task(self.fleet.claim(run.run_id, socket.gethostname(), os.getpid(), hosted=True))
        self._claims.add(task)
        task.add_done_callback(self._claims.discard)

    async def load(self, resume_with: ResumeWith | None, placer: Placer | None) -> IngressService | None:
        return None  # the fleet reads the runs as it starts (once the address is bound)

    async def started(self, server: RemoteServer, resume_with: ResumeWith | None, placer: Placer | None) -> None:
        self.fleet.address = server.address
        try:
            await self.fleet.start()
        except Exception as exc:  # a database that answers but cannot be used: one line, not a traceback
            if not type(exc).__module__.startswith("psycopg"):
                raise
            from goldfive.store.postgres import StoreUnavailable, redact

            raise StoreUnavailable(f"the database at {redact(self.dsn)} cannot be used: {' '.join(str(exc).split())}") from None

    async def close(self) -> None:
        try:
            await self.fleet.stop()
        finally:
            await self.store.close()


def _notices(host: RunHost, notify: Iterable[str], escalate: Iterable[str] = ()) -> NoticeDispatch | None:
    """``serve --notify-cmd / --escalate-cmd``: the routes (goldfive.phone.routes), told of
    every notice in the host's live events; None without any. The notices they had to drop
    are said with the hub's warning (ListRuns / GetRun ``hub_warning``: ``ctl runs``, the runs
    screen), after whatever the host said already."""
    from goldfive.phone.routes import NoticeDispatch, NoticeRoute

    notify_routes = [NoticeRoute.parse(text) for text in notify]
    escalate_routes = [NoticeRoute.parse(text, flag="--escalate-cmd") for text in escalate]
    if not notify_routes and not escalate_routes:
        return None
    dispatch = NoticeDispatch(notify_routes, escalate_routes)
    host.event_hooks.append(dispatch.hook)
    before = host.warning
    host.warning = lambda: "; ".join(w for w in (before(), dispatch.warning()) if w)
    return dispatch


class _Reach:
    """How a hub reaches a person: its notice routes, its approval pages, its approvers and
    reminders (``serve`` wires them to the host, then serves the pages beside gRPC)."""

    def __init__(
        self,
        notify_cmd: str | Sequence[str] | None,
        escalate_cmd: Sequence[str],
        http: PhoneConfig | None,
        approvers: Approvers | None,
        reminders: ApprovalReminders | None,
    ) -> None:
        self.notify = [notify_cmd] if isinstance(notify_cmd, str) else list(notify_cmd or ())
        self.escalate = list(escalate_cmd)
        self.http, self.approvers, self.reminders = http, approvers, reminders
        self.dispatch: NoticeDispatch | None = None
        self.phone: PhoneServer | None = None
        self.book: LinkBook | None = None

    @property
    def recipients(self) -> set[str]:
        return set(self.dispatch.recipients) if self.dispatch is not None else set()

    def wire(self, host: RunHost) -> None:
        """Notices and reminders for ``host``'s runs (before any run starts)."""
        self.dispatch = _notices(host, self.notify, self.escalate)
        host.approval_reminders = self.reminders

    async def serve(self, server: RemoteServer, db_path: str, token: str | Sequence[str] | None) -> None:
        """Start the approval pages (``http``) of ``server``'s host; the notices carry their links."""
        if self.http is None:
            return
        try:
            from goldfive.phone.links import LinkBook
            from goldfive.phone.server import start_phone
        except ImportError as exc:
            raise ServeConfigError(f"--http needs aiohttp: pip install 'goldfive[http]' ({exc.name} is missing)") from None
        ops = [(c.name, c.secret) for c in credentials(token) if c.role == OPERATOR]
        self.book = LinkBook(db_path)
        try:
            self.phone = await start_phone(server.host, self.book, self.http, operators=ops, approvers=self.approvers)
        except BaseException:
            self.book.close()
            self.book = None
            raise
        server.pages = self.phone
        if self.dispatch is not None:
            self.dispatch.links = self.phone.notice_link

    async def aclose(self) -> None:
        if self.phone is not None:
            await self.phone.stop()
        if self.book is not None:
            self.book.close()
        if self.dispatch is not None:
            await self.dispatch.aclose()


async def _host_and_serve(server: RemoteServer, runs: Iterable[Launch | tuple[Any, ...]], ready: asyncio.Future[RemoteServer] | None) -> None:
    """Start ``runs`` (each recorded as the hub's own, started by "serve"), say the server is
    ready, serve until it stops."""
    for launch in runs:
        await server.host.host(Launch(*launch), started_by="serve")
    if ready is not None and not ready.done():
        ready.set_result(server)
    await server.server.wait_for_termination()


def is_postgres(db: str) -> bool:
    """``--db`` names a PostgreSQL database (a URL), not a SQLite file."""
    return db.startswith(("postgresql://", "postgres://"))
