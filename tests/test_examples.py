"""The `goldfive run` example of the README and the docs works as written (headless). The
Python examples of both are run by tests/test_docs.py."""

from click.testing import CliRunner

from goldfive.cli import main


def test_the_readme_run_example_completes(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("examples.hello_agent.DELAY_S", 0.0)
    result = CliRunner().invoke(
        main,
        ["run", "examples.hello_agent:agent", "--goal", "write a haiku", "--plan", "examples/hello_plan.json", "--headless"],
    )
    assert result.exit_code == 0, result.output
    assert "run_completed" in result.output
    assert "3/3 tasks completed" in result.output


def test_the_stuck_agent_of_the_docs_is_caught_with_its_evidence(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(
        main, ["run", "examples.stuck_agent:agent", "--goal", "ship 1.2", "--plan", "examples/stuck_plan.json", "--headless"]
    )
    assert result.exit_code == 1, result.output  # headless: nobody can answer the escalation
    out = result.output
    assert "LOOPING_TOOL_CALL INFO [ship]: looks stuck: deploy called 5 times with the same arguments (5 pieces of evidence" in out
    assert "agent was told: [user_steering][goldfive steering] LOOPING_TOOL_CALL: looks stuck: deploy called 10 times" in out
    assert "HUMAN_INTERVENTION_REQUIRED CRITICAL" in out and "GOLDFIVE_PAUSE_ESCALATE" in out
