"""``goldfive run``: bad input is one line and exit 2; a good headless run completes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldfive.cli import main
from goldfive.sinks import list_runs, replay_from_sqlite

AGENTS = '''
import asyncio

async def agent(task, session):
    return f"did {task.id}"

async def agent_with_tools(task, session, tools):
    await tools["report_task_progress"](detail="halfway")
    return "ok"

def sync_agent(task, session):
    return "sync"

async def one_arg(task):
    return "x"

not_callable = 42
'''

PLAN = {
    "summary": "two steps",
    "tasks": [
        {"id": "fetch", "title": "Fetch", "description": "get data"},
        {"id": "report", "title": "Report", "description": "write it up"},
    ],
    "edges": [{"from_task_id": "fetch", "to_task_id": "report"}],
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "myagents.py").write_text(AGENTS)
    (tmp_path / "broken_import.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "plan.json").write_text(json.dumps(PLAN))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path / "data"))
    for var in ("GOLDFIVE_LLM_MODEL", "GOLDFIVE_LLM_BASE_URL", "GOLDFIVE_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    yield tmp_path
    for name in ("myagents", "broken_import"):
        sys.modules.pop(name, None)


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["run", *args])


def assert_one_line_error(result, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    for needle in needles:
        assert needle in lines[0], lines[0]


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_a_module_that_does_not_exist_is_one_line_and_exit_2(workdir: Path) -> None:
    assert_one_line_error(invoke("no_such_mod:agent", "--goal", "g", "--plan", "plan.json"), "no_such_mod", "no such module")


def test_a_module_that_raises_while_importing_is_one_line_and_exit_2(workdir: Path) -> None:
    assert_one_line_error(invoke("broken_import:agent", "--goal", "g", "--plan", "plan.json"), "RuntimeError", "boom at import")


def test_a_module_with_a_syntax_error_names_the_file_and_line(workdir: Path) -> None:
    (workdir / "syntax_bad.py").write_text("async def agent(task, session)\n    return 1\n")
    try:
        result = invoke("syntax_bad:agent", "--goal", "g", "--plan", "plan.json")
    finally:
        sys.modules.pop("syntax_bad", None)
    assert_one_line_error(result, "SyntaxError", "syntax_bad.py", "line 1")


def test_a_missing_dependency_of_the_module_is_named(workdir: Path) -> None:
    (workdir / "needs_dep.py").write_text("import needs_dep_missing_xyz\n")
    try:
        result = invoke("needs_dep:agent", "--goal", "g", "--plan", "plan.json")
    finally:
        sys.modules.pop("needs_dep", None)
    assert_one_line_error(result, "cannot import module 'needs_dep'", "needs_dep_missing_xyz")


def test_a_missing_function_is_one_line_and_exit_2(workdir: Path) -> None:
    assert_one_line_error(invoke("myagents:nope", "--goal", "g", "--plan", "plan.json"), "has no attribute 'nope'")


def test_a_spec_without_a_colon_is_refused(workdir: Path) -> None:
    assert_one_line_error(invoke("myagents", "--goal", "g", "--plan", "plan.json"), "MODULE:FUNCTION")


@pytest.mark.parametrize(
    ("name", "needle"),
    [("sync_agent", "not an async function"), ("not_callable", "not an async function"), ("one_arg", "(task, session)")],
)
def test_a_name_that_is_not_an_async_agent_is_refused(workdir: Path, name: str, needle: str) -> None:
    assert_one_line_error(invoke(f"myagents:{name}", "--goal", "g", "--plan", "plan.json"), needle)


def test_a_missing_plan_file_is_one_line_and_exit_2(workdir: Path) -> None:
    assert_one_line_error(invoke("myagents:agent", "--goal", "g", "--plan", "nope.json"), "nope.json", "not found")


def test_malformed_plan_json_says_what_and_where(workdir: Path) -> None:
    bad = write(workdir / "bad.json", '{"tasks": [\n  {"id": "a" "title": "A"}\n]}')
    assert_one_line_error(invoke("myagents:agent", "--goal", "g", "--plan", bad), "not valid JSON", "line 2 column")


def test_a_plan_of_the_wrong_shape_names_the_field(workdir: Path) -> None:
    bad = write(workdir / "shape.json", json.dumps({"tasks": [{"id": "a", "title": "A"}, {"id": "b"}]}))
    assert_one_line_error(invoke("myagents:agent", "--goal", "g", "--plan", bad), "tasks[1]", "title")


def test_a_plan_with_a_cycle_fails_validation(workdir: Path) -> None:
    cyclic = dict(PLAN, edges=[{"from_task_id": "fetch", "to_task_id": "report"}, {"from_task_id": "report", "to_task_id": "fetch"}])
    bad = write(workdir / "cycle.json", json.dumps(cyclic))
    assert_one_line_error(invoke("myagents:agent", "--goal", "g", "--plan", bad), "invalid plan", "cycle")


def test_no_plan_and_no_model_is_refused_before_running(workdir: Path) -> None:
    assert_one_line_error(invoke("myagents:agent", "--goal", "g", "--headless"), "--model")


def test_a_good_headless_run_completes_and_is_recorded(workdir: Path) -> None:
    db = workdir / "runs.sqlite"
    result = invoke("myagents:agent", "--goal", "ship it", "--plan", "plan.json", "--headless", "--db", str(db))
    assert result.exit_code == 0, result.output + result.stderr
    assert "run_completed" in result.stdout
    assert "task_completed" in result.stdout
    runs = list_runs(db)
    assert len(runs) == 1
    kinds = [e.WhichOneof("payload") for e in replay_from_sqlite(db, runs[0].run_id)]
    assert kinds.count("task_completed") == 2
    assert "run_completed" in kinds
    assert runs[0].run_id in result.stderr  # says how to replay it


def test_an_agent_taking_tools_gets_them(workdir: Path) -> None:
    db = workdir / "runs.sqlite"
    result = invoke("myagents:agent_with_tools", "--goal", "g", "--plan", "plan.json", "--headless", "--db", str(db))
    assert result.exit_code == 0, result.output + result.stderr
    (run,) = list_runs(db)
    details = [e.task_progress.detail for e in replay_from_sqlite(db, run.run_id) if e.HasField("task_progress")]
    assert "halfway" in details


def test_a_failing_agent_exits_1(workdir: Path) -> None:
    (workdir / "failing.py").write_text("async def agent(task, session):\n    raise ValueError('nope')\n")
    try:
        result = invoke("failing:agent", "--goal", "g", "--plan", "plan.json", "--headless", "--db", str(workdir / "r.sqlite"))
    finally:
        sys.modules.pop("failing", None)
    assert result.exit_code == 1, result.output + result.stderr
    assert "task_failed" in result.stdout
    assert "run_aborted" in result.stdout
    assert "run_completed" not in result.stdout


# -- goldfive replay ------------------------------------------------------------------------


def test_replay_of_a_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "nope.jsonl")])
    assert_one_line_error(result, "no recording", "nope.jsonl")


def test_replay_of_a_file_with_nothing_readable_is_one_line_and_exit_2(tmp_path: Path) -> None:
    junk = write(tmp_path / "junk.jsonl", "not json\n")
    result = CliRunner().invoke(main, ["replay", junk])
    assert_one_line_error(result, "holds no readable events", "1 unreadable line skipped", "line 1")


def test_replay_of_json_lines_that_are_not_events_is_one_line_and_exit_2(tmp_path: Path) -> None:
    other = write(tmp_path / "other.jsonl", '{"name": "a"}\n{"name": "b"}\n')
    result = CliRunner().invoke(main, ["replay", other])
    assert_one_line_error(result, "holds no readable events", "2 unreadable lines skipped", "not a goldfive event")


def test_replay_opens_the_recorded_run_of_a_headless_run(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = workdir / "runs.sqlite"
    assert invoke("myagents:agent", "--goal", "g", "--plan", "plan.json", "--headless", "--db", str(db)).exit_code == 0
    opened: list[object] = []
    import goldfive_tui.cli  # noqa: F401  (registers the replay front-end; alone, goldfive.cli has none)
    from goldfive_tui.app import GoldfiveApp

    monkeypatch.setattr(GoldfiveApp, "run", lambda self: opened.append(self.home.replay.recording))
    result = CliRunner().invoke(main, ["replay", str(db)])
    assert result.exit_code == 0, result.output + result.stderr
    (recording,) = opened
    assert recording.format == "sqlite"  # type: ignore[attr-defined]
    assert recording.events[-1].WhichOneof("payload") in ("run_completed", "conversation_ended")  # type: ignore[attr-defined]
    bad = CliRunner().invoke(main, ["replay", str(db), "--run-id", "nope"])
    assert_one_line_error(bad, "no run 'nope'")


def test_without_a_plan_the_llm_planner_plans_against_the_given_server(workdir: Path) -> None:
    from tests.fake_openai_server import FakeChatServer, Reply, chat_answer

    with FakeChatServer([Reply(body=chat_answer(json.dumps(PLAN)))]) as server:
        result = invoke(
            "myagents:agent", "--goal", "ship it", "--headless", "--db", str(workdir / "r.sqlite"),
            "--base-url", server.base_url, "--model", "served-model", "--api-key", "sk-test",
        )  # fmt: skip
    assert result.exit_code == 0, result.output + result.stderr
    (run,) = list_runs(workdir / "r.sqlite")
    (submitted,) = [e for e in replay_from_sqlite(workdir / "r.sqlite", run.run_id) if e.HasField("plan_submitted")]
    assert [t.id for t in submitted.plan_submitted.plan.tasks] == ["fetch", "report"]
    assert len(server.requests) == 1
    assert server.requests[0].body["model"] == "served-model"
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


def test_a_directory_given_as_the_plan_is_one_line_and_exit_2(workdir: Path) -> None:
    (workdir / "plans").mkdir()
    assert_one_line_error(invoke("myagents:agent", "--goal", "g", "--plan", "plans"), "is not a file")


def test_replay_skips_a_deeply_nested_line_and_opens_the_good_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = [json.dumps({"eventId": f"r1:{i}", "runId": "r1", "sequence": i, "runStarted": {}}) for i in range(2)]
    path = write(tmp_path / "deep.jsonl", "\n".join([good[0], "[" * 100_000, good[1]]) + "\n")
    opened: list[object] = []
    import goldfive_tui.cli  # noqa: F401  (registers the replay front-end)
    from goldfive_tui.app import GoldfiveApp

    monkeypatch.setattr(GoldfiveApp, "run", lambda self: opened.append(self.home.replay.recording))
    result = CliRunner().invoke(main, ["replay", path])
    assert result.exit_code == 0, result.output
    (recording,) = opened
    assert [e.sequence for e in recording.events] == [0, 1]  # type: ignore[attr-defined]
    assert recording.skipped == 1  # type: ignore[attr-defined]
    assert result.stderr.strip() == "1 unreadable line skipped (line 2: corrupt line: nested too deeply to read)"


def test_a_non_callable_agent_is_named_with_the_right_article(workdir: Path) -> None:
    from goldfive.inputs import InputError, load_agent

    with pytest.raises(InputError) as info:
        load_agent("myagents:not_callable", search_dir=str(workdir))
    assert str(info.value) == "myagents:not_callable is an int (42), not an async function"
