"""``goldfive run`` (a person's own agent, under the TUI or headless) and ``goldfive replay``.

Bad input is one line on stderr and exit code 2, never a traceback: every check that can fail
runs before the TUI or the run starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import Any, Callable, TextIO

import click

from goldfive.cli.extras import budget_option, extras_options, install_extras, make_reviewer, review_options
from goldfive.inputs import InputError, load_agent, make_planner
from goldfive.cli.output import echo, field
from goldfive.control import ControlChannel
from goldfive.errors import GoldfiveError, ReplayError
from goldfive.pb.goldfive.v1.events_pb2 import Event

__all__ = ["recorded_line", "recording_failed_line", "register", "replay_command", "run_command"]

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # the shell's convention for Ctrl-C


def _fail(message: str) -> click.exceptions.Exit:
    echo(f"goldfive: error: {field(message)}", err=True)
    return click.exceptions.Exit(EXIT_BAD_INPUT)


class _PrintSink:
    """One line per event on ``out``; remembers how the run ended."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        from goldfive.event_format import EventLines

        #: The shared format of demo --headless and ctl tail: one line per control, as the TUI's log.
        self.lines = EventLines()
        self.terminal = ""

    async def emit(self, event: Event) -> None:
        kind = event.WhichOneof("payload") or ""
        if kind in ("run_completed", "run_aborted"):
            self.terminal = kind
        elif kind in ("run_started", "run_resumed"):  # the id to name it by (ctl, replay, resume), at once
            echo(f"goldfive: run {field(event.run_id)} {'started' if kind == 'run_started' else 'resumed'}", err=True)
        for line in self.lines.lines(event):
            print(field(line), file=self.out, flush=True)  # the agent's text, one safe line

    async def close(self) -> None:
        for line in self.lines.flush():  # a control the run never acked
            print(field(line), file=self.out, flush=True)


#: ``run --headless --approvals``: what becomes of each approval the run asks for, said at start.
APPROVALS_SAID = {
    "approve": "approvals: each is approved at once (--approvals approve)",
    "reject": "approvals: each is rejected at once, nobody here can answer (--approvals reject); "
    "--approvals approve approves them, --hub HOST:PORT lets a person answer",
    "wait": "approvals: each waits for a person on the hub (--approvals wait)",
    "review": "approvals: the reviewer decides routine calls; the rest wait for a person on the hub (--approvals review)",
}

#: ``--approvals review`` headless without a hub: nobody could answer what the reviewer escalates.
REVIEW_WITHOUT_HUB = (
    "--approvals review with --headless and no --hub: the calls the reviewer escalates would wait forever, nothing "
    "here can answer them. Add --hub 127.0.0.1:7531 (a person answers there), or run it in the TUI (no --headless)."
)

#: ``run --headless --approvals wait`` without a hub has nobody to answer.
WAIT_WITHOUT_HUB = (
    "--approvals wait with --headless and no --hub would wait forever: nothing here can answer an approval. "
    "Start a hub (`goldfive serve`) and add --hub 127.0.0.1:7531, or choose --approvals approve or reject."
)


class _AnswerSink:
    """Answers every approval request of a headless run as ``--approvals`` said, through the
    run's own control channel (so each decision is in the ledger, by this person)."""

    def __init__(self, channel: ControlChannel, decision: str) -> None:
        from goldfive.control import ControlKind
        from goldfive.settings import os_user

        self.channel = channel
        self.kind = ControlKind.APPROVE if decision == "approve" else ControlKind.REJECT
        self.decision = decision
        self.author = os_user()
        self.answered = 0

    async def emit(self, event: Event) -> None:
        kind = event.WhichOneof("payload")
        if self.channel.closed:
            return
        from goldfive.control import ControlKind, ControlMessage

        if kind == "recording_failed":  # the run paused on it; nobody here can resume it
            reason = f"recording failed: {event.recording_failed.detail}; the run stopped (nobody can resume it here)"
            self.channel.send_nowait(ControlMessage(ControlKind.CANCEL, payload={"reason": reason, "author": self.author, "client": "headless"}))
            return
        if kind == "control_received" and event.control_received.kind == "GOLDFIVE_PAUSE_ESCALATE":
            # The ladder paused the run for a person; nobody here can resume it: end it, as a
            # run without a channel does ("escalated for a human decision").
            reason = "escalated for a human decision, but nobody can answer here (headless, no hub)"
            who = {"reason": reason, "author": self.author, "client": "headless"}
            self.channel.send_nowait(ControlMessage(ControlKind.CANCEL, payload=who))
            return
        if kind != "approval_requested":
            return

        payload = {
            "target_id": event.approval_requested.target_id,
            "detail": f"run --headless --approvals {self.decision}",
            "author": self.author,
            "client": "headless",
        }
        self.channel.send_nowait(ControlMessage(self.kind, payload=payload))
        self.answered += 1

    async def close(self) -> None:
        return None


def _recording_sink(db_path: str | None) -> Any:
    from goldfive.settings import default_db_path
    from goldfive.sinks.sqlite import SQLitePersistenceSink

    path = db_path or default_db_path()
    if path != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    return SQLitePersistenceSink(path, durability="normal")  # a killed run can be resumed


def _runner_factory(
    agent: Callable[..., Any],
    planner: Any,
    goal: str,
    launch: dict[str, Any] | None = None,
    hub: dict[str, Any] | None = None,
) -> Callable[[list[object], ControlChannel | None], Any]:
    def factory(sinks: list[object], channel: ControlChannel | None) -> tuple[Any, str]:
        from goldfive.adapters.frameworks import adapter_for
        from goldfive.goals import PassthroughGoalDeriver
        from goldfive.run.config import RuntimeConfig
        from goldfive.runner import Runner

        runner = Runner(
            agent=adapter_for(agent),
            planner=planner,
            goal_deriver=PassthroughGoalDeriver(goal),
            sinks=sinks,
            control=channel,
            launch=launch,
            config=RuntimeConfig(use_machine_rules=True),  # "always" rules saved for this machine apply
            **(hub or {}),
        )
        return runner, goal

    return factory


def recorded_line(path: object, run_id: str) -> str:
    """Where a run was recorded and the command that replays it."""
    return f"recorded to {path} (run {run_id}): goldfive replay {path} --run-id {run_id}"


async def run_headless(
    factory: Callable[[list[object], ControlChannel | None], Any],
    *,
    db_path: str | None,
    out: TextIO,
    client: Any = None,
    record: bool = True,
    approvals: str = "wait",
) -> int:
    """Run with a line per event on ``out``; 0 when the run completed with its recording
    whole, 1 otherwise (a failed durable commit is never a success: the run paused on it, and
    without a control channel to resume it, it stopped). ``record=False``: the factory's
    Runner records itself (a resumed run) to ``db_path``. ``approvals`` "approve" or
    "reject": every approval the run asks for is answered so at once; "wait": left to the
    run's channel (a hub's people)."""
    printer = _PrintSink(out)
    recorder = _recording_sink(db_path) if record else None
    where = recorder.path if recorder is not None else os.path.abspath(db_path or "")
    from goldfive.run.defaults import run_defaults

    extra = run_defaults().sinks()  # --otel
    channel: ControlChannel | None = None
    answers: _AnswerSink | None = None
    if approvals in ("approve", "reject"):
        channel = ControlChannel()
        answers = _AnswerSink(channel, approvals)
        extra = [answers, *extra]
    # What the agent or its framework prints (a startup banner, a debug print) goes to stderr
    # while the run goes on: stdout stays the run's lines, one per event, nothing between them.
    quiet = contextlib.redirect_stdout(sys.stderr) if out is sys.stdout else contextlib.nullcontext()
    try:
        with quiet:
            runner, user_input = factory([printer, recorder, *extra] if recorder is not None else [printer, *extra], channel)
    except GoldfiveError as exc:
        echo(f"goldfive: {field(exc)}", err=True)
        return EXIT_BAD_INPUT
    try:
        with quiet:  # reusable: entered once for the factory, once for the run
            await runner.run(user_input)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the sinks already saw RunAborted; say why in one line
        echo(f"goldfive: run aborted: {type(exc).__name__}: {field(exc)}", err=True)
    finally:
        await runner.close()
        if channel is not None:
            channel.close()
        if answers is not None and answers.answered:
            n = answers.answered
            echo(f"goldfive: {n} approval{'s' if n != 1 else ''} {'approved' if approvals == 'approve' else 'rejected'} by --approvals {approvals}", err=True)
        if client is not None:
            await client.aclose()
        if runner.recording_failures:
            click.echo(f"goldfive: {recording_failed_line(runner)}", err=True)
        if runner.session is not None:  # also after Ctrl-C: the part that ran can be replayed
            echo(field(recorded_line(where, runner.session.run_id)), err=True)
    return 0 if printer.terminal == "run_completed" and not runner.recording_failures else 1


def recording_failed_line(runner: Any) -> str:
    """What became of a run whose recording failed, in one line."""
    if runner.recording_error:
        return f"recording failed: {runner.recording_error}; the run stopped before its next task and the recording ends there"
    n = runner.recording_failures
    return f"recording failed during the run ({n} failed commit{'s' if n != 1 else ''}); it was resumed once writing worked again"


@click.command("run", short_help="Run your own async agent MODULE:FUNCTION on a goal.")
@click.argument("agent_spec", metavar="MODULE:FUNCTION")
@click.option("--goal", required=True, help="What the run should achieve.")
@click.option("--plan", "plan_path", metavar="FILE", help="A plan JSON file (the LLM planner's shape); without it the LLM planner plans.")
@click.option("--base-url", help="OpenAI-compatible server URL (default: GOLDFIVE_LLM_BASE_URL / OPENAI_BASE_URL).")
@click.option("--model", help="Model name (default: GOLDFIVE_LLM_MODEL).")
@click.option("--api-key", help="API key (default: GOLDFIVE_LLM_API_KEY / OPENAI_API_KEY).")
@click.option("--api-key-file", metavar="FILE", help="Read the API key from FILE (kept out of the process list).")
@click.option("--headless", is_flag=True, help="Print one line per event instead of opening the TUI.")
@click.option("--db", "db_path", help="SQLite file to record the run to (default: the user data directory).")
@click.option(
    "--hub",
    "hub_addr",
    metavar="HOST:PORT[,HOST:PORT...]",
    help="Register the run with this hub (goldfive serve): watched and steered from there. Several hubs on one "
    "database, comma-separated: the run moves to the next when its hub goes away.",
)
@click.option(
    "--hub-token", help="Bearer token for the hub, a runner token is enough (default: GOLDFIVE_HUB_TOKEN, else GOLDFIVE_TOKEN)."
)
@click.option("--hub-token-file", metavar="FILE", help="Read the hub's bearer token from FILE (kept out of the process list).")
@click.option("--hub-tls-ca", metavar="FILE", help="CA certificate (PEM) to verify the hub's TLS certificate.")
@click.option(
    "--approvals",
    type=click.Choice(["approve", "reject", "wait", "review"]),
    default=None,
    help="Headless: how the run's approvals are answered. Default: wait for a person on the hub with --hub, "
    "else reject each (nobody here could answer); wait without --hub is refused. review (also in the TUI): "
    "a model decides routine tool calls under --review-instructions and asks a person about the rest.",
)
@review_options
@extras_options
@budget_option("How much the run may use, e.g. tokens=50000,usd=2 (also model_calls, tool_calls, seconds): at a limit it pauses and asks.")
def run_command(
    agent_spec: str,
    goal: str,
    plan_path: str | None,
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    api_key_file: str | None,
    headless: bool,
    db_path: str | None,
    hub_addr: str | None,
    hub_token: str | None,
    hub_token_file: str | None,
    hub_tls_ca: str | None,
    approvals: str | None = None,
    prices_path: str | None = None,
    otel: bool = False,
    budget_text: str | None = None,
    review_instructions: str | None = None,
    review_grace: str | None = None,
) -> None:
    """Run your async agent MODULE:FUNCTION, `async def fn(task, session[, tools])`."""
    reviewer = _reviewer_option(approvals, review_instructions, review_grace)
    install_extras(prices_path, otel, command="run", budget_text=budget_text, reviewer=reviewer)
    if not goal.strip():
        raise _fail("--goal is empty: say what the run should achieve")
    if approvals is not None and approvals != "review" and not headless:
        raise _fail("--approvals goes with --headless: in the TUI you answer each approval yourself")
    if headless and approvals == "review" and hub_addr is None:
        raise _fail(REVIEW_WITHOUT_HUB)
    if headless and approvals == "wait" and hub_addr is None:
        raise _fail(WAIT_WITHOUT_HUB)
    if headless and approvals is None:
        approvals = "wait" if hub_addr is not None else "reject"
    if hub_addr is None and hub_token_file:
        raise _fail("--hub-token-file goes with --hub HOST:PORT")
    api_key = secret_option(api_key, api_key_file, "--api-key")
    hub = _hub_options(hub_addr, secret_option(hub_token, hub_token_file, "--hub-token"), hub_tls_ca)
    try:
        agent = load_agent(agent_spec)
        planning = make_planner(plan_path, base_url, model, api_key)
        if reviewer is not None and getattr(planning.planner, "call_llm", None) is None:
            planning = _reviewer_model(planning, reviewer, base_url, model, api_key)
    except GoldfiveError as exc:
        raise _fail(str(exc)) from None
    # What `goldfive resume` needs to build this run again (never the API key: it stays in the
    # environment or on the command line).
    launch = {
        "command": "run",
        "agent": agent_spec,
        "goal": goal,
        "plan": os.path.abspath(plan_path) if plan_path else None,
        "base_url": base_url,
        "model": model,
        "cwd": os.getcwd(),
    }
    factory = _runner_factory(agent, planning.planner, goal, launch, hub)
    if headless:
        echo(f"goldfive: {APPROVALS_SAID[approvals or 'wait']}", err=True)
        try:
            answer = "wait" if approvals in (None, "review") else approvals
            code = asyncio.run(run_headless(factory, db_path=db_path, out=sys.stdout, client=planning.client, approvals=answer))
        except KeyboardInterrupt:
            click.echo("goldfive: interrupted", err=True)
            code = EXIT_INTERRUPTED
    else:
        from goldfive.cli.frontends import frontend

        code = frontend("run")(factory, db_path=db_path)
    raise click.exceptions.Exit(code)


def _reviewer_option(approvals: str | None, instructions: str | None, grace: str | None) -> Any:
    """The reviewer ``--approvals review --review-instructions ... [--review-grace ...]`` asks
    for (None for any other --approvals); bad input is one line, exit 2."""
    if approvals != "review":
        if instructions is not None or grace is not None:
            raise _fail("--review-instructions and --review-grace go with --approvals review")
        return None
    if instructions is None:
        raise _fail("--approvals review needs --review-instructions FILE|TEXT: which calls the reviewer may decide")
    try:
        return make_reviewer(instructions, grace)
    except GoldfiveError as exc:
        raise _fail(str(exc)) from None


def _reviewer_model(planning: Any, reviewer: Any, base_url: str | None, model: str | None, api_key: str | None) -> Any:
    """With --plan there is no planner's model: the reviewer gets a client of its own for
    --model (closed with the planning's), installed as the process's reviewer."""
    from dataclasses import replace

    from goldfive.inputs import InputError, Planning
    from goldfive.llm.openai_compat import OpenAICompatClient
    from goldfive.run.defaults import install_run_defaults, run_defaults
    from goldfive.settings import LLMSettings

    env = LLMSettings.from_env()
    chosen = model or env.model
    if not chosen:
        raise InputError("--approvals review with --plan needs a model to review with: pass --model NAME (or set GOLDFIVE_LLM_MODEL)")
    client = OpenAICompatClient(base_url=base_url or env.base_url, model=chosen, api_key=api_key or env.api_key)
    install_run_defaults(replace(run_defaults(), reviewer=replace(reviewer, call_llm=client.call_llm, model=chosen)))
    return Planning(planning.planner, client)


def secret_option(given: str | None, path: str | None, flag: str) -> str | None:
    """``flag``'s value or the secret in ``flag``-file's FILE (None: the environment's, read
    where it is used); a bad file is one line, exit 2."""
    from goldfive.cli.tokens import client_token

    try:
        return client_token(given, path, None, flag=flag, warn=lambda m: echo(f"goldfive: warning: {m}", err=True))
    except InputError as exc:
        raise _fail(str(exc)) from None


def _hub_options(addr: str | None, token: str | None, tls_ca: str | None) -> dict[str, Any] | None:
    """Runner keywords for ``--hub``, checked here (bad input is one line, before the run)."""
    if addr is None:
        if token or tls_ca:
            raise _fail("--hub-token and --hub-tls-ca go with --hub HOST:PORT")
        return None
    from goldfive.remote.auth import split_host_port

    for one in addr.split(","):  # several hubs on one database: tried in order
        try:
            host, port = split_host_port(one.strip())
        except GoldfiveError:
            host, port = "", ""
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            shown = f"{one!r} in {addr!r}" if "," in addr else repr(addr)
            raise _fail(f"--hub {shown} is not HOST:PORT (for example 127.0.0.1:7531; several: A:7531,B:7531)")
    if tls_ca is not None and not os.path.isfile(tls_ca):
        raise _fail(f"--hub-tls-ca {tls_ca!r}: no such file")
    return {"hub": addr, "hub_token": token, "hub_tls_ca": tls_ca}


@click.command("replay")
@click.argument("path", metavar="[FILE]", required=False)
@click.option("--run-id", help="Which run (its id or a unique prefix of 4+ characters); without it, a SQLite file of several runs lists them to pick from.")
def replay_command(path: str | None, run_id: str | None) -> None:
    """Open a recorded run (JSONL or SQLite) read-only: step, play, jump. Without FILE: the
    runs recorded here (the data directory's runs.sqlite), listed to pick from."""
    from goldfive.cli.frontends import FRONTENDS
    from goldfive.settings import default_db_path

    if path is None:
        path = default_db_path()
        if not os.path.isfile(path):
            raise _fail(f"no runs recorded here yet ({path}): goldfive demo records one; or give a FILE")
    picker = FRONTENDS.get("pick_run")
    picking = run_id is None and picker is not None
    listed = False  # a file of one run opens it at once; b lists it (and then always lists)
    while True:
        recording, picked = _open_replay(path, run_id if not picking else None, picker if picking else None, always=listed)
        if recording is None:
            return  # the person closed the picker: nothing to open
        from goldfive.cli.frontends import frontend

        opener = frontend("replay")
        back = opener(recording, back=True) if picked else opener(recording)
        if not (picked and back == BACK_TO_PICKER):
            return
        listed = True


#: What the replay front-end returns when the person asked for the list of runs again.
BACK_TO_PICKER = "back"


def _open_replay(path: str, run_id: str | None, picker: Any, *, always: bool = False) -> tuple[Any, bool]:
    """(the recording to replay, whether b goes back to a list of the file's runs); (None,
    True) when the person closed the list. A file of several runs lists them first; one of
    one run opens at once (b lists it, and ``always`` lists first, as after b). Says what is
    wrong with the file in one line."""
    from goldfive.recording import detect_format, open_recording, recorded_run_choices

    picked = False
    try:
        if picker is not None and os.path.isfile(path) and detect_format(path) == "sqlite":
            choices = recorded_run_choices(path)
            if len(choices) > 1 or (always and choices):
                run_id, picked = picker(path, choices), True
                if run_id is None:
                    return None, True
            elif choices:  # the only run: opened at once, and b shows the list
                run_id, picked = choices[0].run_id, True
        recording = open_recording(path, run_id)
    except (ReplayError, InputError) as exc:
        raise _fail(str(exc)) from None
    skipped = ""
    if recording.skipped:
        noun = "line" if recording.skipped == 1 else "lines"
        skipped = f"{recording.skipped} unreadable {noun} skipped ({recording.errors[0]})"
    if not recording.events:  # one line: not a recording, and the first reason why
        raise _fail(f"{path!r} holds no readable events" + (f"; {skipped}" if skipped else ""))
    if recording.note:
        echo(field(recording.note), err=True)
    if skipped:
        echo(field(skipped), err=True)  # quotes the recording's own lines
    return recording, picked


def register(group: click.Group) -> None:
    group.add_command(run_command)
    group.add_command(replay_command)
